"""Each provider's address policy, the refusals' pages and audit events, and signing out at the provider.

Against the suite's real OpenID Provider (tests/governance/sso_provider.py), which issues exactly the
claims a test sets: Entra ID's answer has no ``email_verified``, and may carry ``xms_edov`` or
``verified_primary_email`` instead (docs/identity.md).
"""

from __future__ import annotations

import base64
import json
import urllib.request
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.test import Client

from projects import audit_trail
from projects.models import AuditEvent, User
from tests.factories import UserFactory
from tests.governance.sso_provider import PROVIDER_ID, authorize, configure, oidc_provider  # noqa: F401 (fixture)


def _sign_in(provider, sub: str, claims: dict[str, Any]) -> tuple[Client, Any]:
    provider.set_claims(sub, claims)
    browser = Client()
    started = browser.post(f"/accounts/oidc/{PROVIDER_ID}/login/")
    back = urlsplit(authorize(started["Location"], sub))
    return browser, browser.get(f"{back.path}?{back.query}")


def _refusal() -> tuple[str, str]:
    [event] = AuditEvent.objects.filter(kind=audit_trail.SSO_LOGIN_REFUSED)
    return event.target, event.detail["reason"]


@pytest.fixture
def op(db, settings, oidc_provider):  # noqa: F811 (fixture)
    def configured(**policy: Any):
        return configure(settings, oidc_provider, "http://testserver", **policy)

    return configured


def test_an_answer_without_email_verified_is_refused_naming_the_address_and_the_real_reason(op) -> None:
    """Entra ID out of the box: the page used to read "The address  is not one …" and the audit say ``domain``."""
    browser, response = _sign_in(op(), "entra-1", {"email": "erin@acme.test"})
    assert response.status_code == 403
    assert "did not confirm that the address erin@acme.test is yours" in response.content.decode()
    assert "_auth_user_id" not in browser.session
    assert _refusal() == ("erin@acme.test", "unverified_email")
    assert not User.objects.filter(email="erin@acme.test").exists()


def test_trusting_the_issuers_address_signs_in_without_email_verified(op) -> None:
    browser, response = _sign_in(op(trust_email=True), "entra-2", {"email": "Erin@Acme.test"})
    assert response.status_code == 302, response.content
    assert browser.session["_auth_user_id"] == str(User.objects.get(email__iexact="erin@acme.test").pk)


@pytest.mark.parametrize(
    ("claim", "value", "signs_in"),
    [
        ("xms_edov", True, True),
        ("xms_edov", False, False),
        ("verified_primary_email", ["erin@acme.test"], True),
        ("verified_primary_email", ["someone-else@acme.test"], False),
        ("email_verified", True, False),  # the named claim, not another one, proves it
    ],
)
def test_the_claim_a_provider_names_proves_the_address(op, claim, value, signs_in) -> None:
    provider = op(email_verified_claim="xms_edov" if claim == "email_verified" else claim)
    browser, response = _sign_in(provider, f"entra-{claim}-{value}", {"email": "erin@acme.test", claim: value})
    if signs_in:
        assert response.status_code == 302, response.content
        assert browser.session["_auth_user_id"]
    else:
        assert response.status_code == 403
        assert _refusal() == ("erin@acme.test", "unverified_email")


def test_an_answer_without_an_address_is_refused_as_such(op) -> None:
    _, response = _sign_in(op(trust_email=True), "no-mail", {"name": "Nobody"})
    assert response.status_code == 403
    assert "sent no e-mail address" in response.content.decode()
    assert _refusal() == ("", "no_email")


def test_a_providers_own_domains_replace_the_global_list(op) -> None:
    provider = op(domains=["acme.org"])  # SESSIONLEDGER_SSO_DOMAINS is acme.test
    _, refused = _sign_in(provider, "other-domain", {"email": "ann@acme.test", "email_verified": True})
    assert refused.status_code == 403
    assert "The address ann@acme.test is not one this Sessionledger accepts" in refused.content.decode()
    assert _refusal() == ("ann@acme.test", "domain")
    browser, response = _sign_in(provider, "own-domain", {"email": "ann@acme.org", "email_verified": True})
    assert response.status_code == 302 and browser.session["_auth_user_id"]


def test_with_jit_off_a_person_without_an_account_gets_a_clear_page_and_one_audit_event(op, settings) -> None:
    provider = op()
    settings.SESSIONLEDGER_SSO_JIT = False
    _, response = _sign_in(provider, "newcomer", {"email": "new@acme.test", "email_verified": True})
    assert response.status_code == 403
    assert "accounts are not created at first sign-in" in response.content.decode()
    assert _refusal() == ("new@acme.test", "jit_off")
    assert not User.objects.filter(email="new@acme.test").exists()


def test_a_deactivated_persons_sign_in_is_refused_with_a_page_and_one_audit_event(op) -> None:
    provider = op()
    UserFactory(email="gone@acme.test", is_active=False)
    browser, response = _sign_in(provider, "gone", {"email": "gone@acme.test", "email_verified": True})
    assert response.status_code == 403
    assert "The account of gone@acme.test is deactivated" in response.content.decode()
    assert "_auth_user_id" not in browser.session
    assert _refusal() == ("gone@acme.test", "inactive")


def test_an_account_created_by_a_first_sign_in_is_audited(op) -> None:
    _sign_in(op(), "first", {"email": "first@acme.test", "email_verified": True})
    [event] = AuditEvent.objects.filter(kind="user.jit_created")
    assert (event.target, event.detail) == ("first@acme.test", {"provider": PROVIDER_ID})


def _claims(jwt: str) -> dict[str, Any]:
    payload = jwt.split(".")[1]
    return dict(json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))))


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def test_signing_out_ends_the_providers_session_and_comes_back_to_the_login_page(op, settings) -> None:
    provider = op()
    browser, _ = _sign_in(provider, "leaver", {"email": "leaver@acme.test", "email_verified": True})
    client_id = settings.SOCIALACCOUNT_PROVIDERS["openid_connect"]["APPS"][0]["client_id"]

    response = browser.post("/accounts/logout/")

    assert "_auth_user_id" not in browser.session
    url = urlsplit(response["Location"])
    assert f"{url.scheme}://{url.netloc}{url.path}" == f"{provider.url}/oauth2/end_session"
    params = {key: value for key, [value] in parse_qs(url.query).items()}
    assert params["post_logout_redirect_uri"] == "http://testserver/accounts/login/"
    assert params["client_id"] == client_id
    hint = _claims(params["id_token_hint"])  # the ID token of this very sign-in
    assert (hint["sub"], hint["aud"], hint["iss"]) == ("leaver", [client_id], provider.url)
    # The provider ends its session and sends the browser back to the login page.
    page = urllib.request.urlopen(response["Location"], timeout=10).read().decode()
    assert "End session" in page
    opener = urllib.request.build_opener(_NoRedirect)
    confirm = urlencode({"redirect_uri": params["post_logout_redirect_uri"]}).encode()
    with pytest.raises(urllib.error.HTTPError) as back:
        opener.open(urllib.request.Request(f"{provider.url}/oauth2/end_session/confirm", data=confirm), timeout=10)
    assert back.value.code == 302 and back.value.headers["Location"] == "http://testserver/accounts/login/"
    # Signing in again asks the provider again (its form), rather than a silent round trip.
    again = browser.post(f"/accounts/oidc/{PROVIDER_ID}/login/")
    assert "Authorize" in urllib.request.urlopen(again["Location"], timeout=10).read().decode()


def test_a_provider_set_not_to_end_its_session_signs_out_locally(op) -> None:
    browser, _ = _sign_in(op(end_session=False), "local", {"email": "local@acme.test", "email_verified": True})
    response = browser.post("/accounts/logout/")
    assert response["Location"] == "/accounts/login/"
    assert "_auth_user_id" not in browser.session


def test_a_password_session_signs_out_locally(db, client) -> None:
    user = UserFactory(email="pw@acme.test")
    client.post("/accounts/login/", {"login": user.email, "password": "pw-for-tests-1"})
    assert client.session["_auth_user_id"]
    assert client.post("/accounts/logout/")["Location"] == "/accounts/login/"


ENTRA = (
    '{"id": "entra", "name": "Entra ID", "server_url": "https://login.microsoftonline.com/t/v2.0", '
    '"client_id": "c", "secret": "s3cr3t", "email_verified_claim": "xms_edov", "domains": ["@Acme.com"], '
    '"end_session": true}'
)


def test_a_providers_policy_is_read_with_it_and_malformed_policy_refused(monkeypatch) -> None:
    from config import env, variables

    monkeypatch.setenv("SESSIONLEDGER_OIDC_PROVIDERS", f"[{ENTRA}]")
    [entra] = variables.load()["SESSIONLEDGER_OIDC_PROVIDERS"]
    assert (entra["email_verified_claim"], entra["domains"], entra["end_session"]) == ("xms_edov", ["acme.com"], True)
    for bad in ('"trust_email": "yes"', '"domains": "acme.com"', '"email_verified_claim": ""'):
        monkeypatch.setenv("SESSIONLEDGER_OIDC_PROVIDERS", f"[{ENTRA[:-1]}, {bad}}}]")
        with pytest.raises(env.ConfigError, match="SESSIONLEDGER_OIDC_PROVIDERS is not valid: provider 0: "):
            variables.load()
