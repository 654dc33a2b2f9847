"""Which sessions have a processing task somewhere, read from Redis: queued (at any priority), delivered
to a worker and not yet acknowledged (kombu's ``unacked`` hash, which holds a running task's message too),
parked or holding a slot (sessions_app/fairness.py). The sweep re-queues only the others, so a backlog
is never queued twice (docs/scaling.md "Lost tasks").

Celery's messages are read as kombu's Redis transport stores them: a JSON envelope whose ``body`` is
the base64 of ``[args, kwargs, embed]`` (Celery's message protocol 2).
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
from collections.abc import Iterable
from typing import Any

import redis

from sessions_app import fairness

logger = logging.getLogger(__name__)
TASK = "sessions.process_session"
UNACKED = "unacked"  # kombu's Redis transport: delivery tag -> [message, exchange, routing key]
BATCH = 500


def _session_of(message: Any) -> str | None:
    """The session a ``process_session`` message is for; None for any other message."""
    try:
        if message["headers"]["task"] != TASK:
            return None
        args = json.loads(base64.b64decode(message["body"]))[0]
        return str(args[0])
    except (KeyError, IndexError, TypeError, ValueError, binascii.Error):
        return None


def _sessions_of(raw: Iterable[bytes | str], *, wrapped: bool) -> set[str]:
    found = set()
    for item in raw:
        try:
            message = json.loads(item)
        except ValueError:
            continue
        session = _session_of(message[0] if wrapped and isinstance(message, list) and message else message)
        if session is not None:
            found.add(session)
    return found


def sessions_in_flight(queue: str, project_ids: Iterable[object]) -> set[str] | None:
    """Sessions with a task queued or delivered, parked or running (of these projects); None when Redis
    cannot be asked (then nothing is known, and nothing should be re-queued)."""
    client = fairness.redis_client()
    try:
        found: set[str] = set()
        for key in fairness.queue_keys(queue):
            for start in range(0, int(client.llen(key)), BATCH):
                found |= _sessions_of(client.lrange(key, start, start + BATCH - 1), wrapped=False)
        found |= _sessions_of(client.hvals(UNACKED), wrapped=True)
        for project_id in set(project_ids):
            found |= set(fairness.holders(project_id)) | set(fairness.parked(project_id))
    except redis.RedisError as exc:
        logger.warning("in-flight sessions not read, Redis unavailable: %s", exc)
        return None
    return found
