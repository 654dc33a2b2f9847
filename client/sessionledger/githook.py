"""The git `post-commit` hook `init --git-hook` installs: the agent-agnostic capture trigger.

Installed where git looks for hooks (`git rev-parse --git-path hooks`, which follows
`core.hooksPath`). A `post-commit` hook already there is kept: renamed to
`post-commit.sessionledger-chained` and run first by ours, with its arguments and output, its
exit status ignored (post-commit cannot fail a commit; ours always exits 0 and prints nothing).
Installing again changes nothing; `init --git-hook --remove` deletes ours and puts the chained
hook back. The script runs this client by its absolute path when that still exists, else a
`sessionledger` on PATH, else nothing — so a shared `core.hooksPath` never breaks a teammate.
"""

from __future__ import annotations

import os
import shlex

from sessionledger import gitmeta
from sessionledger.fsutil import atomic_write

NAME = "post-commit"
CHAINED = "post-commit.sessionledger-chained"
MARK = "# sessionledger post-commit hook"


def hooks_dir(worktree: str) -> str:
    path = gitmeta.git(worktree, "rev-parse", "--git-path", "hooks").strip()
    return os.path.normpath(path if os.path.isabs(path) else os.path.join(worktree, path))


def script(client: str) -> str:
    first = shlex.split(client)[0]
    return f"""#!/bin/sh
{MARK}: captures this repository's active agent sessions (Claude Code,
# Codex CLI, Gemini CLI) for the commit just made. Installed by `sessionledger init --git-hook`;
# `sessionledger init --git-hook --remove` takes it out and restores the hook that was here.
# It never fails a commit and prints nothing.
chained="${{0%/*}}/{CHAINED}"
if [ -x "$chained" ]; then
  "$chained" "$@"
fi
if [ -x {shlex.quote(first)} ]; then
  {client} hook post-commit </dev/null >/dev/null 2>&1
elif command -v sessionledger >/dev/null 2>&1; then
  sessionledger hook post-commit </dev/null >/dev/null 2>&1
fi
exit 0
"""


def is_ours(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return MARK.encode() in handle.read(4096)
    except OSError:
        return False


class Installed:
    def __init__(self, path: str, changed: bool, chained: str | None) -> None:
        self.path, self.changed, self.chained = path, changed, chained


def install(worktree: str, client: str) -> Installed:
    directory = hooks_dir(worktree)
    path, chained = os.path.join(directory, NAME), os.path.join(directory, CHAINED)
    text = script(client).encode()
    if is_ours(path):
        with open(path, "rb") as handle:
            same = handle.read() == text
        if not same:
            atomic_write(path, text, mode=0o755)
        return Installed(path, not same, chained if os.path.exists(chained) else None)
    os.makedirs(directory, exist_ok=True)
    if os.path.lexists(path):
        if os.path.lexists(chained):
            raise FileExistsError(f"{chained} already exists: move it away, then run init --git-hook again")
        os.rename(path, chained)
    atomic_write(path, text, mode=0o755)
    return Installed(path, True, chained if os.path.lexists(chained) else None)


def remove(worktree: str) -> tuple[str | None, bool]:
    """(the hook removed or None, whether a chained hook was put back)."""
    directory = hooks_dir(worktree)
    path, chained = os.path.join(directory, NAME), os.path.join(directory, CHAINED)
    if not is_ours(path):
        return None, False
    os.remove(path)
    if os.path.lexists(chained):
        os.rename(chained, path)
        return path, True
    return path, False


def installed(worktree: str) -> bool:
    try:
        return is_ours(os.path.join(hooks_dir(worktree), NAME))
    except gitmeta.GitError:
        return False
