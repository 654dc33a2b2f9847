"""The HEAD commit last observed per git directory: how the hook knows that HEAD moved.

One tiny text file per git directory (per worktree: each has its own HEAD), so the no-op path
reads a few dozen bytes and imports nothing. Writes happen under the state lock (see
`hooks.post_tool_use`), which makes "observe and claim the capture" a compare-and-swap.
"""

from __future__ import annotations

import os

from sessionledger import paths

_KEYS: dict[str, str] = {}  # a capture asks for one git directory's key three times


def _key(git_dir: str) -> str:
    """A file name for a git directory: readable, and unique through a hash of the path."""
    if git_dir not in _KEYS:
        real = os.path.realpath(git_dir)
        readable = "".join(c if c.isalnum() else "-" for c in real)[-80:]
        _KEYS[git_dir] = f"{_fnv1a(real.encode('utf-8', 'surrogateescape')):08x}{readable}"
    return _KEYS[git_dir]


def _fnv1a(data: bytes) -> int:
    """32-bit FNV-1a: stable across runs (unlike hash()) and needs no import (unlike zlib)."""
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def seen(git_dir: str) -> str | None:
    try:
        with open(os.path.join(paths.heads_dir(), _key(git_dir)), "rb") as handle:
            return handle.read().strip().decode("ascii") or None
    except (OSError, ValueError):
        return None


def record(git_dir: str, sha: str) -> None:
    from sessionledger.fsutil import atomic_write

    # No fsync: a lost observation only means the next hook judges this HEAD again.
    atomic_write(os.path.join(paths.heads_dir(), _key(git_dir)), sha.encode("ascii") + b"\n", sync=False)
