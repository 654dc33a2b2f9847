"""The audit trail: reads of session content, and deletions (by an admin or by retention)."""

from __future__ import annotations

import logging

from django.http import HttpRequest

from sessions_app.models import AccessLog, Session

logger = logging.getLogger("sessionledger.audit")


def access_record(*, session: Session, request: HttpRequest, via: str) -> AccessLog:
    user = request.user if request.user.is_authenticated else None
    return AccessLog.objects.create(
        project_id=session.project_id,
        session_id=session.pk,
        user=user,
        via=via,
        ip=request.META.get("REMOTE_ADDR") or None,
        user_agent=request.META.get("HTTP_USER_AGENT", "")[:300],
    )


def deletion_logged(session: Session, *, by: str) -> None:
    logger.info(
        "deleted session %s (project %s, %s %s, %d bytes) by %s",
        session.pk,
        session.project_id,
        session.kind,
        session.commit_hash or session.task_id,
        session.size_bytes,
        by,
    )
