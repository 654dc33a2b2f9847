"""Recording administrative events (docs/security.md "Audit trail").

``record`` is called where the event happens — in the service that makes the change — so every path
to it (API, page, Django admin, command, SCIM) writes exactly one row. Who and from where come from
the request being served: ``AuditRequestMiddleware`` keeps it in a context variable, so services need
no request argument; outside a request (commands, Celery) the actor is the system unless a command
says ``acting(via="command")``.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.http import HttpRequest, HttpResponse

from projects.limits import client_address
from projects.models import AuditEvent, Project, User

_request: contextvars.ContextVar[HttpRequest | None] = contextvars.ContextVar("audit_request", default=None)
_via: contextvars.ContextVar[str] = contextvars.ContextVar("audit_via", default="system")

SSO_LOGIN_REFUSED = "sso.login_refused"  # governance/adapters.py: a domain not allowed, or a wrong nonce
SSO_ACCOUNT_RECLAIMED = "sso.account_reclaimed"  # governance/adapters.py: a never-verified account taken over
KINDS: tuple[str, ...] = (
    "membership.added",
    "membership.removed",
    "membership.role_changed",
    "invitation.created",
    "invitation.revoked",
    "invitation.accepted",
    "token.created",
    "token.revoked",
    "device.approved",
    "device.denied",
    "share.created",
    "share.revoked",
    "share.opened",
    "project.created",
    "project.settings_changed",
    "project.archived",
    "project.deleted",
    "project.exported",
    "session.deleted",
    "retention.run",
    "user.provisioned",
    "user.deactivated",
    "user.reactivated",
    "user.deleted",
    "user.erased",
    SSO_LOGIN_REFUSED,
    SSO_ACCOUNT_RECLAIMED,
    # SCIM (governance/scim, docs/identity.md)
    "user.updated",
    "scim.refused",
    "scim_token.created",
    "scim_token.revoked",
    "group.provisioned",
    "group.updated",
    "group.deleted",
    "group.member_added",
    "group.member_removed",
    "group_mapping.created",
    "group_mapping.deleted",
    "user.break_glass_changed",
    # A forge repository bound to a project, or unbound; what the PR comment may say (integrations/api.py,
    # docs/forges.md)
    "forge.binding_created",
    "forge.binding_deleted",
    "forge.comment_settings_changed",
)
# Authentication, privileges, reading the trail, retention and holds (governance/auth_events.py,
# governance/audit.py, governance/holds.py; docs/security.md "Audit trail").
KINDS += (
    "auth.login",
    "auth.login_failed",
    "auth.logout",
    "auth.password_changed",
    "auth.password_reset",
    "user.privileges_changed",
    "user.jit_created",
    "audit.read",
    "audit.exported",
    "audit.expired",
    "project.legal_hold_set",
    "project.legal_hold_released",
    "project.audit_retention_changed",
)
# A project restored from an export (sessions_app/project_import.py); a person's data exported (governance).
PROJECT_IMPORTED = "project.imported"
PERSON_EXPORTED = "person.exported"
KINDS += (PROJECT_IMPORTED, PERSON_EXPORTED)


class AuditRequestMiddleware:
    """Makes the request being served the audit trail's source of who and from where."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        token = _request.set(request)
        try:
            return self.get_response(request)
        finally:
            _request.reset(token)


@contextmanager
def acting(*, via: str) -> Iterator[None]:
    """Outside a request (a management command): name the way the events came."""
    token = _via.set(via)
    try:
        yield
    finally:
        _via.reset(token)


def _via_of(request: HttpRequest) -> str:
    path = request.path
    for prefix, via in (("/api/", "api"), ("/scim/", "scim"), ("/admin/", "admin")):
        if path.startswith(prefix):
            return via
    return "web"


def record(
    request: Any = None,
    *,
    kind: str,
    project: Project | None = None,
    target: str = "",
    detail: dict[str, Any] | None = None,
    via: str | None = None,
    actor: User | None = None,
) -> AuditEvent:
    """Append one event. ``request`` (Django's or DRF's) defaults to the one being served."""
    if kind not in KINDS:
        raise ValueError(f"unknown audit event kind {kind!r}")
    http: HttpRequest | None = getattr(request, "_request", request) or _request.get()
    user = getattr(http, "user", None) if actor is None and http is not None else actor
    if not isinstance(user, User):
        user = None
    return AuditEvent.objects.create(
        project_id=project.pk if project else None,
        project_slug=project.slug if project else "",
        actor_id=user.pk if user else None,
        actor_email=user.email if user else "",
        kind=kind,
        target=str(target)[:300],
        detail=detail or {},
        via=via or (_via_of(http) if http is not None else _via.get()),
        ip=(client_address(http) or None) if http is not None else None,
        user_agent=http.META.get("HTTP_USER_AGENT", "")[:300] if http is not None else "",
    )
