"""The SAML sign-in flow for the tests: the suite's real IdP (tests/governance/saml_idp.py, pysaml2) in a
second process, and a browser played by Django's test client and ``requests``: our sign-in form sends an
AuthnRequest (HTTP-Redirect) to the IdP, whose signed Response is posted back to our ACS (HTTP-POST).
"""

from __future__ import annotations

import base64
import contextlib
import html
import json
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest
import requests
from django.test import Client

from config.saml import allauth_app, saml_providers

BASE_DIR = Path(__file__).resolve().parents[2]
PROVIDER_ID = "acme"
HOST = "sessionledger.test"  # python3-saml refuses single-label hosts such as the test client's "testserver"
_FIELD = re.compile(r'<input type="hidden" name="(\w+)" value="([^"]*)">')
_ACTION = re.compile(r'<form method="post" action="([^"]*)">')


@dataclass(frozen=True)
class IdP:
    url: str
    cert: str

    def provider(self, **overrides: Any) -> dict[str, Any]:
        """The SESSIONLEDGER_SAML_PROVIDERS entry an operator would write for this IdP (inline)."""
        entry = {
            "id": PROVIDER_ID,
            "name": "Acme SAML",
            "entity_id": f"{self.url}/metadata",
            "sso_url": f"{self.url}/sso",
            "x509cert": self.cert,
        }
        return {**entry, **overrides}


@dataclass(frozen=True)
class Posted:
    """What the IdP's auto-posting form sends to our ACS."""

    acs: str
    saml_response: str
    relay_state: str

    def xml(self) -> str:
        return base64.b64decode(self.saml_response).decode()

    def with_xml(self, xml: str) -> Posted:
        return Posted(self.acs, base64.b64encode(xml.encode()).decode(), self.relay_state)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def saml_idp(tmp_path_factory) -> Iterator[IdP]:
    port = _free_port()
    log = tmp_path_factory.mktemp("saml-idp") / "stderr"  # a file: a pipe nobody reads could fill and block it
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.governance.saml_idp", str(port)],
            cwd=BASE_DIR,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):  # readiness: until the certificate is served or the process died
            if process.poll() is not None:
                pytest.fail(f"the SAML IdP exited while starting: {log.read_text()[-2000:]}")
            with contextlib.suppress(requests.RequestException):
                cert = requests.get(f"{url}/cert", timeout=2)
                if cert.status_code == 200:
                    break
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=0.1)
        else:
            pytest.fail("the SAML IdP never answered")
        yield IdP(url, cert.text)
    finally:
        process.terminate()
        process.wait(timeout=10)


def configure(settings: Any, idp: IdP, **overrides: Any) -> None:
    """``settings`` as SESSIONLEDGER_SAML_PROVIDERS (through its parser) and the SSO policies make them."""
    (provider,) = saml_providers(json.dumps([idp.provider(**overrides)]))
    settings.SOCIALACCOUNT_PROVIDERS = {**settings.SOCIALACCOUNT_PROVIDERS, "saml": {"APPS": [allauth_app(provider)]}}
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, HOST]
    settings.SESSIONLEDGER_SSO_DOMAINS = ["acme.test"]
    settings.SESSIONLEDGER_SSO_JIT = True
    settings.SESSIONLEDGER_SSO_DEFAULT_PROJECTS = {}
    settings.SESSIONLEDGER_SSO_REQUIRED = False
    settings.SESSIONLEDGER_SSO_STAFF_PASSWORD = False


def idp_answer(browser: Client, **identity: str) -> Posted:
    """Press "sign in with Acme SAML", and let the IdP answer as ``identity`` (saml_idp.py's knobs)."""
    started = browser.post(f"/accounts/saml/{PROVIDER_ID}/login/")
    assert started.status_code == 302, started.content
    location = started["Location"]
    assert "SAMLRequest=" in location, location
    page = requests.get(f"{location}&{urlencode(identity)}", timeout=10)
    assert page.status_code == 200, page.text
    fields = {name: html.unescape(value) for name, value in _FIELD.findall(page.text)}
    action = _ACTION.search(page.text)
    assert action, page.text
    return Posted(html.unescape(action.group(1)), fields["SAMLResponse"], fields["RelayState"])


def post_to_acs(browser: Client, posted: Posted) -> Any:
    """The browser posts the IdP's form to our ACS and follows our redirects to the end."""
    acs = urlsplit(posted.acs)
    assert acs.netloc == HOST, posted.acs
    data = {"SAMLResponse": posted.saml_response, "RelayState": posted.relay_state}
    return browser.post(acs.path, data, follow=True)


def browser() -> Client:
    """allauth's SAML views read the Host header itself (not ``get_host()``); browsers always send it."""
    return Client(HTTP_HOST=HOST)


def sign_in(browser: Client, **identity: str) -> Any:
    return post_to_acs(browser, idp_answer(browser, **identity))


def signed_in_as(browser: Client) -> str | None:
    from projects.models import User

    user_id = browser.session.get("_auth_user_id")
    return None if user_id is None else str(User.objects.get(pk=user_id).email)
