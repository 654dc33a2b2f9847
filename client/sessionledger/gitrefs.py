"""Read git's HEAD, refs and reflog from files, without running git.

The PostToolUse hook runs after every Bash call and must decide "did HEAD move?" in a few
hundred microseconds: starting `git rev-parse` costs more than the whole budget. So this module
reads `.git/HEAD`, the loose ref or `packed-refs`, and the tail of `logs/HEAD` itself, following
worktree indirections (`.git` file → `gitdir:`, `commondir`). Only `os` is imported.

A repository with the reftable ref backend has no ref files; `read_head` then returns `None`
and the caller falls back to `git rev-parse` (see `head_sha`).
"""

from __future__ import annotations

import os

_TAIL_BYTES = 16384  # the last few reflog entries; one entry is ~150 bytes plus its message


class Repo:
    """A working tree and its git directories (per-worktree `git_dir`, shared `common_dir`)."""

    __slots__ = ("common_dir", "git_dir", "worktree")

    def __init__(self, worktree: str, git_dir: str, common_dir: str) -> None:
        self.worktree = worktree
        self.git_dir = git_dir
        self.common_dir = common_dir

    def __repr__(self) -> str:
        return f"Repo({self.worktree!r})"


class ReflogEntry:
    """One `logs/HEAD` line: `<old> <new> <name> <email> <time> <tz>\\t<action>: <message>`."""

    __slots__ = ("action", "message", "new", "old", "time")

    def __init__(self, old: str, new: str, time: int, action: str, message: str) -> None:
        self.old, self.new, self.time, self.action, self.message = old, new, time, action, message


def find_repo(start: str) -> Repo | None:
    """The repository containing `start` (walking up), or None outside any repository."""
    path = os.path.abspath(start)
    while True:
        dot_git = os.path.join(path, ".git")
        if os.path.isdir(dot_git):
            return Repo(path, dot_git, _common_dir(dot_git))
        if os.path.isfile(dot_git):
            git_dir = _gitdir_from_file(dot_git, path)
            return Repo(path, git_dir, _common_dir(git_dir)) if git_dir else None
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


def _gitdir_from_file(dot_git: str, worktree: str) -> str | None:
    """A linked worktree or submodule: `.git` is a file saying `gitdir: <path>`."""
    text = _read_text(dot_git)
    if not text or not text.startswith("gitdir:"):
        return None
    target = text[len("gitdir:") :].strip()
    return os.path.normpath(os.path.join(worktree, target))


def _common_dir(git_dir: str) -> str:
    """Where shared refs live: `commondir` points there from a linked worktree's git dir."""
    text = _read_text(os.path.join(git_dir, "commondir"))
    if not text:
        return git_dir
    return os.path.normpath(os.path.join(git_dir, text.strip()))


def read_head(repo: Repo) -> tuple[str | None, str | None]:
    """(commit sha or None when unborn/unreadable, symbolic ref or None when detached)."""
    text = _read_text(os.path.join(repo.git_dir, "HEAD"))
    if text is None:
        return None, None
    text = text.strip()
    if not text.startswith("ref:"):
        return (text if _is_sha(text) else None), None
    ref = text[4:].strip()
    return resolve_ref(repo, ref), ref


def resolve_ref(repo: Repo, ref: str, depth: int = 0) -> str | None:
    """A ref's commit: loose file (worktree dir, then common dir), else `packed-refs`."""
    if depth > 5:
        return None
    for base in (repo.git_dir, repo.common_dir):
        text = _read_text(os.path.join(base, ref))
        if text is None:
            continue
        text = text.strip()
        if text.startswith("ref:"):
            return resolve_ref(repo, text[4:].strip(), depth + 1)
        return text if _is_sha(text) else None
    return _packed_ref(repo.common_dir, ref)


def _packed_ref(common_dir: str, ref: str) -> str | None:
    text = _read_text(os.path.join(common_dir, "packed-refs"))
    if not text:
        return None
    suffix = " " + ref
    for line in text.splitlines():
        if line.endswith(suffix) and _is_sha(line[: -len(suffix)]):
            return line[: -len(suffix)]
    return None


def branch_name(ref: str | None) -> str:
    """`refs/heads/feature/x` → `feature/x`; detached HEAD → ""."""
    if not ref or not ref.startswith("refs/heads/"):
        return ""
    return ref[len("refs/heads/") :]


def reflog_last(repo: Repo, sha: str) -> ReflogEntry | None:
    """The latest `logs/HEAD` entry if it moved HEAD to `sha`; None without a matching entry.

    It tells a commit (`commit`, `commit (amend)`, `cherry-pick`, …) from a checkout, reset,
    pull or rebase, and when it happened, without running git.
    """
    line = _last_line(os.path.join(repo.git_dir, "logs", "HEAD"))
    entry = _parse_reflog_line(line) if line else None
    return entry if entry is not None and entry.new == sha else None


def _last_line(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(0, size - _TAIL_BYTES))
            tail = handle.read()
    except OSError:
        return None
    lines = tail.rstrip(b"\n").rsplit(b"\n", 1)
    return lines[-1].decode("utf-8", "replace") if lines and lines[-1] else None


def _parse_reflog_line(line: str) -> ReflogEntry | None:
    head, _, message = line.partition("\t")
    fields = head.split(" ")
    if len(fields) < 5 or not (_is_sha(fields[0]) and _is_sha(fields[1])):
        return None
    try:
        when = int(fields[-2])
    except ValueError:
        return None
    action, _, rest = message.partition(": ")
    return ReflogEntry(fields[0], fields[1], when, action, rest)


def uses_reftable(repo: Repo) -> bool:
    return os.path.isdir(os.path.join(repo.common_dir, "reftable"))


def _is_sha(text: str) -> bool:
    return len(text) in (40, 64) and not text.strip("0123456789abcdef")


def _read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None
