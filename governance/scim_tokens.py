"""SCIM bearer tokens that rotate without a restart (docs/identity.md "Rotating the SCIM token").

``SESSIONLEDGER_SCIM_TOKEN`` keeps working as before; beside it staff create tokens
(``manage.py scim_token create``, Django admin) that are stored as their SHA-256 only, and revoke
them when the identity provider has the new one: during a rotation both are valid.
"""

from __future__ import annotations

import hmac
import secrets

from django.conf import settings
from django.utils import timezone

from governance.models import ScimToken
from projects import audit_trail
from projects.tokens import hash_secret

SCIM_TOKEN_PREFIX = "slscim_"


def scim_token_create(*, name: str) -> tuple[ScimToken, str]:
    """A new token and its secret, which is shown once and never stored."""
    secret = SCIM_TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ScimToken.objects.create(name=name, secret_hash=hash_secret(secret), prefix=secret[:12])
    audit_trail.record(kind="scim_token.created", target=token.name, detail={"prefix": token.prefix})
    return token, secret


def scim_token_revoke(*, token: ScimToken) -> None:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        audit_trail.record(kind="scim_token.revoked", target=token.name, detail={"prefix": token.prefix})


def scim_token_valid(given: str | None) -> bool:
    if not given:
        return False
    expected = settings.SESSIONLEDGER_SCIM_TOKEN
    if expected and hmac.compare_digest(given.encode(), expected.encode()):
        return True
    # looked up by its hash: a 256-bit secret's SHA-256 reveals nothing through timing
    found = ScimToken.objects.filter(secret_hash=hash_secret(given), revoked_at__isnull=True).update(
        last_used_at=timezone.now()
    )
    return found == 1
