"""Celery tasks of the processing pipeline: process a session, sweep stuck ones, apply retention."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from config import metrics
from projects.rls import lazy_commit
from projects.scoping import unscoped
from projects.tasking import TransientError, project_task
from sessions_app import blobs, fairness
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


def enqueue_processing(session_id: object) -> None:
    """Queue processing; when the broker is down the row stays ``processing`` and the sweep re-queues it."""
    try:
        process_session.apply_async(args=[str(session_id)], retry=False)
    except Exception as exc:
        logger.warning("could not enqueue processing of %s (%s); the sweep will retry", session_id, exc)


@shared_task(name="sessions.sweep_processing", acks_late=True, ignore_result=True)
def sweep_processing() -> int:
    """Re-queue sessions stuck in ``processing`` (broker was down, or a worker died for good);
    give up those whose processing was started too often without ending (they kill workers)."""
    cutoff = timezone.now() - timedelta(seconds=settings.SESSIONLEDGER_SWEEP_AFTER_SECONDS)
    with unscoped():
        stuck = list(
            Session.objects.filter(status=Status.PROCESSING, created_at__lt=cutoff).values_list(
                "pk", "processing_attempts"
            )[:1000]
        )
    spent = [pk for pk, attempts in stuck if attempts >= settings.SESSIONLEDGER_PROCESS_MAX_ATTEMPTS]
    retried = [pk for pk, attempts in stuck if attempts < settings.SESSIONLEDGER_PROCESS_MAX_ATTEMPTS]
    if spent:
        logger.warning("sweep gave up %d session(s) after repeated processing attempts", _give_up(spent))
    for session_id in retried:
        enqueue_processing(session_id)
    if retried:
        logger.info("sweep re-queued %d session(s) stuck in processing", len(retried))
    return len(retried)


@shared_task(name="sessions.reap_slots", ignore_result=True)
def reap_slots() -> int:
    """Free the fairness slots of dead workers and queue parked sessions for free slots (every few seconds)."""
    return fairness.reap(enqueue_processing)


@shared_task(name="sessions.apply_retention", acks_late=True, ignore_result=True)
def apply_retention() -> dict[str, int]:
    return retention_apply_all()
