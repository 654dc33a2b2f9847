"""A project's legal hold and the retention of its audit trail (docs/security.md "Audit retention and
legal hold").

Both are staff's (``manage.py project_policy``), never a project admin's: whoever a review is about
must not be able to shorten the record of their own actions or lift the hold that keeps it. A held
project's sessions, access log and audit trail outlive every retention, and a person with anything in
it cannot be erased (``governance.erasure``) until the hold is released.
"""

from __future__ import annotations

from django.db.models import Q
from django.utils import timezone

from projects.audit_trail import record
from projects.errors import DomainError
from projects.models import AuditEvent, Membership, Project, User
from projects.scoping import unscoped
from sessions_app.models import AccessLog, Session


def legal_hold_set(*, project: Project, reason: str) -> None:
    reason = reason.strip()[:300]
    if not reason:
        raise DomainError("reason_required", "A legal hold needs a reason (the matter it is kept for).")
    with unscoped():
        project.legal_hold_since = project.legal_hold_since or timezone.now()
        project.legal_hold_reason = reason
        project.save(update_fields=["legal_hold_since", "legal_hold_reason"])
    record(kind="project.legal_hold_set", project=project, target=project.slug, detail={"reason": reason})


def legal_hold_release(*, project: Project) -> None:
    since = project.legal_hold_since
    with unscoped():
        project.legal_hold_since = None
        project.legal_hold_reason = ""
        project.save(update_fields=["legal_hold_since", "legal_hold_reason"])
    detail = {"held_since": since.isoformat() if since else None}
    record(kind="project.legal_hold_released", project=project, target=project.slug, detail=detail)


def audit_retention_set(*, project: Project, days: int | None) -> None:
    """``None``: the deployment's ``SESSIONLEDGER_AUDIT_DAYS``."""
    if days is not None and days < 1:
        raise DomainError("invalid", "Audit retention is at least one day.", field="days")
    before = project.audit_retention_days
    with unscoped():
        project.audit_retention_days = days
        project.save(update_fields=["audit_retention_days"])
    detail = {"from": before, "to": days}
    record(kind="project.audit_retention_changed", project=project, target=project.slug, detail=detail)


def held_projects_of(user: User) -> list[str]:
    """Slugs of the held projects holding anything of ``user``: a membership, a session they uploaded,
    a read of theirs in the access log, an audit event they acted in or that names them."""
    with unscoped():
        held = Project.objects.filter(legal_hold_since__isnull=False)
        ids = set(Membership.objects.filter(user=user, project__in=held).values_list("project_id", flat=True))
        ids |= set(Session.objects.filter(author=user, project__in=held).values_list("project_id", flat=True))
        ids |= set(AccessLog.objects.filter(user=user, project__in=held).values_list("project_id", flat=True))
        named = Q(actor_id=user.pk) | Q(target__iexact=user.email)
        ids |= set(
            AuditEvent.objects.filter(named, project_id__in=held.values("pk")).values_list("project_id", flat=True)
        )
        return sorted(held.filter(pk__in=ids).values_list("slug", flat=True))
