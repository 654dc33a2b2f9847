"""Probes. ``GET /healthz`` and ``GET /readyz``: the state of every dependency, 503 when one is down
(readiness: take this process out of the load balancer). ``GET /livez``: the process answers, nothing
else is checked (liveness: restart it only when it hangs), so a Redis blip does not restart every pod.

Anyone may ask (load balancers do, unauthenticated), so the answer names only the component that is
down; what went wrong (exception text: hosts, ports, bucket names) goes to the log.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import redis
from django.conf import settings
from django.core.files.storage import storages
from django.db import connection
from django.http import HttpRequest, JsonResponse

logger = logging.getLogger(__name__)


def _database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def _redis() -> None:
    redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2).ping()


def _storage() -> None:
    storages["blobs"].exists("healthz-probe")


CHECKS: dict[str, Callable[[], None]] = {"database": _database, "redis": _redis, "storage": _storage}


def _run(name: str, check: Callable[[], None]) -> str:
    try:
        check()
    except Exception:
        logger.warning("healthz: %s is down", name, exc_info=True)
        return "down"
    return "ok"


def livez(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


def healthz(request: HttpRequest) -> JsonResponse:
    results = {name: _run(name, check) for name, check in CHECKS.items()}
    healthy = all(value == "ok" for value in results.values())
    return JsonResponse({"status": "ok" if healthy else "degraded", "checks": results}, status=200 if healthy else 503)


readyz = healthz  # the same checks; /healthz stays for what already probes it (docs/deployment.md)
