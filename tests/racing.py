"""Two real code paths interleaved at an exact point, for races: one runs in a thread and is held inside
the real blob storage at one write; the other runs meanwhile on its own database connection. Nothing
waits a fixed time: each side is released when the other has reached its point."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from django.core.files.storage import Storage, storages
from django.db import connection

HANG_GUARD = 60  # seconds: only a broken interleaving ever waits this long


class HeldWrite:
    """The real blob storage, holding the first write of a key ``matches`` accepts — before it reaches the
    bucket, or just after (``stored``) — until released, noting the held thread's database session."""

    def __init__(self, matches: Callable[[str], bool], *, stored: bool) -> None:
        self.real: Storage = storages["blobs"]
        self.matches, self.stored = matches, stored
        self.reached, self.released = threading.Event(), threading.Event()
        self.backend_pid = 0

    def save(self, name: str, content: Any, max_length: int | None = None) -> str:
        held = not self.reached.is_set() and self.matches(name)
        if held and not self.stored:
            self._hold()
        saved = self.real.save(name, content, max_length=max_length)
        if held and self.stored:
            self._hold()
        return saved

    def _hold(self) -> None:
        self.backend_pid = connection.connection.info.backend_pid
        self.reached.set()
        assert self.released.wait(HANG_GUARD)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def in_thread(run: Callable[[], Any], results: dict[str, Any], name: str) -> threading.Thread:
    """``run()`` in a thread of its own (and so its own database connection); its result, or what it
    raised, lands in ``results[name]``."""

    def target() -> None:
        try:
            results[name] = run()
        except BaseException as exc:  # re-raised by the test, not lost in the thread
            results[name] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=target, name=name)
    thread.start()
    return thread


def blocked_by(backend_pid: int) -> bool:
    """Whether some database session waits for a lock ``backend_pid`` holds."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid)))", [backend_pid]
        )
        return bool(cursor.fetchone()[0])


def wait_until_done_or_blocked(thread: threading.Thread, held: HeldWrite) -> None:
    """Until ``thread`` has finished or waits for a lock the held thread holds."""
    deadline = time.monotonic() + HANG_GUARD
    while thread.is_alive() and not blocked_by(held.backend_pid):
        assert time.monotonic() < deadline, f"{thread.name} neither finished nor waited for the held thread"
        time.sleep(0.01)


def raise_any(results: dict[str, Any]) -> None:
    for result in results.values():
        if isinstance(result, BaseException):
            raise result
