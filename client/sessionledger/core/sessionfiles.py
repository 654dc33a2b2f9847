"""Listing an agent's session files: what the per-agent layout modules (`claude_layout`,
`codex_layout`, `gemini_layout`) and the adapters share. `os` only: the git post-commit hook
lists every agent's folders with it before anything heavier is imported."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing would slow every hook
if TYPE_CHECKING:
    from collections.abc import Callable


def inside(path: str, trees: list[str]) -> bool:
    """Is `path` one of `trees` or below one of them?"""
    path = os.path.normpath(path)
    return any(path == tree or path.startswith(tree.rstrip(os.sep) + os.sep) for tree in trees)


def newer_files(directory: str, since: float, keep: Callable[[str], bool]) -> list[tuple[float, str]]:
    """(mtime, path) of the files in `directory` named as `keep` wants, written at/after `since`."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    found = []
    for entry in entries:
        if not keep(entry.name):
            continue
        try:
            stat = entry.stat()
        except OSError:
            continue
        if stat.st_mtime >= since and not entry.is_dir():
            found.append((stat.st_mtime, entry.path))
    return found
