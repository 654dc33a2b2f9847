"""Celery tasks of the product core (all through ``projects.tasking.project_task``)."""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from config import metrics
from projects.scoping import unscoped
from projects.tasking import TransientError, project_task
from sessions_app import blobs
from sessions_app.models import Session, Status
from sessions_app.processing import session_process

logger = logging.getLogger(__name__)


@project_task(model=Session, name="sessions.process_session")
def process_session(session: Session) -> None:
    if settings.SESSIONLEDGER_FAULT_PROCESS_DELAY:
        time.sleep(settings.SESSIONLEDGER_FAULT_PROCESS_DELAY)
    try:
        session_process(session=session)
    except blobs.StorageUnavailable as exc:
        metrics.STORAGE_ERRORS.labels("process").inc()
        raise TransientError(str(exc)) from exc
    logger.info("session %s processed", session.pk, extra={"session_id": str(session.pk)})


@shared_task(name="sessions.sweep_processing", acks_late=True, ignore_result=True)
def sweep_processing() -> int:
    """Re-queue sessions stuck in ``processing`` (broker was down, or a worker died for good)."""
    from sessions_app.ingest import enqueue_processing

    cutoff = timezone.now() - timedelta(seconds=settings.SESSIONLEDGER_SWEEP_AFTER_SECONDS)
    with unscoped():
        stuck = list(
            Session.objects.filter(status=Status.PROCESSING, created_at__lt=cutoff).values_list("pk", flat=True)[:1000]
        )
    for session_id in stuck:
        enqueue_processing(session_id)
    if stuck:
        logger.info("sweep re-queued %d session(s) stuck in processing", len(stuck))
    return len(stuck)


@shared_task(name="sessions.apply_retention", acks_late=True, ignore_result=True)
def apply_retention() -> dict[str, int]:
    from sessions_app.retention import retention_apply_all

    return retention_apply_all()
