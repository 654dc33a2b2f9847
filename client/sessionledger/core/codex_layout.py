"""Where Codex CLI keeps its rollouts: `$CODEX_HOME` (default `~/.codex`)
`/sessions/YYYY/MM/DD/rollout-<local time>-<thread id>.jsonl` (flat `sessions/rollout-*.jsonl`
before the date folders), each naming its cwd on its first line (docs/agents.md "Codex CLI").

`os` only: the git post-commit hook asks it for a working tree's recent rollouts without
importing the adapter (`agents/codex.py`, which asks it too). A rollout's first line is read only
when one was written in the active window.
"""

from __future__ import annotations

import os

AGENT_NAME = "codex"
SHELL_MARKER = ""  # Codex sets no variable of its own for the commands it runs


def codex_home() -> str:
    return os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")


def is_rollout(name: str) -> bool:
    return name.startswith("rollout-") and name.endswith(".jsonl")


def recent_files(trees: list[str], since: float) -> list[str]:
    """Rollouts of the date folders since `since` (local time, as Codex names them) whose first
    line names a cwd inside `trees`, newest first."""
    import time

    from sessionledger.core.sessionfiles import inside, newer_files

    root = os.path.join(codex_home(), "sessions")
    days = {time.strftime("%Y/%m/%d", time.localtime(t)) for t in (since, since + 43200, time.time())}
    found = []
    for day in sorted(days):
        found += newer_files(os.path.join(root, *day.split("/")), since, is_rollout)
    found += newer_files(root, since, is_rollout)  # the flat layout of early 2025
    return [path for _, path in sorted(found, reverse=True) if inside(cwd_of(path) or "\0", trees)]


def meta(path: str) -> tuple[str, str] | None:
    """(session id, cwd) from a rollout's first line, or None when it has none."""
    from pathlib import Path

    from sessionledger.core.formats.locate import codex_meta

    return codex_meta(Path(path))


def cwd_of(path: str) -> str | None:
    found = meta(path)
    return found[1] if found else None


def hook_installed(project_dir: str) -> bool:
    """`init` writes no Codex hooks: the git post-commit hook covers every version."""
    return False
