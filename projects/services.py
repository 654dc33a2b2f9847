"""Writes for projects, members, invitations and tokens (keyword-only, typed)."""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from datetime import timedelta

from django.core.validators import slug_re
from django.db import IntegrityError, transaction
from django.utils import timezone

from projects.errors import DomainError
from projects.models import ApiToken, Invitation, Membership, Project, Role, Scope, User
from projects.tokens import display_prefix, hash_secret, new_secret
from sessionledger.gitmeta import normalise_remote

INVITATION_DAYS = 7


def user_create(*, email: str, password: str | None = None, staff: bool = False) -> User:
    if User.objects.filter(email__iexact=email).exists():
        raise DomainError("exists", f"A user with e-mail {email} already exists.", field="email", status_code=409)
    return User.objects.create_user(email, password, is_staff=staff, is_superuser=staff)


def project_create(*, slug: str, name: str = "", repo: str | None = None, admin: User | None = None) -> Project:
    if not slug_re.fullmatch(slug) or len(slug) > Project._meta.get_field("slug").max_length:
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
        if admin is not None:
            Membership.objects.create(project=project, user=admin, role=Role.ADMIN)
    return project


def normalise_repo(remote: str) -> str:
    """``git@github.com:acme/api.git`` or ``https://github.com/acme/api`` → ``github.com/acme/api``.

    The client keys its remote → project cache the same way: one function, in the client package.
    """
    return normalise_remote(remote)


def membership_add(*, project: Project, user: User, role: str) -> Membership:
    try:
        with transaction.atomic():
            return Membership.objects.create(project=project, user=user, role=Role(role))
    except IntegrityError:
        raise DomainError("exists", f"{user.email} is already a member.", field="email", status_code=409) from None


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
    membership.role = new_role
    membership.save(update_fields=["role"])
    return membership


@transaction.atomic
def membership_remove(*, membership: Membership) -> None:
    if membership.role == Role.ADMIN:
        _ensure_not_last_admin(membership)
    membership.delete()


def invitation_create(*, project: Project, email: str, role: str, invited_by: User | None) -> Invitation:
    email = email.strip().lower()
    if Membership.objects.filter(project=project, user__email__iexact=email).exists():
        raise DomainError("exists", f"{email} is already a member.", field="email", status_code=409)
    return Invitation.objects.create(
        project=project,
        email=email,
        role=Role(role),
        invited_by=invited_by,
        token=secrets.token_urlsafe(32),
        expires_at=timezone.now() + timedelta(days=INVITATION_DAYS),
    )


def invitation_revoke(*, invitation: Invitation) -> None:
    if invitation.accepted_at is None and invitation.revoked_at is None:
        invitation.revoked_at = timezone.now()
        invitation.save(update_fields=["revoked_at"])


@transaction.atomic
def invitation_accept(*, invitation: Invitation, user: User) -> Membership:
    if not invitation.is_open:
        raise DomainError("invitation_closed", "This invitation has expired, was revoked or was already used.")
    if invitation.email.lower() != user.email.lower():
        raise DomainError(
            "wrong_user", f"This invitation is for {invitation.email}; log in with that address.", status_code=403
        )
    membership, _ = Membership.objects.get_or_create(
        project=invitation.project, user=user, defaults={"role": invitation.role}
    )
    invitation.accepted_at = timezone.now()
    invitation.save(update_fields=["accepted_at"])
    return membership


def token_create(
    *,
    user: User,
    name: str,
    project: Project | None = None,
    scopes: Iterable[str] = (Scope.READ, Scope.WRITE),
    expires_days: int | None = None,
) -> tuple[ApiToken, str]:
    """Create a token; returns it with its secret, which is never stored or shown again."""
    try:
        scope_list = sorted({Scope(s.strip()).value for s in scopes})
    except ValueError:
        raise DomainError("invalid", "Scopes must be read and/or write.", field="scopes") from None
    secret = new_secret()
    expires_at = timezone.now() + timedelta(days=expires_days) if expires_days else None
    token = ApiToken.objects.create(
        user=user,
        name=name,
        prefix=display_prefix(secret),
        secret_hash=hash_secret(secret),
        project=project,
        scopes=scope_list,
        expires_at=expires_at,
    )
    return token, secret


def token_revoke(*, token: ApiToken) -> None:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
