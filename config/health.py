"""Probes (docs/deployment.md "Probes").

- ``GET /livez``: the process answers; nothing else is checked, nothing can block it (liveness:
  restart the pod only when it hangs).
- ``GET /readyz`` (and ``/healthz``, which older load balancers ask): this pod can serve, which
  needs the database and nothing else: with Redis down the API still answers (uploads are kept and
  queued later, pages render uncached), and with the bucket down only what needs a transcript answers
  503. Taking every pod out of the Service for either would turn one dependency's outage into a
  full one. ``?verbose`` adds Redis and the bucket, for people; their state also goes to
  ``/metrics`` (``sessionledger_dependency_up``).

Each check runs in a thread of its own, at most one at a time per dependency and process, and its
result is kept ``CACHE_SECONDS``. A probe waits for a running check at most ``TIMEOUT_SECONDS`` and
then reports it down: a dependency that accepts connections and never answers (a blackholed bucket)
holds one background thread, never the request threads gunicorn serves probes with.

Anyone may ask (load balancers do, unauthenticated), so the answer names only the component that is
down; what went wrong (exception text: hosts, ports, bucket names) goes to the log.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import redis
from django.conf import settings
from django.core.files.storage import storages
from django.db import connection
from django.http import HttpRequest, JsonResponse
from prometheus_client import Gauge

logger = logging.getLogger(__name__)
TIMEOUT_SECONDS = 1.5  # under the chart's probe timeout (2 s), whatever the dependency does
CACHE_SECONDS = 5.0
DEPENDENCY_UP = Gauge(
    "sessionledger_dependency_up",
    "1 when the dependency answered its last health check in time, else 0",
    ["dependency"],
    multiprocess_mode="liveall",
)


def _database() -> None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    finally:
        connection.close()  # this thread's own connection; the next check runs in a new thread


def _redis() -> None:
    redis.Redis.from_url(settings.REDIS_URL, socket_timeout=TIMEOUT_SECONDS, socket_connect_timeout=1).ping()


def _storage() -> None:
    storages["blobs"].exists("healthz-probe")


@dataclass
class Check:
    """One dependency's check: its last result and the thread running it, if any."""

    name: str
    run: Callable[[], None]
    ok: bool | None = None
    checked_at: float = float("-inf")
    started_at: float = float("-inf")
    generation: int = 0  # a check started before ``forget`` reports to nobody
    running: threading.Thread | None = None
    done: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def state(self) -> str:
        """``ok`` or ``down``, waiting at most ``TIMEOUT_SECONDS`` for a check to end."""
        with self.lock:
            if time.monotonic() - self.checked_at >= CACHE_SECONDS and self.running is None:
                self.done, self.started_at = threading.Event(), time.monotonic()
                self.running = threading.Thread(
                    target=self._check, args=(self.generation,), name=f"health-{self.name}", daemon=True
                )
                self.running.start()
            done, started_at = self.done, self.started_at
        if self.running is not None:
            done.wait(max(0.0, started_at + TIMEOUT_SECONDS - time.monotonic()))
        with self.lock:
            if self.running is not None and time.monotonic() - self.started_at >= TIMEOUT_SECONDS:
                self._record(False)  # no answer in time: down, and asked again once this check has ended
            return "ok" if self.ok else "down"

    def _check(self, generation: int) -> None:
        try:
            self.run()
            ok = True
        except Exception:
            logger.warning("health: %s is down", self.name, exc_info=True)
            ok = False
        with self.lock:
            if generation == self.generation:
                self._record(ok)
                self.running = None
                self.done.set()

    def _record(self, ok: bool) -> None:
        self.ok, self.checked_at = ok, time.monotonic()
        DEPENDENCY_UP.labels(self.name).set(int(ok))


CHECKS: dict[str, Check] = {
    "database": Check("database", _database),
    "redis": Check("redis", _redis),
    "storage": Check("storage", _storage),
}
READINESS = ("database",)


def forget() -> None:
    """Drop the cached results: the next probe checks again (tests that take a dependency away)."""
    for check in CHECKS.values():
        with check.lock:
            check.checked_at, check.running, check.generation = float("-inf"), None, check.generation + 1


def livez(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


def readyz(request: HttpRequest) -> JsonResponse:
    """200 while the database answers; ``?verbose`` also reports Redis and the bucket (never failing on them)."""
    names = list(CHECKS) if "verbose" in request.GET else list(READINESS)
    results = {name: CHECKS[name].state() for name in names}
    ready = all(results[name] == "ok" for name in READINESS)
    body = {"status": "ok" if ready else "unavailable", "checks": results}
    return JsonResponse(body, status=200 if ready else 503)


healthz = readyz  # /healthz stays for what already probes it
