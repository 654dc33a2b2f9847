"""Writes for projects, members, invitations and tokens (keyword-only, typed)."""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.core.validators import slug_re
from django.db import IntegrityError, transaction
from django.utils import timezone

from projects import audit_trail
from projects.addresses import address_verified, address_vouch
from projects.errors import DomainError
from projects.models import ApiToken, Invitation, Membership, Project, Role, Scope, User
from projects.scoping import unscoped
from projects.tokens import display_prefix, hash_secret, longest_expiry, new_secret
from sessionledger.core.remotes import normalise_remote

INVITATION_DAYS = 7


def user_create(*, email: str, password: str | None = None, staff: bool = False) -> User:
    exists = DomainError("exists", f"A user with e-mail {email} already exists.", field="email", status_code=409)
    if User.objects.filter(email__iexact=email).exists():
        raise exists
    try:
        with transaction.atomic():
            user = User.objects.create_user(email, password, is_staff=staff, is_superuser=staff)
            address_vouch(user=user)
    except IntegrityError as exc:  # created by a concurrent request since the check (two SCIM pushes)
        raise exists from exc
    return user


def project_create(*, slug: str, name: str = "", repo: str | None = None, admin: User | None = None) -> Project:
    if not slug_re.fullmatch(slug) or len(slug) > (Project._meta.get_field("slug").max_length or 0):
        raise DomainError(
            "invalid", f"{slug!r} is not a valid slug: use letters, digits, - and _ (at most 64).", field="slug"
        )
    if Project.objects.filter(slug=slug).exists():
        raise DomainError("exists", f"A project with slug {slug!r} already exists.", field="slug", status_code=409)
    repo = normalise_repo(repo) if repo else None
    if repo and (owner := Project.objects.filter(repo=repo).first()) is not None:
        raise DomainError(
            "exists", f"Project {owner.slug!r} already has the repository {repo}.", field="repo", status_code=409
        )
    with transaction.atomic():
        project = Project.objects.create(slug=slug, name=name or slug, repo=repo)
        audit_trail.record(kind="project.created", project=project, target=project.slug)
        if admin is not None:
            Membership.objects.create(project=project, user=admin, role=Role.ADMIN)
    return project


PROJECT_EDITABLE = ("name", "retention_days")


def project_update(*, project: Project, **changes: Any) -> Project:
    """Change what an admin may change: the name and how long sessions are kept (``None`` = forever).

    The one write of these fields, for the API and the settings page alike; the hourly retention
    task (``sessions_app.retention``) applies a shortened retention at its next run.
    """
    if unknown := set(changes) - set(PROJECT_EDITABLE):
        raise TypeError(f"not editable: {sorted(unknown)}")
    changed = {field: value for field, value in changes.items() if getattr(project, field) != value}
    for field, value in changed.items():
        setattr(project, field, value)
    if changed:
        project.save(update_fields=list(changed))
        audit_trail.record(kind="project.settings_changed", project=project, target=project.slug, detail=changed)
    return project


def project_archive(*, project: Project, archived: bool) -> Project:
    """Archive (read-only: uploads are refused) or unarchive a project."""
    if (project.archived_at is not None) != archived:
        project.archived_at = timezone.now() if archived else None
        project.save(update_fields=["archived_at"])
        audit_trail.record(kind="project.archived", project=project, target=project.slug, detail={"archived": archived})
    return project


def normalise_repo(remote: str) -> str:
    """``git@github.com:acme/api.git`` or ``https://github.com/acme/api`` → ``github.com/acme/api``.

    The client keys its remote → project cache the same way: one function, in the client package.
    """
    return normalise_remote(remote)


def membership_add(*, project: Project, user: User, role: str) -> Membership:
    try:
        with transaction.atomic():
            membership = Membership.objects.create(project=project, user=user, role=Role(role))
            audit_trail.record(kind="membership.added", project=project, target=user.email, detail={"role": role})
            return membership
    except IntegrityError:
        raise DomainError("exists", f"{user.email} is already a member.", field="email", status_code=409) from None


def membership_add_verified(*, project: Project, user: User, role: str) -> Membership:
    """Add a user by their address (``manage.py add_member``): only once they have verified it."""
    if not address_verified(user=user, email=user.email):
        raise DomainError(
            "unverified_email",
            f"{user.email} has not been verified by its owner; send an invitation instead.",
            field="email",
        )
    return membership_add(project=project, user=user, role=role)


def _lock_admins(project: Project) -> list[int]:
    return list(
        Membership.objects.select_for_update().filter(project=project, role=Role.ADMIN).values_list("pk", flat=True)
    )


def _ensure_not_last_admin(membership: Membership) -> None:
    admins = _lock_admins(membership.project)
    if admins == [membership.pk]:
        raise DomainError(
            "last_admin", "A project needs at least one admin; make someone else admin first.", field="role"
        )


@transaction.atomic
def membership_change_role(*, membership: Membership, role: str) -> Membership:
    new_role = Role(role)
    if membership.role == Role.ADMIN and new_role != Role.ADMIN:
        _ensure_not_last_admin(membership)
    if membership.role != new_role:
        audit_trail.record(
            kind="membership.role_changed",
            project=membership.project,
            target=membership.user.email,
            detail={"from": membership.role, "to": new_role.value},
        )
    membership.role = new_role
    membership.save(update_fields=["role"])
    return membership


@transaction.atomic
def membership_remove(*, membership: Membership) -> None:
    if membership.role == Role.ADMIN:
        _ensure_not_last_admin(membership)
    membership.delete()
    audit_trail.record(kind="membership.removed", project=membership.project, target=membership.user.email)


def invitation_create(*, project: Project, email: str, role: str, invited_by: User | None) -> Invitation:
    email = email.strip().lower()
    if Membership.objects.filter(project=project, user__email__iexact=email).exists():
        raise DomainError("exists", f"{email} is already a member.", field="email", status_code=409)
    invitation = Invitation.objects.create(
        project=project,
        email=email,
        role=Role(role),
        invited_by=invited_by,
        token=secrets.token_urlsafe(32),
        expires_at=timezone.now() + timedelta(days=INVITATION_DAYS),
    )
    audit_trail.record(kind="invitation.created", project=project, target=email, detail={"role": role})
    return invitation


def invitation_revoke(*, invitation: Invitation) -> None:
    if invitation.accepted_at is None and invitation.revoked_at is None:
        invitation.revoked_at = timezone.now()
        invitation.save(update_fields=["revoked_at"])
        audit_trail.record(kind="invitation.revoked", project=invitation.project, target=invitation.email)


def invitations_revoke(*, sent_by: User) -> int:
    """Revoke every pending invitation ``sent_by`` sent, in every project (offboarding, erasure): an
    invitation admits with its sender's authority, which ends with them. Returns how many."""
    with unscoped():
        pending = Invitation.objects.filter(invited_by=sent_by, accepted_at__isnull=True, revoked_at__isnull=True)
        revoked: int = pending.update(revoked_at=timezone.now())
    return revoked


def invitation_inviter_can_admit(*, invitation: Invitation) -> bool:
    """Whether the invitation's sender still holds what sending it needed: an active account and the admin
    role in its project, now. Offboarding revokes a leaving admin's invitations; this also refuses one
    whose sender was demoted, or deactivated by a path that skipped offboarding."""
    admits: bool = Membership.objects.filter(
        project_id=invitation.project_id, user_id=invitation.invited_by_id, user__is_active=True, role=Role.ADMIN
    ).exists()
    return admits


INVITER_GONE = (
    "This invitation is no longer valid: the person who sent it is no longer an admin of {project}. "
    "Ask one of its admins to invite you again."
)


@transaction.atomic
def invitation_accept(*, invitation: Invitation, user: User) -> Membership:
    if not invitation.is_open:
        raise DomainError("invitation_closed", "This invitation has expired, was revoked or was already used.")
    if not invitation_inviter_can_admit(invitation=invitation):
        raise DomainError("inviter_gone", INVITER_GONE.format(project=invitation.project.name), status_code=403)
    if invitation.email.lower() != user.email.lower():
        raise DomainError(
            "wrong_user", f"This invitation is for {invitation.email}; log in with that address.", status_code=403
        )
    if not address_verified(user=user, email=invitation.email):
        raise DomainError(
            "unverified_email",
            f"Verify {invitation.email} first: follow the link in the verification e-mail (Account › E-mail), "
            "then accept the invitation again.",
            status_code=403,
        )
    membership, _ = Membership.objects.get_or_create(
        project=invitation.project, user=user, defaults={"role": invitation.role}
    )
    invitation.accepted_at = timezone.now()
    invitation.save(update_fields=["accepted_at"])
    audit_trail.record(
        kind="invitation.accepted", project=invitation.project, target=user.email, detail={"role": membership.role}
    )
    return membership


DEFAULT_SCOPES = (Scope.READ, Scope.WRITE)


def _scope_list(scopes: Iterable[str]) -> list[str]:
    try:
        return sorted({Scope(s.strip()).value for s in scopes})
    except ValueError:
        raise DomainError("invalid", "Scopes must be read and/or write.", field="scopes") from None


def token_create(
    *,
    user: User,
    name: str,
    project: Project | None = None,
    scopes: Iterable[str] = DEFAULT_SCOPES,
    expires_days: int | None = None,
    expires_at: datetime | None = None,
    parent: ApiToken | None = None,
) -> tuple[ApiToken, str]:
    """Create a token; returns it with its secret, which is never stored or shown again."""
    scope_list = _scope_list(scopes)
    secret = new_secret()
    now = timezone.now()
    if expires_days:
        expires_at = now + timedelta(days=expires_days)
    cap = longest_expiry(now)
    if cap is not None:  # asking for longer, or for no expiry, gets the longest allowed
        expires_at = min(expires_at, cap) if expires_at else cap
    token = ApiToken.objects.create(
        user=user,
        name=name,
        prefix=display_prefix(secret),
        secret_hash=hash_secret(secret),
        project=project,
        scopes=scope_list,
        expires_at=expires_at,
        parent=parent,
    )
    audit_trail.record(  # the name and the displayed prefix; never the secret or its hash
        kind="token.created",
        project=project,
        target=user.email,
        detail={
            "name": name,
            "prefix": token.prefix,
            "scopes": scope_list,
            "expires_at": expires_at.isoformat() if expires_at else None,
        },
    )
    return token, secret


def _exceeds_parent(message: str, field: str) -> DomainError:
    return DomainError("exceeds_parent", message, field=field, status_code=403)


def _child_scopes(parent: ApiToken, scopes: Iterable[str] | None) -> list[str]:
    allowed = set(parent.scopes or [])
    wanted = _scope_list(scopes) if scopes is not None else sorted(allowed)
    if not set(wanted) <= allowed:
        have = ", ".join(sorted(allowed)) or "no scope"
        raise _exceeds_parent(f"This token has {have}; a token it creates cannot have more.", "scopes")
    return wanted


def _child_expiry(parent: ApiToken, expires_days: int | None) -> datetime | None:
    """The requested expiry, cut to the parent's: asking for longer gets exactly as long as the parent."""
    wanted = timezone.now() + timedelta(days=expires_days) if expires_days else None
    if parent.expires_at is None:
        return wanted
    return min(wanted, parent.expires_at) if wanted else parent.expires_at


def token_mint(
    *,
    user: User,
    parent: ApiToken | None,
    name: str,
    project: Project | None,
    scopes: Iterable[str] | None = None,
    expires_days: int | None = None,
) -> tuple[ApiToken, str]:
    """A token created through the API. Created with another token (``parent``), it can neither outlive it
    (expires no later) nor outrank it (no scope or project it lacks), so a leaked short-lived or read-only
    token cannot be turned into a lasting one. Without a parent (a browser session) the user's own rights
    are the bound, as for every token."""
    if parent is None:
        return token_create(
            user=user, name=name, project=project, scopes=scopes or DEFAULT_SCOPES, expires_days=expires_days
        )
    if parent.project_id is not None and (project is None or project.pk != parent.project_id):
        raise _exceeds_parent("This token is restricted to one project; so is every token it creates.", "project")
    return token_create(
        user=user,
        name=name,
        project=project,
        scopes=_child_scopes(parent, scopes),
        expires_at=_child_expiry(parent, expires_days),
        parent=parent,
    )


@transaction.atomic
def token_revoke(*, token: ApiToken) -> None:
    """Revoke the token and every token created with it, and with those, down the line: a leaked token
    revoked must not leave working the tokens its holder minted with it."""
    now = timezone.now()
    live = token.revoked_at is None
    if live:
        token.revoked_at = now
        token.save(update_fields=["revoked_at"])
    generation, descendants = [token.pk], 0
    while generation:  # one query per generation; a token is created after its parent, so no cycle
        children = ApiToken.objects.filter(parent_id__in=generation)
        generation = list(children.values_list("pk", flat=True))
        descendants += children.filter(revoked_at__isnull=True).update(revoked_at=now)
    if live or descendants:
        audit_trail.record(
            kind="token.revoked",
            project=token.project,
            target=token.user.email,
            detail={"name": token.name, "prefix": token.prefix, "children_revoked": descendants},
        )
