"""Device login (``sessionledger login``) without pasting secrets, after RFC 8628's shape.

Device login is a phishing target: whoever starts it chooses what the approval page says. So the
requester's claims (client name) are shown as unverified text with where and when the request
started; the user types the code their terminal shows (a link never approves anything); code
lookups are budgeted per user and per address; and the token minted is restricted to the requested
project and expires (``SESSIONLEDGER_DEVICE_TOKEN_DAYS``). Used and long-expired grants are purged
whenever a login starts. See docs/security.md.
"""

from __future__ import annotations

import ipaddress
import secrets
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from projects import audit_trail, limits
from projects.errors import DomainError
from projects.models import DeviceGrant, Project, User
from projects.selectors import project_list
from projects.services import DEFAULT_SCOPES, token_create
from projects.tokens import hash_secret

LIFETIME = timedelta(minutes=10)
PURGE_AFTER = timedelta(hours=1)  # after expiry: long enough for a late poll to hear "expired"
POLL_INTERVAL_SECONDS = 2
USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ"  # no vowels: no accidental words; no 0/O 1/I confusion
TOKEN_NAME_LENGTH = 100


@dataclass(frozen=True)
class DeviceStart:
    device_code: str
    user_code: str
    expires_in: int


@dataclass(frozen=True)
class Requester:
    """Where a device login came from, as the server saw it."""

    ip: str
    user_agent: str


def _user_code() -> str:
    letters = "".join(secrets.choice(USER_CODE_ALPHABET) for _ in range(8))
    return f"{letters[:4]}-{letters[4:]}"


def plain_text(value: str, limit: int) -> str:
    """Claimed text without control or format characters (no bidi overrides, no zero-width tricks)."""
    kept = (c for c in value[: limit * 2] if unicodedata.category(c) not in {"Cc", "Cf"})
    return " ".join("".join(kept).split())[:limit]


def _ip_or_none(value: str) -> str | None:
    try:
        return str(ipaddress.ip_address(value.strip()))
    except ValueError:
        return None


def device_grants_purge() -> int:
    """Delete used grants and those expired for a while; returns how many went."""
    stale = Q(consumed_at__isnull=False) | Q(expires_at__lte=timezone.now() - PURGE_AFTER)
    deleted, _ = DeviceGrant.objects.filter(stale).delete()
    return deleted


def device_start(
    *,
    client_name: str = "",
    project: str = "",
    scopes: Iterable[str] = DEFAULT_SCOPES,
    requester: Requester | None = None,
) -> DeviceStart:
    device_grants_purge()
    device_code = secrets.token_urlsafe(32)
    grant = DeviceGrant.objects.create(
        device_code_hash=hash_secret(device_code),
        user_code=_user_code(),
        client_name=plain_text(client_name, 200),
        requested_project=project,
        scopes=sorted({str(s) for s in scopes}),
        requested_ip=_ip_or_none(requester.ip) if requester else None,
        requested_user_agent=plain_text(requester.user_agent, 300) if requester else "",
        expires_at=timezone.now() + LIFETIME,
    )
    return DeviceStart(device_code, grant.user_code, int(LIFETIME.total_seconds()))


def device_code_attempt(*, user: User, ip: str) -> None:
    """Count one code entry or decision against the user and the address (429 DomainError when spent)."""
    limits.spend(
        scope="device-code", rate_setting="SESSIONLEDGER_DEVICE_CODE_RATE", idents=[f"user:{user.pk}", f"ip:{ip}"]
    )


def device_grant_for_user_code(user_code: str) -> DeviceGrant | None:
    code = user_code.strip().upper().replace(" ", "")
    if len(code) == 8:
        code = f"{code[:4]}-{code[4:]}"
    return DeviceGrant.objects.filter(
        user_code=code,
        expires_at__gt=timezone.now(),
        consumed_at__isnull=True,
        denied_at__isnull=True,
        approved_by__isnull=True,
    ).first()


def device_grant_project(*, grant: DeviceGrant, user: User) -> Project | None:
    """The project the token will be restricted to; DomainError when it is not one of the user's."""
    if not grant.requested_project:
        return None
    project = project_list(user=user).filter(slug=grant.requested_project).first()
    if project is None:
        raise DomainError(
            "not_found", f"You are not a member of a project named “{grant.requested_project}”.", field="project"
        )
    return project


def device_decide(*, grant: DeviceGrant, user: User, approve: bool) -> None:
    if approve:
        grant.project = device_grant_project(grant=grant, user=user)
        grant.approved_by = user
    else:
        grant.denied_at = timezone.now()
    grant.save(update_fields=["approved_by", "project", "denied_at"])
    audit_trail.record(
        kind="device.approved" if approve else "device.denied",
        project=grant.project,
        target=user.email,
        detail={"user_code": grant.user_code, "scopes": grant.scopes, "requested_ip": grant.requested_ip},
    )


def _mint(grant: DeviceGrant) -> str:
    name = plain_text(f"sessionledger CLI {grant.client_name}", TOKEN_NAME_LENGTH)
    _, secret = token_create(
        user=grant.approved_by,  # type: ignore[arg-type]
        name=name,
        project=grant.project,
        scopes=grant.scopes or DEFAULT_SCOPES,
        expires_days=settings.SESSIONLEDGER_DEVICE_TOKEN_DAYS,
    )
    return secret


@transaction.atomic
def device_poll(*, device_code: str) -> str:
    """The token secret once approved; DomainError with an RFC 8628 error code otherwise."""
    grant = DeviceGrant.objects.select_for_update().filter(device_code_hash=hash_secret(device_code)).first()
    if grant is None or grant.consumed_at is not None:
        raise DomainError("invalid_grant", "Unknown or already used device code; run `sessionledger login` again.")
    if grant.denied_at is not None:
        raise DomainError("access_denied", "The sign-in was denied in the browser.", status_code=403)
    if grant.expires_at <= timezone.now():
        raise DomainError("expired_token", "The sign-in code expired; run `sessionledger login` again.")
    if grant.approved_by is None:
        raise DomainError("authorization_pending", "Waiting for approval in the browser.", status_code=428)
    grant.consumed_at = timezone.now()
    grant.save(update_fields=["consumed_at"])
    secret = _mint(grant)
    user = grant.approved_by
    # The CLI's sign-in (docs/security.md "Audit trail"): the request is anonymous, the person approved it.
    audit_trail.record(kind="auth.login", actor=user, target=user.email, detail={"method": "device"})
    return secret
