"""The HEAD commit last observed per git directory: how the hook knows that HEAD moved.

One tiny text file per git directory (per worktree: each has its own HEAD), so the no-op path
reads a few dozen bytes and imports nothing. Writes happen under the state lock (see
`hooks.post_tool_use`), which makes "observe and claim the capture" a compare-and-swap; a reader
outside the lock only decides whether to take it.
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
    """Written in place, not replaced through a temporary file: every writer holds the state lock,
    and a reader outside it that meets a half-written file only takes the slow path, which reads
    again under the lock. No fsync: a lost or torn observation only means the next hook judges
    this HEAD again (`detect.judge`). A new file and a rename cost a capture about 0.25 ms of CPU
    (on ext4 the rename over the old file also starts its writeback), the in-place write 0.03 ms."""
    data = sha.encode("ascii") + b"\n"
    os.makedirs(paths.heads_dir(), mode=0o700, exist_ok=True)
    fd = os.open(os.path.join(paths.heads_dir(), _key(git_dir)), os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        os.write(fd, data)
        os.ftruncate(fd, len(data))  # a SHA-1 after a SHA-256 observation (never shorter otherwise)
    finally:
        os.close(fd)
