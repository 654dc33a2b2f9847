"""A CPU budget for one session's processing, so a pathological upload fails alone and quickly.

Celery's time limits are the outer wall (wall-clock, and only in the prefork pool); this one
counts the worker process's CPU time (``ITIMER_PROF``), so a busy machine does not fail honest
sessions, and it works in every pool and in-process. When the budget is spent a signal handler
raises ``BudgetExceeded`` at the next bytecode — also inside ``re`` matching, which checks for
signals. It derives from ``BaseException`` so that no ``except Exception`` in a parser can
swallow it, and the timer keeps firing every second in case something does.

Storage calls are the exception: boto3's transfer manager hands work to threads and holds locks
while it does, and an exception landing inside it can leave a lock held and hang the worker. So
``sessions_app.blobs`` wraps them in ``deferred()``, and a budget spent there raises when they end.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class BudgetExceeded(BaseException):
    def __init__(self, seconds: float) -> None:
        super().__init__(f"processing used more than its budget of {seconds:g} s of CPU time")
        self.seconds = seconds


class _Held(threading.local):
    depth = 0
    pending: BudgetExceeded | None = None


_held = _Held()  # the signal handler runs in the main thread, so it reads the main thread's


@contextmanager
def deferred() -> Iterator[None]:
    """Hold a spent budget's exception until this block ends (see the module's docstring)."""
    _held.depth += 1
    try:
        yield
    finally:
        _held.depth -= 1
    if _held.depth == 0 and _held.pending is not None:
        exc, _held.pending = _held.pending, None
        raise exc


@contextmanager
def cpu_budget(seconds: float) -> Iterator[None]:
    """Raise ``BudgetExceeded`` in this (main) thread once ``seconds`` of CPU are used; 0 = none."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield  # signals reach only the main thread; Celery's time limits still apply
        return
    armed = True

    def expired(signum: int, frame: FrameType | None) -> None:
        if armed and _held.depth:
            _held.pending = BudgetExceeded(seconds)
        elif armed:
            raise BudgetExceeded(seconds)

    previous = signal.signal(signal.SIGPROF, expired)
    signal.setitimer(signal.ITIMER_PROF, seconds, 1.0)
    try:
        yield
    finally:
        armed = False
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
        _held.pending = None
