"""Deleting sessions: one by an admin, or every expired one by the retention beat task.

Blobs go first, then the row (and with it the search entry): a crash in between leaves a row
whose blobs are gone, which the next run deletes again — never an orphaned blob nobody tracks.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from projects.models import Project
from projects.scoping import project_scope, unscoped
from sessions_app import blobs
from sessions_app.audit import deletion_logged
from sessions_app.models import AccessLog, Session

logger = logging.getLogger(__name__)


def session_keys(session: Session) -> list[str]:
    keys = [session.raw_storage_key, session.content_storage_key, *(s["key"] for s in session.subagents)]
    return [key for key in keys if key]


def session_delete(*, session: Session, by: str) -> None:
    blobs.delete(*session_keys(session))
    Session.objects.filter(pk=session.pk).delete()
    deletion_logged(session, by=by)


def retention_apply(*, project: Project, now: datetime | None = None) -> int:
    """Delete this project's sessions older than its retention (and old access-log rows); returns how many."""
    now = now or timezone.now()
    with project_scope(project):
        AccessLog.objects.filter(
            project=project, at__lt=now - timedelta(days=settings.SESSIONLEDGER_ACCESS_LOG_DAYS)
        ).delete()
        if not project.retention_days:
            return 0
        cutoff = now - timedelta(days=project.retention_days)
        expired = list(Session.objects.filter(project=project, created_at__lt=cutoff).defer("search_vector"))
        for session in expired:
            session_delete(session=session, by=f"retention ({project.retention_days} days)")
    if expired:
        logger.info("retention deleted %d session(s) of project %s", len(expired), project.slug)
    return len(expired)


def retention_apply_all() -> dict[str, int]:
    with unscoped():
        projects = list(Project.objects.all())
    return {project.slug: retention_apply(project=project) for project in projects}
