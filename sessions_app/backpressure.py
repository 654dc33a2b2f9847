"""Backpressure: uploads are refused (503 + Retry-After) while processing is too far behind.

Ingest is cheap (store the gzip, insert a row, queue a task) and processing is not, so without a bound
a burst of uploads — or too few workers — builds a queue that grows for as long as the burst lasts,
invisible to the people whose sessions wait in it. Past ``SESSIONLEDGER_MAX_QUEUE_DEPTH`` tasks
waiting in the Celery queue, an upload is answered ``503`` with ``Retry-After:
SESSIONLEDGER_BACKPRESSURE_RETRY_AFTER`` seconds: nothing is stored, and the client keeps the segment
in its queue and sends it again after that delay (docs/client.md), with the same Idempotency-Key.

The depth is one ``LLEN`` on the broker's Redis per upload (reads are never refused). When Redis
cannot be reached the upload goes on (fail open): queueing its task fails too, and the sweep queues it
later. ``SESSIONLEDGER_MAX_QUEUE_DEPTH=0`` turns the check off (docs/scaling.md says how to choose it).
"""

from __future__ import annotations

import logging
from functools import cache

import redis
from django.conf import settings

from projects.errors import DomainError

logger = logging.getLogger(__name__)


@cache
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)


def queue_depth() -> int | None:
    """Tasks waiting in the Celery queue, or None when the broker cannot be asked."""
    try:
        return int(_client(settings.REDIS_URL).llen(settings.CELERY_TASK_DEFAULT_QUEUE))
    except redis.RedisError as exc:
        logger.warning("backpressure not applied, the broker is unavailable: %s", exc)
        return None


def refuse_when_behind() -> None:
    """Raise a 503 ``overloaded`` when more than the configured number of tasks wait for a worker."""
    limit = settings.SESSIONLEDGER_MAX_QUEUE_DEPTH
    if limit <= 0:
        return
    depth = queue_depth()
    if depth is None or depth <= limit:
        return
    wait = settings.SESSIONLEDGER_BACKPRESSURE_RETRY_AFTER
    logger.warning("upload refused: %d tasks wait for a worker (limit %d)", depth, limit)
    raise DomainError(
        "overloaded",
        f"The server is behind with processing; nothing was stored. Try again in {wait} seconds.",
        status_code=503,
        retry_after=wait,
    )
