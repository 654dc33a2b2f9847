"""Browser sessions' lifetime and idle timeout, ending what SSO_REQUIRED forbids, and API tokens' cap
(docs/identity.md "Sessions"). Time passes by moving the stored timestamps back, never by sleeping."""

from __future__ import annotations

import time
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from governance.browser_sessions import SEEN_AT, SIGNED_IN_AT
from projects.models import ApiToken
from tests.factories import UserFactory
from tests.governance.sso_provider import PROVIDER_ID, authorize, configure, oidc_provider  # noqa: F401 (fixture)

PASSWORD = "pw-for-tests-1"


def _password_sign_in(email: str, **fields) -> Client:
    user = UserFactory(email=email, **fields)
    browser = Client()
    browser.post("/accounts/login/", {"login": email, "password": PASSWORD})
    assert browser.session["_auth_user_id"] == str(user.pk)
    return browser


def _sso_sign_in(provider, sub: str, email: str) -> Client:
    provider.set_user(sub, email)
    browser = Client()
    started = browser.post(f"/accounts/oidc/{PROVIDER_ID}/login/")
    back = urlsplit(authorize(started["Location"], sub))
    assert browser.get(f"{back.path}?{back.query}").status_code == 302
    assert browser.session["_auth_user_id"]
    return browser


def _age(browser: Client, key: str, seconds: float) -> None:
    session = browser.session
    session[key] = float(session[key]) - seconds
    session.save()


def _signed_in(browser: Client) -> bool:
    """As the person sees it: the API answers their session, or not."""
    return browser.get("/api/v1/projects").status_code == 200


def _mint(browser: Client, **fields) -> str:
    minted = browser.post("/api/v1/tokens", {"name": "cli", **fields}, content_type="application/json")
    assert minted.status_code == 201, minted.content
    return str(minted.json()["secret"])


def _works(secret: str) -> bool:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return api.get("/api/v1/projects").status_code == 200


def test_a_session_ends_at_its_lifetime_however_active(db, settings) -> None:
    settings.SESSIONLEDGER_SESSION_HOURS = 8
    browser = _password_sign_in("day@acme.test")
    _age(browser, SIGNED_IN_AT, 8 * 3600 - 60)
    assert _signed_in(browser)
    _age(browser, SIGNED_IN_AT, 120)
    assert not _signed_in(browser)
    assert "_auth_user_id" not in browser.session


def test_a_session_ends_after_the_idle_timeout_and_use_keeps_it_alive(db, settings) -> None:
    settings.SESSIONLEDGER_SESSION_IDLE_MINUTES = 30
    browser = _password_sign_in("idle@acme.test")
    _age(browser, SEEN_AT, 29 * 60)
    assert _signed_in(browser)  # used within the timeout: the idle clock starts again
    assert time.time() - browser.session[SEEN_AT] < 60
    _age(browser, SEEN_AT, 31 * 60)
    assert not _signed_in(browser)


def test_without_an_idle_timeout_a_quiet_session_lasts(db, settings) -> None:
    settings.SESSIONLEDGER_SESSION_IDLE_MINUTES = 0
    browser = _password_sign_in("quiet@acme.test")
    _age(browser, SEEN_AT, 13 * 24 * 3600)
    assert _signed_in(browser)


@pytest.fixture
def provider(db, settings, oidc_provider):  # noqa: F811 (fixture)
    return configure(settings, oidc_provider, "http://testserver")


def test_switching_sso_required_on_ends_password_sessions_at_their_next_request(provider, settings) -> None:
    by_password = _password_sign_in("pw@acme.test")
    by_sso = _sso_sign_in(provider, "sso-person", "sso@acme.test")
    staff = _password_sign_in("ops@acme.test", is_staff=True)

    settings.SESSIONLEDGER_SSO_REQUIRED = True
    settings.SESSIONLEDGER_SSO_STAFF_PASSWORD = True

    assert not _signed_in(by_password)
    assert "_auth_user_id" not in by_password.session
    assert _signed_in(by_sso)
    assert _signed_in(staff)  # the break-glass exception
    settings.SESSIONLEDGER_SSO_STAFF_PASSWORD = False
    assert not _signed_in(staff)


def test_sso_enforce_ends_password_sessions_and_the_tokens_made_before_single_sign_on(provider, settings) -> None:
    password_only = _password_sign_in("pw@acme.test")
    password_token = _mint(password_only)
    before = _password_sign_in("both@acme.test")
    old_token = _mint(before)
    ApiToken.objects.update(created_at=timezone.now() - timedelta(days=1))  # made before the first SSO sign-in
    by_sso = _sso_sign_in(provider, "both", "both@acme.test")
    sso_token = _mint(by_sso)
    password_session, sso_session = password_only.session.session_key, by_sso.session.session_key

    with pytest.raises(CommandError, match="SESSIONLEDGER_SSO_REQUIRED is off"):
        call_command("sso_enforce")
    settings.SESSIONLEDGER_SSO_REQUIRED = True
    call_command("sso_enforce")

    from django.contrib.sessions.models import Session

    assert not Session.objects.filter(session_key=password_session).exists()
    assert Session.objects.filter(session_key=sso_session).exists()
    assert not _works(password_token)
    assert not _works(old_token)
    assert _works(sso_token)


def test_a_token_asked_for_longer_than_the_cap_gets_the_cap(db, settings) -> None:
    settings.SESSIONLEDGER_TOKEN_MAX_DAYS = 30
    browser = _password_sign_in("capped@acme.test")
    for fields in ({"expires_days": 365}, {}):
        _mint(browser, **fields)
    cap = timezone.now() + timedelta(days=30)
    for token in ApiToken.objects.all():
        assert token.expires_at is not None and abs((token.expires_at - cap).total_seconds()) < 60


def test_lowering_the_cap_reaches_tokens_that_already_exist(db, settings) -> None:
    browser = _password_sign_in("old@acme.test")
    secret = _mint(browser)  # no cap then: never expires
    ApiToken.objects.update(created_at=timezone.now() - timedelta(days=31))
    assert _works(secret)
    settings.SESSIONLEDGER_TOKEN_MAX_DAYS = 30
    assert not _works(secret)
