"""A small append-only log file: hooks must never print (PostToolUse output would reach the
agent), so what went wrong goes here, and `status` points at it.

Not the `logging` module: it imports `re`, `traceback` and threading machinery that the hook's
fast path cannot afford.
"""

from __future__ import annotations

import os
import time

from sessionledger import paths

MAX_BYTES = 2 * 1024 * 1024


def write(level: str, message: str) -> None:
    """Append one line; never raises (logging must not be the reason a hook fails)."""
    try:
        path = paths.log_file()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        _rotate(path)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime())
        line = f"{stamp} {level:<5} [{os.getpid()}] {message}\n"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except Exception:
        pass


def info(message: str) -> None:
    write("INFO", message)


def warning(message: str) -> None:
    write("WARN", message)


def error(message: str) -> None:
    write("ERROR", message)


def exception(context: str) -> None:
    """Log the exception being handled, with its traceback."""
    import traceback

    write("ERROR", f"{context}\n{traceback.format_exc().rstrip()}")


def _rotate(path: str) -> None:
    try:
        if os.path.getsize(path) > MAX_BYTES:
            os.replace(path, path + ".1")
    except OSError:
        pass
