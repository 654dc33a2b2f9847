"""Device login (``sessionledger login``) without pasting secrets, after RFC 8628's shape."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from projects.errors import DomainError
from projects.models import DeviceGrant, User
from projects.services import token_create
from projects.tokens import hash_secret

LIFETIME = timedelta(minutes=10)
POLL_INTERVAL_SECONDS = 2
USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ"  # no vowels: no accidental words; no 0/O 1/I confusion


@dataclass(frozen=True)
class DeviceStart:
    device_code: str
    user_code: str
    expires_in: int


def _user_code() -> str:
    letters = "".join(secrets.choice(USER_CODE_ALPHABET) for _ in range(8))
    return f"{letters[:4]}-{letters[4:]}"


def device_start(*, client_name: str = "") -> DeviceStart:
    device_code = secrets.token_urlsafe(32)
    DeviceGrant.objects.create(
        device_code_hash=hash_secret(device_code),
        user_code=_user_code(),
        client_name=client_name[:200],
        expires_at=timezone.now() + LIFETIME,
    )
    grant = DeviceGrant.objects.get(device_code_hash=hash_secret(device_code))
    return DeviceStart(device_code, grant.user_code, int(LIFETIME.total_seconds()))


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


def device_decide(*, grant: DeviceGrant, user: User, approve: bool) -> None:
    if approve:
        grant.approved_by = user
    else:
        grant.denied_at = timezone.now()
    grant.save(update_fields=["approved_by", "denied_at"])


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
    _, secret = token_create(user=grant.approved_by, name=f"sessionledger CLI {grant.client_name}".strip())
    return secret
