"""Fairness between projects in the worker: at most N sessions of one project are processed at once.

Every worker takes tasks from one FIFO queue, so without this a project that uploads 10,000
sessions (or a few pathological ones) holds every worker until its backlog is done, and a
session of another project waits behind all of it. Here each project has N slots, a Redis
sorted set of the sessions being processed (with a lease, so a killed worker's slot expires).
A task that finds its project's slots taken does not wait and is not re-queued in a loop: its
session is *parked* in the project's own waiting set and the task ends at once, so the workers
move on to other projects' sessions. Whenever a slot of that project frees up, the oldest parked
session is queued again. Parking costs one Redis call, so a flood of one project delays another
project's session by the time to pass over the flood's queued tasks (milliseconds each), not by
the time to process them (docs/scaling.md, "Fairness between projects").

Redis failing must not stop processing: the slot is then simply not enforced (fail open).
The sweep is the safety net for a parked session whose hand-off was lost (it is re-queued like any
session left ``processing``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import IntEnum
from functools import cache
from typing import cast

import redis
from django.conf import settings
from redis.commands.core import Script

logger = logging.getLogger(__name__)
PARKED_TTL = 86_400  # a parked set left behind expires; the sweep re-queues what it held

# KEYS: holders, parked. ARGV: session id, slots, lease seconds. Returns an Admission.
_ADMIT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
  redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[3])))
  redis.call('ZREM', KEYS[2], ARGV[1])
  return 1
end
redis.call('ZADD', KEYS[2], 'NX', now, ARGV[1])
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[4]))
return 0
"""
# KEYS: holders, parked. ARGV: session id, slots. Returns the parked session to queue next, if any.
_RELEASE = """
local t = redis.call('TIME')
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(t[1]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return false end
local next = redis.call('ZPOPMIN', KEYS[2])
return next[1] or false
"""


class Admission(IntEnum):
    PARKED = 0  # the project's slots are taken; queued again when one frees up
    ADMITTED = 1  # also a redelivery of a session whose worker died holding its slot: it takes it over


@cache
def _client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)


@cache
def _scripts() -> tuple[Script, Script]:
    client = _client()
    return client.register_script(_ADMIT), client.register_script(_RELEASE)


def _keys(project_id: object) -> list[str]:
    return [f"sl:fair:{project_id}:running", f"sl:fair:{project_id}:parked"]


def slots() -> int:
    return int(settings.SESSIONLEDGER_PROJECT_CONCURRENCY)


def lease_seconds() -> int:
    return int(settings.SESSIONLEDGER_PROCESS_TIME_LIMIT) + 60


def admit(project_id: object, session_id: object) -> Admission:
    if slots() <= 0:
        return Admission.ADMITTED
    script, _ = _scripts()
    try:
        result = script(keys=_keys(project_id), args=[str(session_id), slots(), lease_seconds(), PARKED_TTL])
    except redis.RedisError as exc:
        logger.warning("fairness not applied, Redis unavailable: %s", exc)
        return Admission.ADMITTED
    return Admission(int(result))


def release(project_id: object, session_id: object) -> str | None:
    """Free this session's slot (if it held one); the parked session to queue next, if any."""
    if slots() <= 0:
        return None
    _, script = _scripts()
    try:
        following = script(keys=_keys(project_id), args=[str(session_id), slots()])
    except redis.RedisError as exc:
        logger.warning("fairness slot not released, Redis unavailable (it expires): %s", exc)
        return None
    return following.decode() if isinstance(following, bytes) else following


@contextmanager
def project_slot(project_id: object, session_id: object, enqueue: Callable[[str], None]) -> Iterator[bool]:
    """Yields whether this session may be processed now; hands the slot on (``enqueue``) when done."""
    if admit(project_id, session_id) is Admission.PARKED:
        logger.info("session %s parked: its project's %d slot(s) are busy", session_id, slots())
        yield False
        return
    try:
        yield True
    finally:
        hand_on(project_id, session_id, enqueue)


def hand_on(project_id: object, session_id: object, enqueue: Callable[[str], None]) -> None:
    """Release the slot and ``enqueue`` the project's oldest parked session, if a slot is free for it."""
    following = release(project_id, session_id)
    if following:
        enqueue(following)


def parked(project_id: object) -> list[str]:
    """The project's parked sessions, oldest first (for tests and the operator)."""
    members = _client().zrange(_keys(project_id)[1], 0, -1)
    return [member.decode() for member in cast(list[bytes], members)]
