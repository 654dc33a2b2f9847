"""``GET /healthz``: the state of every dependency, 503 when one is down."""

from __future__ import annotations

from collections.abc import Callable

import redis
from django.conf import settings
from django.core.files.storage import storages
from django.db import connection
from django.http import HttpRequest, JsonResponse


def _database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def _redis() -> None:
    redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2).ping()


def _storage() -> None:
    storages["blobs"].exists("healthz-probe")


CHECKS: dict[str, Callable[[], None]] = {"database": _database, "redis": _redis, "storage": _storage}


def _run(check: Callable[[], None]) -> str:
    try:
        check()
    except Exception as exc:
        return f"down: {type(exc).__name__}: {exc}"[:300]
    return "ok"


def healthz(request: HttpRequest) -> JsonResponse:
    results = {name: _run(check) for name, check in CHECKS.items()}
    healthy = all(value == "ok" for value in results.values())
    return JsonResponse({"status": "ok" if healthy else "degraded", "checks": results}, status=200 if healthy else 503)
