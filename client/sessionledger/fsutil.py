"""Crash-safe files: atomic replacement and an advisory lock between processes.

Several hooks can fire at once (parallel tool calls, several Claude sessions in one repository),
and a detached uploader may be running: every state or queue file is written to a temporary file,
fsynced and renamed into place, under `fcntl.flock`, so a reader sees the old or the new content,
never half of it, and a power cut loses at most the write in flight.
"""

from __future__ import annotations

import os
import time

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, single writer assumed
    fcntl = None  # type: ignore[assignment]


def atomic_write(path: str, data: bytes, *, mode: int = 0o600, durable: bool = True, sync: bool = True) -> None:
    """Replace `path` with `data`: temp file in the same directory, fsync, rename.

    `durable` also fsyncs the directory, so the new content survives a power cut (queue entries).
    `sync=False` skips every fsync: for data that is only an optimisation to lose (observations).
    """
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    write_file(tmp, data, mode=mode, sync=sync)
    os.replace(tmp, path)
    if durable and sync:
        fsync_dir(directory)


def write_file(path: str, data: bytes, *, mode: int = 0o600, sync: bool = True) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(directory: str) -> None:
    """Make a rename or a new directory entry durable (no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class FileLock:
    """An exclusive `flock` on a lock file; `timeout=0` tries once, `None` waits forever."""

    def __init__(self, path: str, timeout: float | None = None) -> None:
        self.path = path
        self.timeout = timeout
        self.fd: int | None = None

    def acquire(self) -> bool:
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        if fcntl is None:
            return True
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        while True:
            if self._try_lock(blocking=deadline is None):
                return True
            if deadline is not None and time.monotonic() >= deadline:
                self.release()
                return False
            time.sleep(0.02)

    def _try_lock(self, *, blocking: bool) -> bool:
        flags = fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB
        try:
            fcntl.flock(self.fd, flags)  # type: ignore[arg-type]
        except BlockingIOError:
            return False
        return True

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing the descriptor drops the lock
            self.fd = None

    def __enter__(self) -> FileLock:
        if not self.acquire():
            raise TimeoutError(f"could not lock {self.path}")
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def is_locked(path: str) -> bool:
    """Whether another process holds the lock (used by `status` to show a running uploader)."""
    lock = FileLock(path, timeout=0)
    if not os.path.exists(path) or lock.acquire():
        lock.release()
        return False
    return True
