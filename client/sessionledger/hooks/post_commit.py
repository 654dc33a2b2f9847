"""The git `post-commit` hook (`init --git-hook`): capture this repository's active agent sessions
for the commit just made — whichever agent, and whoever typed `git commit`.

Agents without a usable tool hook (Codex CLI before hooks.json, Gemini CLI before v0.21, any
agent whose hooks are not installed) are covered by it, and so is a commit a person makes by hand
in another terminal while an agent session runs. "Active" means written to in the last
`ACTIVE_SECONDS` (two hours) by a session held in this working tree; each agent's layout module
says where its transcripts live (`core/<agent>_layout.py`, `recent_files`: the adapters ask the same
modules). The one written last gets the commit's checkpoint: what it wrote since its last capture;
the others keep their lines for their next capture (`checkpoint.on_commit`).

A commit made by an agent's own shell tool while that agent's tool hook of ours is installed
(Claude Code sets `CLAUDECODE=1` for its Bash commands, Gemini CLI `GEMINI_CLI=1`) is left to
that hook, which runs a moment later and also captures the call's result.

Never fails a commit and prints nothing: `hook` exits 0 and logs instead. No agent adapter is
imported, on the no-op path (no active session: it lists a few directories and returns) or on a
capture (a Claude Code capture imports none at all; another agent's imports its own adapter when
its segment is built): `bench/bench_hook.py` measures both against a bare interpreter start, and
tests/client/test_hook_contract.py keeps the imports out.
"""

from __future__ import annotations

import os
import time

from sessionledger import gitrefs, observe
from sessionledger.core import claude_layout, codex_layout, gemini_layout

ACTIVE_SECONDS = 2 * 3600  # a session written within this long before a commit is "active" for it
LAYOUTS = (claude_layout, codex_layout, gemini_layout)  # one per agent of `agents.AGENTS`


def handle(payload: dict) -> None:
    repo = gitrefs.find_repo(os.getcwd())  # git runs the hook at the top of the working tree
    if repo is None:
        return
    sha, ref = gitrefs.read_head(repo)
    if sha is None and gitrefs.uses_reftable(repo):
        from sessionledger.gitmeta import head

        sha, ref = head(repo.worktree)[0], None
    if sha is None or sha == observe.seen(repo.git_dir):
        return
    found = active_sessions(repo.worktree)
    if not found:
        return
    from sessionledger import checkpoint

    links: list[tuple[str, str]] = []
    if checkpoint.on_commit(repo, sha, gitrefs.branch_name(ref), found, links):
        from sessionledger.spawn import start_uploader

        start_uploader(checkpoint.link_tasks(links))


def active_sessions(worktree: str, now: float | None = None) -> list[str]:
    """The transcript of every session held in `worktree` written in the active window, less
    those whose own tool hook will capture this commit."""
    since = (now or time.time()) - ACTIVE_SECONDS
    found: list[str] = []
    for layout in LAYOUTS:
        inside_agent = bool(layout.SHELL_MARKER and os.environ.get(layout.SHELL_MARKER))
        if inside_agent and layout.hook_installed(worktree):
            continue
        found += layout.recent_files([worktree], since)
    return found
