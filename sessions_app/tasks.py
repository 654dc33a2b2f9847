"""Celery tasks of the processing pipeline: process a session, sweep stuck ones, apply retention."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import timedelta

import redis
from celery import shared_task
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from config import metrics
from projects.rls import lazy_commit
from projects.scoping import unscoped
from projects.tasking import TransientError, project_task
from sessions_app import blobs, fairness, inflight
from sessions_app.models import Session, Status
from sessions_app.processing import session_process, sessions_give_up
from sessions_app.retention import retention_apply_all

logger = logging.getLogger(__name__)


@contextmanager
def processing_gate(session: Session) -> Iterator[bool]:
    """Whether this delivery of the task processes the session now (outside the task's transaction).

    The project's fairness slot is taken first (docs/scaling.md), then the attempt is counted on
    the row and committed at once — a worker killed in the middle (out of memory, the hard time
    limit) cannot roll the count back, so a session that keeps killing workers is given up after
    ``SESSIONLEDGER_PROCESS_MAX_ATTEMPTS`` instead of being redelivered forever.
    """
    if session.status != Status.PROCESSING:
        fairness.hand_on(session.project_id, session.pk, enqueue_processing)  # a stale duplicate passes the baton on
        yield False
        return
    with fairness.project_slot(session.project_id, session.pk, enqueue_processing) as admitted:
        attempt = _count_attempt(session, 1) if admitted else None
        if attempt is not None and attempt > settings.SESSIONLEDGER_PROCESS_MAX_ATTEMPTS:
            _give_up([session.pk])
            attempt = None
        try:
            yield attempt is not None
        except TransientError:
            _count_attempt(session, -1)  # storage hiccups are retried, not held against the session
            raise


def _count_attempt(session: Session, step: int) -> int | None:
    """The session's attempts after adding ``step`` (kept on ``session``); None once it is no longer
    processing, or when another delivery of its task counted since ``session`` was loaded.

    Committed at once: what the count guards against is a worker killed mid-task, and that cannot undo
    a commit PostgreSQL has made; only a crash of PostgreSQL could lose it (``lazy_commit``), and the
    session is then tried once more."""
    attempts = session.processing_attempts + step
    with unscoped(), transaction.atomic():
        lazy_commit()
        counted = Session.objects.filter(
            pk=session.pk, status=Status.PROCESSING, processing_attempts=session.processing_attempts
        ).update(processing_attempts=attempts)
    if not counted:
        return None
    session.processing_attempts = attempts
    return attempts


def _give_up(session_ids: list[object]) -> int:
    with unscoped():
        return sessions_give_up(session_ids=session_ids, attempts=settings.SESSIONLEDGER_PROCESS_MAX_ATTEMPTS)


@project_task(
    model=Session,
    name="sessions.process_session",
    time_limit=settings.SESSIONLEDGER_PROCESS_TIME_LIMIT,
    gate=processing_gate,
    related=("project", "author"),  # the content document's header names the author
    durable=False,  # the result is re-derivable: a lost commit leaves it processing, and the sweep re-queues it
)
def process_session(session: Session) -> None:
    if settings.SESSIONLEDGER_FAULT_PROCESS_DELAY:
        time.sleep(settings.SESSIONLEDGER_FAULT_PROCESS_DELAY)
    try:
        session_process(session=session)
    except blobs.StorageUnavailable as exc:
        metrics.STORAGE_ERRORS.labels("process").inc()
        raise TransientError(str(exc)) from exc
    logger.info("session %s processed", session.pk, extra={"session_id": str(session.pk)})


# Priorities of a processing task (0 is taken first; config/settings.py): a session that can start at
# once goes before the backlog of a project whose slots are all busy, so one project's flood does not
# delay another project's session, and a freed slot's next session does not wait behind the flood.
NOW = 0  # its project has a free slot, or a slot just freed for it (the hand-off of sessions_app/fairness.py)
LATER = 9  # its project's slots are busy: a worker would park it anyway


def enqueue_processing(session_id: object, priority: int = NOW) -> None:
    """Queue processing; when the broker is down the row stays ``processing``, and it is queued when a
    worker connects again (``republish``) or by the sweep."""
    try:
        process_session.apply_async(args=[str(session_id)], retry=False, priority=priority)
    except Exception as exc:
        logger.warning("could not enqueue processing of %s (%s); queued when the broker is back", session_id, exc)


def enqueue_new(session: Session) -> None:
    """Queue a just-stored session: first in line, unless its project already has more sessions waiting
    or running than slots (one indexed count; it counts this session too)."""
    busy = fairness.slots() > 0 and project_backlog(session.project_id) > fairness.slots()
    enqueue_processing(session.pk, LATER if busy else NOW)


def project_backlog(project_id: object) -> int:
    """The project's sessions not processed yet (queued, parked, running or lost)."""
    with unscoped():
        return int(Session.objects.filter(project_id=project_id, status=Status.PROCESSING).count())


@shared_task(name="sessions.sweep_processing", acks_late=True, ignore_result=True)
def sweep_processing(older_than: float | None = None) -> int:
    """Re-queue sessions left ``processing`` with no task anywhere (the broker was down when they came,
    a worker died for good, Redis lost its data): not those queued, delivered, parked or running
    (sessions_app/inflight.py). Give up those whose processing was started too often without ending
    (they kill workers). ``older_than`` seconds (default ``SESSIONLEDGER_SWEEP_AFTER_SECONDS``)."""
    client = fairness.redis_client()
    try:
        if not client.set(SWEEP_LOCK, "1", nx=True, ex=SWEEP_LOCK_SECONDS):
            return 0  # another sweep is reading the queue: two would queue the same sessions twice
    except redis.RedisError as exc:
        logger.warning("sweep skipped, Redis unavailable: %s", exc)
        return 0
    try:
        return _sweep(settings.SESSIONLEDGER_SWEEP_AFTER_SECONDS if older_than is None else older_than)
    finally:
        with suppress(redis.RedisError):
            client.delete(SWEEP_LOCK)


SWEEP_LOCK = "sl:sweep"
SWEEP_LOCK_SECONDS = 60
# A session younger than this may still be on its way to the queue (its upload's on_commit publish).
PUBLISH_GRACE_SECONDS = 5


def _sweep(older_than: float) -> int:
    cutoff = timezone.now() - timedelta(seconds=older_than)
    with unscoped():
        stuck = list(
            Session.objects.filter(status=Status.PROCESSING, created_at__lt=cutoff)
            .order_by("created_at")
            .values_list("pk", "project_id", "processing_attempts")[:1000]
        )
    if not stuck:
        return 0
    in_flight = inflight.sessions_in_flight(settings.CELERY_TASK_DEFAULT_QUEUE, {project for _, project, _ in stuck})
    if in_flight is None:
        return 0
    lost = [(pk, attempts) for pk, _, attempts in stuck if str(pk) not in in_flight]
    spent = [pk for pk, attempts in lost if attempts >= settings.SESSIONLEDGER_PROCESS_MAX_ATTEMPTS]
    retried = [pk for pk, attempts in lost if attempts < settings.SESSIONLEDGER_PROCESS_MAX_ATTEMPTS]
    if spent:
        logger.warning("sweep gave up %d session(s) after repeated processing attempts", _give_up(spent))
    for session_id in retried:
        enqueue_processing(session_id, LATER)  # behind sessions that can start now; a worker parks or runs it
    if retried:
        logger.info("sweep re-queued %d session(s) left processing with no task", len(retried))
    return len(retried)


@shared_task(name="sessions.republish", ignore_result=True)
def republish(again: bool = True) -> int:
    """Queue what an outage left unqueued, as soon as a worker is connected to the broker again (each
    worker sends this task when it connects: config/celery.py), not at the next periodic sweep. Once
    more a little later, for the uploads whose publishing was still failing at the broker's return."""
    if again:
        republish.apply_async(kwargs={"again": False}, countdown=2 * PUBLISH_GRACE_SECONDS, priority=NOW)
    return int(sweep_processing(older_than=PUBLISH_GRACE_SECONDS))


@shared_task(name="sessions.reap_slots", ignore_result=True)
def reap_slots() -> int:
    """Free the fairness slots of dead workers and queue parked sessions for free slots (every few seconds)."""
    return fairness.reap(enqueue_processing)


@shared_task(name="sessions.apply_retention", acks_late=True, ignore_result=True)
def apply_retention() -> dict[str, int]:
    return retention_apply_all()
