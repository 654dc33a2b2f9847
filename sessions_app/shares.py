"""Share links: a read-only view of one session for someone without an account.

A member creates one with a lifetime of at most ``MAX_DAYS`` days; members can list and revoke
them. A link lives no longer than the intent behind it: switching sharing off for the project
revokes every link (switching it on again revives none), and a member who leaves the project takes
their links with them (``revoke_links_of_leaving_member``, on every removal of a membership). The
token is shown once; only its SHA-256 is stored. An expired, revoked or disabled link resolves
exactly like a token that never existed: ``share_resolve`` returns None and the page is the
site's ordinary 404 (docs/attribution.md "Share links").
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from projects import audit_trail
from projects.errors import DomainError
from projects.models import Membership, Project, User
from projects.scoping import unscoped
from sessions_app.models import Session, ShareLink

MAX_DAYS = 30
TOKEN_BYTES = 32


@dataclass(frozen=True)
class NewShare:
    link: ShareLink
    token: str

    @property
    def url(self) -> str:
        return share_url(self.token)


def share_url(token: str) -> str:
    return f"{settings.SITE_URL}/share/{token}"


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def share_create(*, session: Session, user: User, days: int) -> NewShare:
    if not session.project.sharing_enabled:
        raise DomainError("sharing_disabled", "An admin turned sharing off for this project.", status_code=403)
    if not 1 <= days <= MAX_DAYS:
        raise DomainError("invalid", f"A share link lives 1 to {MAX_DAYS} days.", field="days")
    token = secrets.token_urlsafe(TOKEN_BYTES)
    link = ShareLink.objects.create(
        project_id=session.project_id,
        session=session,
        token_hash=_digest(token),
        created_by=user,
        expires_at=timezone.now() + timedelta(days=days),
    )
    audit_trail.record(kind="share.created", project=session.project, target=_target(link), detail={"days": days})
    return NewShare(link, token)


def _target(link: ShareLink) -> str:
    return f"share link #{link.pk} to session {link.session_id}"


def share_opened(link: ShareLink) -> None:
    """An anonymous visitor opened the link's session page (each view counts against its rate)."""
    audit_trail.record(kind="share.opened", project=link.project, target=_target(link), actor=None)


def share_revoke(*, link: ShareLink) -> None:
    if link.revoked_at is None:
        link.revoked_at = timezone.now()
        link.save(update_fields=["revoked_at"])
        audit_trail.record(kind="share.revoked", project=link.project, target=_target(link))


def _revoke_live(links: QuerySet[ShareLink]) -> int:
    return links.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())


def sharing_set(*, project: Project, enabled: bool) -> None:
    """Switch sharing on or off; off revokes every link of the project, so on again revives none."""
    with transaction.atomic():
        if project.sharing_enabled != enabled:
            audit_trail.record(
                kind="project.settings_changed",
                project=project,
                target=project.slug,
                detail={"sharing_enabled": enabled},
            )
        project.sharing_enabled = enabled
        project.save(update_fields=["sharing_enabled"])
        if not enabled:
            _revoke_live(ShareLink.objects.filter(project=project))


def revoke_links_of_leaving_member(sender: type[Membership], instance: Membership, **_: Any) -> None:
    """``pre_delete`` of a membership (removed by an admin, or with its user or project): the links
    its user made in that project are revoked. ``pre_delete``, because deleting the user sets the
    links' ``created_by`` to NULL before any ``post_delete`` is sent."""
    with unscoped():  # removal runs in the project's scope, a deleted user's cascade in none
        _revoke_live(ShareLink.objects.filter(project_id=instance.project_id, created_by_id=instance.user_id))


def share_list(*, project: Project, session: Session | None = None) -> QuerySet[ShareLink]:
    links = ShareLink.objects.filter(project=project).select_related("session", "created_by")
    return links.filter(session=session) if session is not None else links


def share_get(*, project: Project, link_id: Any) -> ShareLink | None:
    try:
        return share_list(project=project).filter(pk=link_id).first()
    except (ValueError, TypeError):
        return None


def is_active(link: ShareLink) -> bool:
    return link.revoked_at is None and link.expires_at > timezone.now()


def share_resolve(token: str) -> ShareLink | None:
    """The live link of a token, else None (unknown, expired, revoked, sharing off: all alike)."""
    if not token or len(token) > 100:
        return None
    with unscoped():  # the token is the authority here; the caller enters the link's project scope
        link = ShareLink.objects.select_related("project", "session").filter(token_hash=_digest(token)).first()
    if link is None or not is_active(link) or not link.project.sharing_enabled:
        return None
    return link
