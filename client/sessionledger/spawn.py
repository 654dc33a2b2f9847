"""Start the uploader detached from the hook, so the hook exits at once (docs/design.md §7 never block).

POSIX: a double fork with `setsid`, no new interpreter — the grandchild is already a Python
process with the client loaded, belongs to no terminal or process group of Claude Code, and has
stdin/stdout/stderr re-pointed at /dev/null and the log file (Claude Code waits for the hook's
pipes to close, so an inherited pipe would block it). Elsewhere: `subprocess.Popen` with a new
session. `SESSIONLEDGER_UPLOAD_INLINE=1` uploads synchronously instead (deterministic tests).
"""

from __future__ import annotations

import os
import sys

from sessionledger import log, paths

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: `collections` is slow to import in a hook
if TYPE_CHECKING:
    from collections.abc import Callable

INLINE_ENV = "SESSIONLEDGER_UPLOAD_INLINE"


def start_uploader(before: Callable[[], None] | None = None) -> None:
    """Upload the queue now (inline) or in a detached process; never raises.

    `before` runs first in that process: hook work too slow for the hook itself that must not
    wait behind another uploader's lock (the diff stat of a /clear).
    """
    try:
        if os.environ.get(INLINE_ENV, "").lower() in ("1", "true", "yes"):
            from sessionledger import uploader

            _run_step(before)
            uploader.run(uploader.Mode.INLINE)
        elif hasattr(os, "fork"):
            _double_fork(_upload_after(before))
        else:  # pragma: no cover - Windows
            _popen()
    except Exception:
        log.exception("could not start the uploader")


def start_detached(step: Callable[[], None]) -> bool:
    """Run `step` in a detached process and return at once; False where that cannot be done
    (no `fork`: the step is left out) or failed. Never raises.

    Call it before starting any thread: a forked child has only the forking thread, and a lock
    another thread held (an import's) would stay held in the child."""
    if not hasattr(os, "fork"):
        return False
    try:
        _double_fork(lambda: _run_step(step))
    except Exception:
        log.exception("could not start a detached step")
        return False
    return True


def _double_fork(work: Callable[[], None]) -> None:
    """Fork twice; the hook returns at once (its exit reaps the first child via init).

    The first child lets go of Claude Code's pipes before anything else, so the hook's caller
    sees end-of-file as soon as the hook itself exits.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    if os.fork():
        return
    try:
        _detach_stdio()
        os.setsid()
        if os.fork():
            os._exit(0)
        work()
    finally:
        os._exit(0)  # never return into the hook's code path


def _upload_after(before: Callable[[], None] | None) -> Callable[[], None]:
    def work() -> None:
        _run_step(before)
        _run_detached()

    return work


def _run_step(step: Callable[[], None] | None) -> None:
    if step is None:
        return
    try:
        step()
    except Exception:
        log.exception("a detached step before the upload failed")


def _run_detached() -> None:
    try:
        from sessionledger import uploader

        uploader.run(uploader.Mode.DETACHED)
    except BaseException:
        log.exception("the detached uploader failed")


def _detach_stdio() -> None:
    devnull = os.open(os.devnull, os.O_RDWR)
    os.makedirs(paths.state_dir(), exist_ok=True)
    logfd = os.open(paths.log_file(), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.dup2(devnull, 0)
    os.dup2(logfd, 1)
    os.dup2(logfd, 2)
    os.close(devnull)
    os.close(logfd)


def _popen() -> None:  # pragma: no cover - Windows
    import subprocess

    os.makedirs(paths.state_dir(), exist_ok=True)
    with open(paths.log_file(), "ab") as logfile:
        subprocess.Popen(
            [sys.executable, "-m", "sessionledger", "_upload"],
            stdin=subprocess.DEVNULL,
            stdout=logfile,
            stderr=logfile,
            start_new_session=True,
            creationflags=getattr(subprocess, "DETACHED_PROCESS", 0) | getattr(subprocess, "CREATE_NO_WINDOW", 0),
        )
