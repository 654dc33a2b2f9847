"""Facts about a working tree that only git can give: uncommitted changes and the files in play.

Used around `/clear` (the uncommitted diff stat of the captured segment, docs/design.md §7) and by the
context digest (which files the developer is working on, docs/design.md §6). Every git call has a short
timeout and failures give empty answers: these facts decorate a capture or a digest, they must
never stop one.
"""

from __future__ import annotations

import os
import subprocess

from sessionledger.gitmeta import parse_numstat

TIMEOUT = 10.0
_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
MAX_PATHS = 1000  # files_touched of a clear session, and what `uncommitted` lists
_UNTRACKED_READ_LIMIT = 1 << 20  # larger untracked files count as files, not lines
_UNTRACKED_MAX_FILES = 200


def git_lines(cwd: str, *args: str, timeout: float = TIMEOUT, sep: str = "\n") -> list[str]:
    """git's output split into non-empty items; [] when git fails or takes too long."""
    command = ["git", "--no-pager", "-c", "core.quotepath=off", *args]
    try:
        result = subprocess.run(
            command, cwd=cwd, capture_output=True, timeout=timeout, env={**os.environ, **_ENV}, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    if result.returncode != 0:
        return []
    return [item for item in result.stdout.decode("utf-8", "replace").split(sep) if item]


def uncommitted(worktree: str, *, timeout: float = TIMEOUT) -> dict:
    """{"files", "insertions", "deletions", "paths"}: tracked changes against HEAD (staged or not)
    plus untracked files that are not ignored, whose lines count as insertions."""
    stat, paths = parse_numstat(
        "\n".join(git_lines(worktree, "diff", "HEAD", "--numstat", "--no-renames", timeout=timeout))
    )
    untracked = git_lines(worktree, "ls-files", "--others", "--exclude-standard", "-z", timeout=timeout, sep="\0")
    for index, path in enumerate(untracked):
        if index < _UNTRACKED_MAX_FILES:
            stat["insertions"] += _line_count(os.path.join(worktree, path))
    paths += untracked
    stat["files"] = len(paths)
    return {**stat, "paths": paths[:MAX_PATHS]}


def _line_count(path: str) -> int:
    """Lines of a small text file; 0 for binary, large or unreadable ones."""
    try:
        if os.path.getsize(path) > _UNTRACKED_READ_LIMIT:
            return 0
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return 0
    if b"\0" in data[:8192]:
        return 0
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def files_in_play(worktree: str, *, recent_commits: int = 3, limit: int = 50, timeout: float = 2.0) -> list[str]:
    """Repository-relative paths the developer is working on: uncommitted changes first, then the
    files of the last few commits — what "sessions that touched the same files" should match."""
    found: dict[str, None] = {}
    for path in git_lines(worktree, "diff", "HEAD", "--name-only", "--no-renames", timeout=timeout):
        found.setdefault(path)
    for path in git_lines(worktree, "ls-files", "--others", "--exclude-standard", timeout=timeout)[:limit]:
        found.setdefault(path)
    log_args = ("log", f"-{recent_commits}", "--no-renames", "--name-only", "--format=")
    for path in git_lines(worktree, *log_args, timeout=timeout):
        found.setdefault(path.strip())
    return [p for p in found if p][:limit]


def describe(stat: dict) -> str:
    """`3 files +12 −4`."""
    files = int(stat.get("files") or 0)
    noun = "file" if files == 1 else "files"
    return f"{files} {noun} +{int(stat.get('insertions') or 0)} −{int(stat.get('deletions') or 0)}"
