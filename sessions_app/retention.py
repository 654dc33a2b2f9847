"""Deleting sessions: one by an admin, or every expired one by the retention beat task.

Each session goes through ``sessions_app.services.session_delete`` (row first, its blobs once
that commits, tracked until storage confirms); the hourly run also retries blobs left pending.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from projects.audit_trail import record
from projects.models import Project
from projects.scoping import project_scope, unscoped
from sessions_app.models import AccessLog, Session
from sessions_app.resumable import KEEP_DAYS, sweep_abandoned
from sessions_app.services import blob_deletions_retry, session_delete

logger = logging.getLogger(__name__)


def retention_apply(*, project: Project, now: datetime | None = None) -> int:
    """Delete this project's sessions older than its retention (and old access-log rows); returns how many."""
    now = now or timezone.now()
    # A legal hold keeps everything (docs/security.md "Audit retention and legal hold").
    if project.legal_hold_since is not None:
        return 0
    with project_scope(project):
        AccessLog.objects.filter(
            project=project, at__lt=now - timedelta(days=settings.SESSIONLEDGER_ACCESS_LOG_DAYS)
        ).delete()
        if not project.retention_days:
            return 0
        cutoff = now - timedelta(days=project.retention_days)
        expired = list(Session.objects.filter(project=project, created_at__lt=cutoff).defer("search_vector"))
        for session in expired:
            session_delete(session=session, by=f"retention ({project.retention_days} days)", audit=False)
        if expired:
            record(
                kind="retention.run",
                project=project,
                target=project.slug,
                detail={"sessions_deleted": len(expired), "retention_days": project.retention_days},
            )
    if expired:
        logger.info("retention deleted %d session(s) of project %s", len(expired), project.slug)
    return len(expired)


def retention_apply_all() -> dict[str, int]:
    with unscoped():
        projects = list(Project.objects.all())
    deleted = {project.slug: retention_apply(project=project) for project in projects}
    if swept := sweep_abandoned():
        logger.info("deleted %d resumable upload(s) begun over %d days ago, with their parts", swept, KEEP_DAYS)
    blob_deletions_retry()
    return deleted
