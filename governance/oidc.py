"""OpenID Connect with a ``nonce`` (docs/security.md "Single sign-on").

allauth's ``openid_connect`` provider neither sends a nonce nor checks one. This subclass, installed
through allauth's ``provider_class`` setting (config/settings.py), adds a fresh random nonce to each
authorization request and keeps it in the login's state (server-side session); ``nonce_matches``,
called by ``governance.adapters.SocialAccountAdapter.pre_social_login``, refuses an ID token whose
``nonce`` claim is not that one (OpenID Connect Core 3.1.3.7, step 11), so a code or an ID token
issued for another login cannot complete this one.
"""

from __future__ import annotations

import hmac
import secrets
from typing import Any

from allauth.socialaccount.models import SocialLogin
from allauth.socialaccount.providers.openid_connect.provider import OpenIDConnectProvider
from django.http import HttpRequest, HttpResponse


class NonceOpenIDConnectProvider(OpenIDConnectProvider):  # type: ignore[misc, unused-ignore]  # allauth is untyped
    package = "allauth.socialaccount.providers.openid_connect"  # its URLs and views stay allauth's

    def redirect(
        self, request: HttpRequest, process: Any, next_url: Any = None, data: Any = None, **kwargs: Any
    ) -> HttpResponse:
        nonce = secrets.token_urlsafe(32)
        auth_params = kwargs.pop("auth_params", None)
        # Set last, so a request's own ?auth_params= cannot choose it.
        auth_params = {**(self.get_auth_params() if auth_params is None else auth_params), "nonce": nonce}
        response: HttpResponse = super().redirect(
            request, process, next_url, data, auth_params=auth_params, nonce=nonce, **kwargs
        )
        return response


def nonce_matches(sociallogin: SocialLogin) -> bool:
    """Whether the ID token carries the nonce this login sent; no ID token, or no nonce, is no match."""
    expected = (sociallogin.state or {}).get("nonce")
    claims = (sociallogin.account.extra_data or {}).get("id_token") or {}
    received = claims.get("nonce") if isinstance(claims, dict) else None
    if not isinstance(expected, str) or not isinstance(received, str):
        return False
    return hmac.compare_digest(expected.encode(), received.encode())
