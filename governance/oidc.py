"""OpenID Connect with a ``nonce`` (docs/security.md "Single sign-on").

allauth's ``openid_connect`` provider neither sends a nonce nor checks one. This subclass, installed
through allauth's ``provider_class`` setting (config/settings.py), adds a fresh random nonce to each
authorization request and keeps it in the login's state (server-side session); ``nonce_matches``,
called by ``governance.adapters.SocialAccountAdapter.pre_social_login``, refuses an ID token whose
``nonce`` claim is not that one (OpenID Connect Core 3.1.3.7, step 11), so a code or an ID token
issued for another login cannot complete this one.

Per provider (its entry in SESSIONLEDGER_OIDC_PROVIDERS, docs/identity.md), ``address_proven`` says
which claim proves the address, and the adapter keeps what RP-initiated logout needs (``EndSession``).
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from allauth.account.models import EmailAddress
from allauth.core.internal.datakit import parse_bool_safely
from allauth.socialaccount.models import SocialApp, SocialLogin
from allauth.socialaccount.providers.oauth2.views import OAuth2CallbackView
from allauth.socialaccount.providers.openid_connect.provider import OpenIDConnectProvider
from allauth.socialaccount.providers.openid_connect.views import OpenIDConnectOAuth2Adapter
from django.contrib.auth.decorators import login_not_required
from django.http import Http404, HttpRequest, HttpResponse


class PolicyOpenIDConnectOAuth2Adapter(OpenIDConnectOAuth2Adapter):  # type: ignore[misc, unused-ignore]  # allauth is untyped
    def complete_login(self, request: HttpRequest, app: Any, token: Any, **kwargs: Any) -> SocialLogin:
        """Keeps, on the request, what RP-initiated logout will need: the raw ID token (the
        ``id_token_hint``) and the provider's ``end_session_endpoint``; governance/sessions.py moves it
        into the browser session once the sign-in succeeds. allauth itself keeps only the decoded claims."""
        login: SocialLogin = super().complete_login(request, app, token, **kwargs)
        raw = kwargs["response"].get("id_token")
        endpoint = self.openid_config.get("end_session_endpoint")
        if isinstance(raw, str) and isinstance(endpoint, str) and app.settings.get("end_session", True):
            request.sso_logout = EndSession(  # type: ignore[attr-defined]
                provider=self.provider_id, endpoint=endpoint, id_token=raw, client_id=app.client_id
            )
        return login


@login_not_required
def callback(request: HttpRequest, provider_id: str) -> HttpResponse:
    """allauth's ``openid_connect`` callback view, through ``PolicyOpenIDConnectOAuth2Adapter``."""
    try:
        view = OAuth2CallbackView.adapter_view(PolicyOpenIDConnectOAuth2Adapter(request, provider_id))
        response: HttpResponse = view(request)
    except SocialApp.DoesNotExist:
        raise Http404 from None
    return response


class NonceOpenIDConnectProvider(OpenIDConnectProvider):  # type: ignore[misc, unused-ignore]  # allauth is untyped
    # allauth's URLs and views, but for the callback (``callback`` below): governance/openid_connect/urls.py
    package = "governance.openid_connect"
    oauth2_adapter_class = PolicyOpenIDConnectOAuth2Adapter

    def extract_email_addresses(self, data: dict[str, Any]) -> list[EmailAddress]:
        """The provider's address, verified only as this provider's policy says (``address_proven``)."""
        addresses: list[EmailAddress] = super().extract_email_addresses(data)
        for address in addresses:
            address.verified = address_proven(self.app.settings, data, str(address.email))
        return addresses

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


@dataclass(frozen=True)
class EndSession:
    """What ends the provider's session (OpenID Connect RP-Initiated Logout 1.0)."""

    provider: str
    endpoint: str
    id_token: str
    client_id: str

    def url(self, post_logout_redirect_uri: str) -> str:
        params = {
            "id_token_hint": self.id_token,
            "client_id": self.client_id,
            "post_logout_redirect_uri": post_logout_redirect_uri,
        }
        parts = urlsplit(self.endpoint)
        query = f"{parts.query}&{urlencode(params)}" if parts.query else urlencode(params)
        return urlunsplit(parts._replace(query=query))


def address_proven(settings: dict[str, Any], data: dict[str, Any], email: str) -> bool:
    """Whether the provider's answer proves that ``email`` is its holder's, by the provider's policy
    (its ``trust_email`` and ``email_verified_claim`` settings; docs/identity.md). The claim is looked
    for in userinfo, then in the ID token (Entra ID puts its optional claims only there). A boolean
    claim (``email_verified``, ``xms_edov``) proves it when true; a list or string (Entra ID's
    ``verified_primary_email``) when it holds the address."""
    if settings.get("trust_email"):
        return True
    name = settings.get("email_verified_claim") or "email_verified"
    for source in (data.get("userinfo"), data.get("id_token")):
        if not isinstance(source, dict) or name not in source:
            continue
        value = source[name]
        if isinstance(value, list):
            return any(isinstance(item, str) and item.strip().lower() == email.strip().lower() for item in value)
        if isinstance(value, str) and "@" in value:
            return value.strip().lower() == email.strip().lower()
        return bool(parse_bool_safely(value))
    return False
