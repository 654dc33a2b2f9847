"""``Authorization: Bearer slp_…`` authentication for the REST API."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from projects.models import ApiToken
from projects.tokens import hash_secret, longest_expiry

# Where ProjectAPIView leaves the token it read with the project and the membership
# (projects.access.caller_by_token), so that authentication does not read it a second time.
PREFETCHED = "_sessionledger_token"

# Writing last_used_at on every request would turn each read into a write; a minute is plenty.
LAST_USED_RESOLUTION = timedelta(minutes=1)


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[object, ApiToken] | None:
        secret = bearer_secret(request)
        if secret is None:
            return None
        return self._authenticate_secret(secret, request)

    def _authenticate_secret(self, secret: str, request: Request | None = None) -> tuple[object, ApiToken]:
        if not secret:
            raise exceptions.AuthenticationFailed("The Authorization header has no token.")
        secret_hash = hash_secret(secret)
        found = getattr(request, PREFETCHED, None)
        if isinstance(found, ApiToken) and found.secret_hash == secret_hash:
            token: ApiToken | None = found
        else:
            token = ApiToken.objects.select_related("user").filter(secret_hash=secret_hash).first()
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid token.")
        if token.revoked_at is not None:
            raise exceptions.AuthenticationFailed("This token has been revoked.")
        now = timezone.now()
        cap = longest_expiry(token.created_at)
        if (token.expires_at is not None and token.expires_at <= now) or (cap is not None and cap <= now):
            raise exceptions.AuthenticationFailed("This token has expired; create a new one or log in again.")
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("This account is disabled.")
        _touch(token)
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return f'{self.keyword} realm="api"'


def bearer_secret(request: Request | HttpRequest) -> str | None:
    """The secret of an ``Authorization: Bearer …`` header ('' when the header has no token), else None."""
    header = authentication.get_authorization_header(request).decode("latin-1")  # type: ignore[arg-type]  # META only
    if not header:
        return None
    keyword, _, secret = header.partition(" ")
    if keyword.lower() != BearerTokenAuthentication.keyword.lower():
        return None
    return secret.strip()


def _touch(token: ApiToken) -> None:
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
        # Skipped while another request holds the row: that one is writing it. Waiting would queue every
        # request of the token behind a transaction that may itself wait on a slow bucket (the project's
        # views run in one transaction), until the statement timeout answers them all 503.
        unlocked = ApiToken.objects.filter(pk=token.pk).select_for_update(skip_locked=True).values("pk")
        with transaction.atomic():  # a lock needs a transaction: staff views run outside the project's
            ApiToken.objects.filter(pk__in=unlocked).update(last_used_at=now)
        token.last_used_at = now


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """Documents ``BearerTokenAuthentication`` in /api/v1/docs, so Swagger UI's *Authorize* takes a token.

    drf-spectacular registers an extension when its class is defined: DRF imports this module to
    authenticate, before any schema is generated."""

    target_class = BearerTokenAuthentication
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An API token: `sessionledger login`, the settings page or `manage.py create_token`.",
        }
