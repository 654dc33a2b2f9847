"""A real OpenID Provider for the SSO tests: oidc-provider-mock (Authlib) in a second process.

It serves discovery, JWKS, the authorization endpoint (a form where the test types the subject), the
token endpoint (code + PKCE, signed ID tokens) and userinfo on a free loopback port. Clients must
register (``--require-registration``), so the client secret and redirect URI are really checked.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest
from django.test import Client

PROVIDER_ID = "testop"


@dataclass(frozen=True)
class Provider:
    url: str

    def call(self, method: str, path: str, body: Any) -> Any:
        request = urllib.request.Request(
            self.url + path, data=json.dumps(body).encode(), method=method, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            text = response.read()
        return json.loads(text) if text else None

    def register(self, redirect_uri: str) -> dict[str, Any]:
        """allauth sends the secret in the body when the provider offers both methods."""
        return dict(
            self.call(
                "POST",
                "/oauth2/clients",
                {"redirect_uris": [redirect_uri], "token_endpoint_auth_method": "client_secret_post"},
            )
        )

    def set_user(self, sub: str, email: str, *, verified: bool = True) -> None:
        self.set_claims(sub, {"email": email, "email_verified": verified})

    def set_claims(self, sub: str, claims: dict[str, Any]) -> None:
        """Exactly these claims (beside ``sub``), in the ID token and userinfo: a standard one only
        when its scope is asked for (``email`` for ``email_verified``), any other always."""
        self.call("PUT", f"/users/{sub}", claims)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):  # the callback is for the test client, not for urllib
        return None


def authorize(url: str, sub: str) -> str:
    """Approve as ``sub`` on the provider's form; returns the redirect back to us (code and state)."""
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        opener.open(urllib.request.Request(url, data=urlencode({"sub": sub}).encode()), timeout=10)
    except urllib.error.HTTPError as answer:
        assert answer.code == 302, answer.read()
        return str(answer.headers["Location"])
    raise AssertionError("the provider did not redirect back")


def sso_sign_in(provider: Provider, sub: str, email: str, browser: Client | None = None) -> Client:
    """A whole sign-in through the provider as ``sub`` with ``email``: the browser, signed in."""
    provider.set_user(sub, email)
    browser = browser or Client()
    started = browser.post(f"/accounts/oidc/{PROVIDER_ID}/login/")
    back = urlsplit(authorize(started["Location"], sub))
    response = browser.get(f"{back.path}?{back.query}")
    assert response.status_code == 302, response.content
    return browser


@pytest.fixture(scope="session")
def oidc_provider() -> Iterator[Provider]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "oidc_provider_mock", "--port", str(port), "--require-registration"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):  # readiness: until discovery answers or the process died
            if process.poll() is not None:
                pytest.fail("the OpenID Provider exited while starting")
            if _answers(url + "/.well-known/openid-configuration"):
                break
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=0.1)
        else:
            pytest.fail("the OpenID Provider never answered")
        yield Provider(url)
    finally:
        process.terminate()
        process.wait(timeout=10)


def configure(settings, provider: Provider, site_url: str, **policy: Any) -> Provider:
    """``settings`` as SESSIONLEDGER_OIDC_PROVIDERS would make them, for a server at ``site_url``, with
    the provider's ``policy`` keys (``trust_email``, ``email_verified_claim``, ``domains``, ``end_session``)."""
    client = provider.register(f"{site_url}/accounts/oidc/{PROVIDER_ID}/login/callback/")
    configured = settings.SOCIALACCOUNT_PROVIDERS["openid_connect"]  # the nonce provider class, PKCE
    app = {
        "provider_id": PROVIDER_ID,
        "name": "Acme Login",
        "client_id": client["client_id"],
        "secret": client["client_secret"],
        "settings": {"server_url": provider.url, "oauth_pkce_enabled": True, **policy},
    }
    settings.SOCIALACCOUNT_PROVIDERS = {"openid_connect": {**configured, "APPS": [app]}}
    policy = settings.CONTENT_SECURITY_POLICY
    directives = {**policy["DIRECTIVES"], "form-action": ["'self'", provider.url]}  # as SSO_ORIGINS
    settings.CONTENT_SECURITY_POLICY = {**policy, "DIRECTIVES": directives}
    settings.SESSIONLEDGER_SSO_DOMAINS = ["acme.test"]
    settings.SESSIONLEDGER_SSO_JIT = True
    settings.SESSIONLEDGER_SSO_DEFAULT_PROJECTS = {}
    settings.SESSIONLEDGER_SSO_REQUIRED = False
    settings.SESSIONLEDGER_SSO_STAFF_PASSWORD = False
    return provider


@pytest.fixture
def sso(oidc_provider: Provider, live_server, settings) -> Provider:
    """The live server configured with the provider."""
    return configure(settings, oidc_provider, live_server.url)
