"""Fairness between projects in the worker: at most N sessions of one project are processed at once.

Every worker takes tasks from one FIFO queue, so without this a project that uploads 10,000
sessions (or a few pathological ones) holds every worker until its backlog is done, and a
session of another project waits behind all of it. Here each project has N slots, a Redis
sorted set of the sessions being processed, each with a short lease that a heartbeat thread of the
task holding it renews while it runs. A task that finds its project's slots taken does not wait and
is not re-queued in a loop: its session is *parked* in the project's own waiting set and the task
ends at once, so the workers move on to other projects' sessions (docs/scaling.md, "Fairness between
projects").

A slot is held by a *live* worker. When its worker dies (SIGKILL, out of memory, a lost node) the
heartbeat stops and the lease runs out within ``SESSIONLEDGER_SLOT_LEASE_SECONDS``. Whatever frees a
slot — a release, or an expired lease — the project's oldest parked sessions are queued again at once:
every admission first moves expired holders back to the head of the parked set and queues parked
sessions for the free slots, and so does ``reap`` for every project with parked sessions, which a
frequent beat task runs (it also covers a project that has no new task coming). So a dead worker's own
session is queued again too, without waiting for the broker's visibility timeout.

Redis failing must not stop processing: the slot is then simply not enforced (fail open).
The sweep is the safety net for a parked session whose hand-off was lost (it is re-queued like any
session left ``processing``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from enum import IntEnum
from functools import cache
from typing import cast

import redis
from django.conf import settings
from redis.commands.core import Script

logger = logging.getLogger(__name__)
KEY_TTL = 86_400  # a project's sets left behind expire; the sweep re-queues what they held
PRIORITY_SEP = "\x06\x16"  # kombu's Redis transport: a priority's list is the queue's name, this, the step
WAITING = "sl:fair:waiting"  # the projects that have parked sessions (for ``reap``)

# Shared head of the scripts. KEYS: holders, parked, waiting projects. ARGV[1]: slots.
# Expired holders (their worker is dead) go back to the head of the parked set.
_EXPIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local slots = tonumber(ARGV[1])
for _, dead in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)) do
  redis.call('ZREM', KEYS[1], dead)
  redis.call('ZADD', KEYS[2], 0, dead)
end
"""
# Shared tail: hand the free slots to the oldest parked sessions (returned, to be queued).
_HAND_ON = """
local queue = {}
local free = slots - redis.call('ZCARD', KEYS[1])
if free > 0 and hand_on then
  local popped = redis.call('ZPOPMIN', KEYS[2], free)
  for i = 1, #popped, 2 do queue[#queue + 1] = popped[i] end
end
if redis.call('ZCARD', KEYS[2]) == 0 then
  redis.call('SREM', KEYS[3], ARGV[2])
else
  redis.call('SADD', KEYS[3], ARGV[2])
  redis.call('EXPIRE', KEYS[2], KEY_TTL)
end
"""
# ARGV: slots, project id, session id, lease seconds, hand on (0/1). Returns {admission, to queue...}.
_ADMIT = (
    _EXPIRE
    + """
local session, hand_on = ARGV[3], ARGV[5] == '1'
local admitted = 0
if redis.call('ZSCORE', KEYS[1], session) or redis.call('ZCARD', KEYS[1]) < slots then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), session)
  redis.call('EXPIRE', KEYS[1], KEY_TTL)
  redis.call('ZREM', KEYS[2], session)
  admitted = 1
else
  redis.call('ZADD', KEYS[2], 'NX', now, session)
end
"""
    + _HAND_ON
    + """
table.insert(queue, 1, admitted)
return queue
"""
)
# ARGV: slots, project id, session id. Returns the parked sessions to queue next.
_RELEASE = (
    _EXPIRE
    + """
local hand_on = true
redis.call('ZREM', KEYS[1], ARGV[3])
redis.call('ZREM', KEYS[2], ARGV[3])
"""
    + _HAND_ON
    + "return queue\n"
)
# ARGV: slots, project id. Returns the parked sessions to queue next.
_REAP = _EXPIRE + "local hand_on = true\n" + _HAND_ON + "return queue\n"
# KEYS: holders. ARGV: session id, lease seconds. Renews the lease; 0 when the slot was lost meanwhile.
_RENEW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
return redis.call('ZADD', KEYS[1], 'XX', 'CH', now + tonumber(ARGV[2]), ARGV[1])
"""


class Admission(IntEnum):
    PARKED = 0  # the project's slots are taken; queued again when one frees up
    ADMITTED = 1  # also a redelivery of a session whose worker died holding its slot: it takes it over


def redis_client() -> redis.Redis:
    return _client_for(settings.REDIS_URL)


@cache
def _client_for(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)


def _scripts() -> dict[str, Script]:
    return _scripts_for(redis_client())


@cache
def _scripts_for(client: redis.Redis) -> dict[str, Script]:
    sources = {"admit": _ADMIT, "release": _RELEASE, "reap": _REAP, "renew": _RENEW}
    return {name: client.register_script(source.replace("KEY_TTL", str(KEY_TTL))) for name, source in sources.items()}


def _keys(project_id: object) -> list[str]:
    return [f"sl:fair:{project_id}:running", f"sl:fair:{project_id}:parked", WAITING]


def _decoded(members: Iterable[bytes | str]) -> list[str]:
    return [member.decode() if isinstance(member, bytes) else member for member in members]


def slots() -> int:
    return int(settings.SESSIONLEDGER_PROJECT_CONCURRENCY)


def lease_seconds() -> float:
    return float(settings.SESSIONLEDGER_SLOT_LEASE_SECONDS)


def admit(project_id: object, session_id: object, enqueue: Callable[[str], None] | None = None) -> Admission:
    """Take a slot or park the session; with ``enqueue``, also queue parked sessions for slots left free
    (an expired holder's, say)."""
    if slots() <= 0:
        return Admission.ADMITTED
    args: list[int | float | str] = [slots(), str(project_id), str(session_id), lease_seconds(), int(bool(enqueue))]
    try:
        admission, *following = _scripts()["admit"](keys=_keys(project_id), args=args)
    except redis.RedisError as exc:
        logger.warning("fairness not applied, Redis unavailable: %s", exc)
        return Admission.ADMITTED
    if enqueue is not None:  # nothing is popped without one
        for session in _decoded(following):
            enqueue(session)
    return Admission(int(admission))


def release(project_id: object, session_id: object) -> list[str]:
    """Free this session's slot (if it held one); the parked sessions to queue next, for the free slots."""
    if slots() <= 0:
        return []
    try:
        following = _scripts()["release"](keys=_keys(project_id), args=[slots(), str(project_id), str(session_id)])
    except redis.RedisError as exc:
        logger.warning("fairness slot not released, Redis unavailable (its lease expires): %s", exc)
        return []
    return _decoded(following)


def renew(project_id: object, session_id: object) -> bool:
    """Extend this session's lease; False when it was lost (expired and moved back to the parked set)."""
    try:
        return bool(_scripts()["renew"](keys=_keys(project_id)[:1], args=[str(session_id), lease_seconds()]))
    except redis.RedisError as exc:
        logger.warning("fairness lease not renewed, Redis unavailable: %s", exc)
        return True


def reap(enqueue: Callable[[str], None]) -> int:
    """For every project with parked sessions: expire dead holders and ``enqueue`` parked sessions for
    the free slots. The number queued. Run by a frequent beat task (``sessions.reap_slots``)."""
    if slots() <= 0:
        return 0
    try:
        projects = _decoded(cast(list[bytes], redis_client().smembers(WAITING)))
        queued = 0
        for project_id in projects:
            for session in _decoded(_scripts()["reap"](keys=_keys(project_id), args=[slots(), project_id])):
                enqueue(session)
                queued += 1
    except redis.RedisError as exc:
        logger.warning("fairness slots not reaped, Redis unavailable: %s", exc)
        return 0
    return queued


@contextmanager
def heartbeat(project_id: object, session_id: object) -> Iterator[None]:
    """Renew the session's lease every third of it from a thread, for as long as the block runs."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(lease_seconds() / 3):
            if not renew(project_id, session_id):
                logger.warning("session %s lost its fairness slot (its lease expired)", session_id)

    thread = threading.Thread(target=beat, name=f"slot-lease-{session_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


@contextmanager
def project_slot(project_id: object, session_id: object, enqueue: Callable[[str], None]) -> Iterator[bool]:
    """Yields whether this session may be processed now, its lease kept alive meanwhile; hands the slot
    on (``enqueue``) when done."""
    if admit(project_id, session_id, enqueue) is Admission.PARKED:
        logger.info("session %s parked: its project's %d slot(s) are busy", session_id, slots())
        yield False
        return
    try:
        with heartbeat(project_id, session_id):
            yield True
    finally:
        hand_on(project_id, session_id, enqueue)


def hand_on(project_id: object, session_id: object, enqueue: Callable[[str], None]) -> None:
    """Release the slot and ``enqueue`` the project's oldest parked sessions, one per free slot."""
    for following in release(project_id, session_id):
        enqueue(following)


def parked(project_id: object) -> list[str]:
    """The project's parked sessions, oldest first."""
    return _decoded(cast(list[bytes], redis_client().zrange(_keys(project_id)[1], 0, -1)))


def holders(project_id: object) -> list[str]:
    """The sessions holding the project's slots (live or with an expired lease)."""
    return _decoded(cast(list[bytes], redis_client().zrange(_keys(project_id)[0], 0, -1)))


def queue_keys(queue: str) -> list[str]:
    """The Redis lists of a Celery queue, highest priority first (kombu keeps one list per priority step)."""
    steps = settings.CELERY_BROKER_TRANSPORT_OPTIONS["priority_steps"]
    return [f"{queue}{PRIORITY_SEP}{step}" if step else queue for step in steps]


def waiting_total(queue: str) -> int | None:
    """Tasks in the Celery ``queue`` (its lists, one per priority) plus sessions parked in every project:
    what waits for a worker (one round trip). None when Redis cannot be asked."""
    lists = queue_keys(queue)
    try:
        return int(redis_client().eval(_WAITING_TOTAL, len(lists) + 1, WAITING, *lists))
    except redis.RedisError as exc:
        logger.warning("the backlog was not counted, Redis unavailable: %s", exc)
        return None


# KEYS: the waiting projects, then the Celery queue's lists. The parked sets are named from the projects' ids.
_WAITING_TOTAL = """
local total = 0
for i = 2, #KEYS do total = total + redis.call('LLEN', KEYS[i]) end
for _, project in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  total = total + redis.call('ZCARD', 'sl:fair:' .. project .. ':parked')
end
return total
"""
