"""The audit trail's own retention (docs/security.md "Audit retention and legal hold").

A project's events go after its ``audit_retention_days``, else ``SESSIONLEDGER_AUDIT_DAYS``, none of a
project under legal hold; deployment-wide events, and those of deleted projects, after
``SESSIONLEDGER_AUDIT_DAYS``. The runtime login may not delete an event, so each chain's oldest events
go through the owner login (``governance.integrity.prune``, which keeps the chain verifiable), and each
deletion is recorded as one ``audit.expired`` event. Run hourly by beat (``governance.expire_audit``).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from celery import shared_task
from django.conf import settings
from django.db import DatabaseError
from django.utils import timezone

from governance.integrity import prune
from projects.audit_trail import record
from projects.models import AuditEvent, Project
from projects.scoping import unscoped

INSUFFICIENT_PRIVILEGE = "42501"
logger = logging.getLogger(__name__)


def audit_events_expire(now: datetime | None = None) -> int:
    """Expire every chain's old events; returns how many went."""
    now = now or timezone.now()
    default = now - timedelta(days=settings.SESSIONLEDGER_AUDIT_DAYS)
    deleted = 0
    with unscoped():
        projects = {project.pk: project for project in Project.objects.all()}
        chains = set(AuditEvent.objects.filter(at__lt=now).values_list("project_id", flat=True).distinct())
    for project_id in chains:
        project = projects.get(project_id) if project_id else None
        if project is not None and project.legal_hold_since is not None:
            continue
        days = project.audit_retention_days if project is not None else None
        cutoff = now - timedelta(days=days) if days else default
        removed = prune(project_id=project_id, before=cutoff)
        if removed:
            detail = {"events_deleted": removed, "before": cutoff.isoformat()}
            record(kind="audit.expired", project=project, target=project.slug if project else "", detail=detail)
        deleted += removed
    return deleted


@shared_task(name="governance.expire_audit", ignore_result=True)  # type: ignore[untyped-decorator, unused-ignore]
def expire_audit() -> int:
    try:
        return audit_events_expire()
    except DatabaseError as exc:
        if getattr(exc.__cause__, "sqlstate", None) != INSUFFICIENT_PRIVILEGE:
            raise
        # A worker given the runtime login alone: as designed, it may not delete an event.
        logger.warning("audit retention skipped: it needs DATABASE_OWNER_URL (or run manage.py expire_audit)")
        return 0
