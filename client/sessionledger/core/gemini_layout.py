"""Where Gemini CLI keeps its chats: `$GEMINI_CLI_HOME` (default the home folder)
`/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl` (`.json` before v0.39), and its
settings, where `init --agent gemini` writes our hooks (docs/agents.md "Gemini CLI").

`os` only: the git post-commit hook asks it for a working tree's recent chats and whether our
AfterTool hook is installed without importing the adapter (`agents/gemini.py`, which asks it too).
The project folders are looked up (`formats.locate`) only where Gemini CLI has a `tmp` folder.
"""

from __future__ import annotations

import os

AGENT_NAME = "gemini"
SHELL_MARKER = "GEMINI_CLI"  # set to 1 for the commands of run_shell_command


def gemini_dir() -> str:
    return os.path.join(os.environ.get("GEMINI_CLI_HOME") or os.path.expanduser("~"), ".gemini")


def is_chat(name: str) -> bool:
    return name.startswith("session-") and (name.endswith(".jsonl") or name.endswith(".json"))


def chat_dirs(trees: list[str]) -> list[tuple[str, str]]:
    """(chats folder, project root) of every tree that has one."""
    if not os.path.isdir(os.path.join(gemini_dir(), "tmp")):
        return []  # no Gemini CLI here: the hook pays one stat
    from pathlib import Path

    from sessionledger.core.formats.locate import gemini_project_dirs

    found = []
    for tree in trees:
        for folder in gemini_project_dirs(tree, gemini=Path(gemini_dir())):
            found.append((str(folder / "chats"), tree))
    return found


def recent_files(trees: list[str], since: float) -> list[str]:
    """Chats of `trees` written at/after `since`, newest first."""
    from sessionledger.core.sessionfiles import newer_files

    found = []
    for chats, _ in chat_dirs(trees):
        found += newer_files(chats, since, is_chat)
    return [path for _, path in sorted(found, reverse=True)]


def settings_file(project_dir: str | None) -> str:
    """The project's `.gemini/settings.json`, or (None) the user's `~/.gemini/settings.json`."""
    if project_dir is None:
        return os.path.join(gemini_dir(), "settings.json")
    return os.path.join(project_dir, ".gemini", "settings.json")


def hook_installed(project_dir: str) -> bool:
    """Is our AfterTool hook in the project's or the user's settings?"""
    for path in (settings_file(project_dir), settings_file(None)):
        try:
            with open(path, "rb") as handle:
                if b" hook post-tool-use" in handle.read(1 << 20):
                    return True
        except OSError:
            continue
    return False
