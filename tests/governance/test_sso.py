"""Single sign-on settings and the password policy under SSO.

The browser flows are in tests/frontend/browser/test_sso_browser.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest

from config import env, variables
from projects import audit_trail
from projects.models import AuditEvent, User
from tests.factories import UserFactory
from tests.governance.sso_provider import PROVIDER_ID, authorize, configure, oidc_provider  # noqa: F401 (fixture)

BASE_DIR = Path(__file__).resolve().parents[2]
PASSWORD = "pw-for-tests-1"
PROVIDER = '{"id": "okta", "name": "Okta", "server_url": "https://acme.okta.com", "client_id": "c", "secret": "s3cr3t"}'


def _load(monkeypatch, **values: str) -> dict:
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return variables.load()


def test_providers_are_read_from_json(monkeypatch) -> None:
    values = _load(monkeypatch, SESSIONLEDGER_OIDC_PROVIDERS=f"[{PROVIDER}]")
    assert values["SESSIONLEDGER_OIDC_PROVIDERS"] == [
        {"id": "okta", "name": "Okta", "server_url": "https://acme.okta.com", "client_id": "c", "secret": "s3cr3t"}
    ]


@pytest.mark.parametrize("text", [f"[{PROVIDER}", '{"id": "okta"}', '[{"id": "okta"}]', f"[{PROVIDER}, {PROVIDER}]"])
def test_malformed_providers_are_refused_naming_the_variable_without_echoing_the_secret(monkeypatch, text) -> None:
    with pytest.raises(env.ConfigError, match=r"^SESSIONLEDGER_OIDC_PROVIDERS is not valid: ") as refused:
        _load(monkeypatch, SESSIONLEDGER_OIDC_PROVIDERS=text)
    assert "s3cr3t" not in str(refused.value)


def test_sso_required_without_a_provider_is_refused(monkeypatch) -> None:
    with pytest.raises(env.ConfigError, match="SESSIONLEDGER_SSO_REQUIRED needs at least one provider"):
        _load(monkeypatch, SESSIONLEDGER_SSO_REQUIRED="true")


def test_default_projects_by_domain_are_parsed_and_malformed_pairs_refused(monkeypatch) -> None:
    values = _load(monkeypatch, SESSIONLEDGER_SSO_DEFAULT_PROJECTS="Acme.com=backend, acme.org=web")
    assert values["SESSIONLEDGER_SSO_DEFAULT_PROJECTS"] == {"acme.com": "backend", "acme.org": "web"}
    with pytest.raises(env.ConfigError, match="SESSIONLEDGER_SSO_DEFAULT_PROJECTS="):
        _load(monkeypatch, SESSIONLEDGER_SSO_DEFAULT_PROJECTS="acme.com")


@pytest.fixture
def sso_required(settings):
    settings.SESSIONLEDGER_SSO_REQUIRED = True
    settings.SESSIONLEDGER_SSO_STAFF_PASSWORD = False
    return settings


def test_sso_required_refuses_a_right_password_on_the_login_endpoint(db, client, sso_required) -> None:
    user = UserFactory(email="dave@acme.test")
    response = client.post("/accounts/login/", {"login": user.email, "password": PASSWORD})
    assert "sign in with single sign-on" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_sso_required_closes_sign_up(db, client, sso_required) -> None:
    response = client.post(
        "/accounts/signup/", {"email": "new@acme.test", "password1": "Long-pass-123", "password2": "Long-pass-123"}
    )
    assert "_auth_user_id" not in client.session
    assert b"closed" in response.content.lower()


def test_sso_required_refuses_staff_passwords_in_django_admin_unless_allowed(db, client, sso_required) -> None:
    staff = UserFactory(email="ops@acme.test", is_staff=True, is_superuser=True)
    client.post("/admin/login/", {"username": staff.email, "password": PASSWORD})
    assert "_auth_user_id" not in client.session

    sso_required.SESSIONLEDGER_SSO_STAFF_PASSWORD = True
    client.post("/admin/login/", {"username": staff.email, "password": PASSWORD})
    assert client.session["_auth_user_id"] == str(staff.pk)


def test_the_staff_exception_does_not_extend_to_other_users(db, client, sso_required) -> None:
    sso_required.SESSIONLEDGER_SSO_STAFF_PASSWORD = True
    user = UserFactory(email="dev@acme.test")
    client.post("/accounts/login/", {"login": user.email, "password": PASSWORD})
    assert "_auth_user_id" not in client.session


def test_without_sso_required_passwords_still_work(db, client, settings) -> None:
    settings.SESSIONLEDGER_SSO_REQUIRED = False
    user = UserFactory(email="dev@acme.test")
    client.post("/accounts/login/", {"login": user.email, "password": PASSWORD})
    assert client.session["_auth_user_id"] == str(user.pk)


def test_configured_providers_become_allauth_apps_and_may_receive_the_login_form() -> None:
    """From the environment to settings: PKCE and the nonce on, and the CSP lets allauth's form redirect to
    the provider."""
    code = (
        "import django, json; django.setup(); from django.conf import settings as s; "
        "print(json.dumps([s.SOCIALACCOUNT_PROVIDERS, s.CONTENT_SECURITY_POLICY['DIRECTIVES']['form-action']]))"
    )
    environ = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SESSIONLEDGER_OIDC_PROVIDERS": f"[{PROVIDER}]",
    }
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=BASE_DIR, env=environ, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    providers, form_action = json.loads(result.stdout.strip().splitlines()[-1])
    assert providers["openid_connect"]["OAUTH_PKCE_ENABLED"] is True
    assert providers["openid_connect"]["provider_class"] == "governance.oidc.NonceOpenIDConnectProvider"
    [app] = providers["openid_connect"]["APPS"]
    assert (app["provider_id"], app["client_id"], app["settings"]["server_url"]) == (
        "okta",
        "c",
        "https://acme.okta.com",
    )
    assert form_action == ["'self'", "https://acme.okta.com"]


@pytest.mark.parametrize("tamper", ["none", "other", "missing"])
def test_an_id_token_must_carry_the_nonce_this_sign_in_sent(db, client, settings, oidc_provider, tamper) -> None:  # noqa: F811 (fixture)
    """A code issued for another authorization request (another nonce, or none) cannot finish this one."""
    provider = configure(settings, oidc_provider, "http://testserver")
    provider.set_user(f"nonce-{tamper}", f"{tamper}@acme.test")
    started = client.post(f"/accounts/oidc/{PROVIDER_ID}/login/")
    url = urlsplit(started["Location"])
    params = dict(parse_qsl(url.query))
    assert len(params["nonce"]) >= 32 and params["state"] and params["code_challenge"]
    if tamper == "other":
        params["nonce"] = "chosen-by-someone-else"
    elif tamper == "missing":
        del params["nonce"]
    back = urlsplit(authorize(url._replace(query=urlencode(params)).geturl(), f"nonce-{tamper}"))

    response = client.get(f"{back.path}?{back.query}")
    if tamper == "none":
        assert response.status_code == 302 and client.session["_auth_user_id"]
        return
    assert response.status_code == 401
    assert "_auth_user_id" not in client.session
    assert not User.objects.filter(email=f"{tamper}@acme.test").exists()
    [event] = AuditEvent.objects.filter(kind=audit_trail.SSO_LOGIN_REFUSED)
    assert (event.target, event.detail["reason"]) == (f"{tamper}@acme.test", "nonce")
