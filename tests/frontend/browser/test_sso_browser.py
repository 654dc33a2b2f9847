"""Single sign-on in Chromium against a real OpenID Provider (tests/governance/sso_provider.py)."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request

import pytest
from django_scopes import scopes_disabled

from projects import audit_trail
from projects.models import AuditEvent, Membership, User
from tests.factories import UserFactory
from tests.frontend.browser.conftest import PASSWORD
from tests.governance.sso_provider import oidc_provider, sso  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _sign_in_with_provider(page, sub: str) -> list[str]:
    """Click through our login page and the provider's form; returns the URLs the browser asked for."""
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))
    if "/accounts/login/" not in page.url:
        page.goto("/accounts/login/")
    page.get_by_role("link", name="Acme Login").click()
    page.locator("form button[type=submit]").click()  # allauth's "continue" (no login on GET)
    page.wait_for_url(re.compile(r"/oauth2/authorize"))
    page.fill("input[name=sub]", sub)
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_load_state()
    return urls


def test_a_first_sso_login_creates_the_account_and_joins_the_domains_project(page, sso, world, settings) -> None:  # noqa: F811 (the sso fixture)
    settings.SESSIONLEDGER_SSO_DEFAULT_PROJECTS = {"acme.test": world.project.slug}
    sso.set_user("alice-1", "Alice@acme.test")

    urls = _sign_in_with_provider(page, "alice-1")
    page.wait_for_url(re.compile(r"/$"))

    authorize = next(url for url in urls if "/oauth2/authorize" in url)
    assert "code_challenge_method=S256" in authorize  # PKCE
    assert "nonce=" in authorize  # and the provider echoed it into the ID token, or no sign-in
    user = User.objects.get(email__iexact="alice@acme.test")
    assert not user.has_usable_password()
    with scopes_disabled():
        assert Membership.objects.filter(user=user, project=world.project, role="member").exists()
    assert page.get_by_role("link", name=re.compile("Acme Api")).count() >= 1  # signed in, sees the project


def test_a_second_sso_login_signs_in_the_same_account(page, sso) -> None:  # noqa: F811 (the sso fixture)
    sso.set_user("bob-1", "bob@acme.test")
    _sign_in_with_provider(page, "bob-1")
    page.wait_for_url(re.compile(r"/$"))
    page.context.clear_cookies()
    _sign_in_with_provider(page, "bob-1")
    page.wait_for_url(re.compile(r"/$"))
    assert User.objects.filter(email__iexact="bob@acme.test").count() == 1


def test_an_address_outside_the_allowed_domains_is_refused_and_audited(page, sso) -> None:  # noqa: F811 (the sso fixture)
    sso.set_user("mallory-1", "mallory@evil.test")
    _sign_in_with_provider(page, "mallory-1")
    assert page.get_by_role("heading", name="Sign-in refused").is_visible()
    assert not User.objects.filter(email__iexact="mallory@evil.test").exists()
    events = AuditEvent.objects.filter(kind=audit_trail.SSO_LOGIN_REFUSED)
    assert [(event.target, event.detail["reason"]) for event in events] == [("mallory@evil.test", "domain")]
    page.goto("/")
    assert "/accounts/login/" in page.url  # no session was given


def test_an_unverified_address_is_refused(page, sso) -> None:  # noqa: F811 (the sso fixture)
    sso.set_user("eve-1", "eve@acme.test", verified=False)
    _sign_in_with_provider(page, "eve-1")
    assert page.get_by_role("heading", name="Sign-in refused").is_visible()
    assert not User.objects.filter(email__iexact="eve@acme.test").exists()


def test_without_just_in_time_creation_an_unknown_person_gets_no_account(page, sso, settings) -> None:  # noqa: F811 (the sso fixture)
    settings.SESSIONLEDGER_SSO_JIT = False
    sso.set_user("carol-1", "carol@acme.test")
    _sign_in_with_provider(page, "carol-1")
    assert not User.objects.filter(email__iexact="carol@acme.test").exists()
    page.goto("/")
    assert "/accounts/login/" in page.url


def test_sso_required_hides_the_password_form_and_refuses_a_posted_password(page, sso, settings) -> None:  # noqa: F811 (the sso fixture)
    user = UserFactory(email="dave@acme.test")
    page.goto("/accounts/login/")  # a password form loaded before SSO became required
    page.fill("input[name=login]", user.email)
    page.fill("input[name=password]", PASSWORD)

    settings.SESSIONLEDGER_SSO_REQUIRED = True
    page.click("form.auth-form button[type=submit]")
    assert page.get_by_role("alert").inner_text() == "Password sign-in is off here: sign in with single sign-on."
    page.goto("/")
    assert "/accounts/login/" in page.url  # the right password gave no session

    page.goto("/accounts/login/")
    assert page.locator("input[name=password]").count() == 0
    assert page.get_by_role("link", name="Acme Login").is_visible()
    page.goto("/accounts/signup/")
    assert page.locator("input[name=password1]").count() == 0


def test_sso_required_still_signs_in_through_the_provider(page, sso, settings) -> None:  # noqa: F811 (the sso fixture)
    settings.SESSIONLEDGER_SSO_REQUIRED = True
    sso.set_user("erin-1", "erin@acme.test")
    _sign_in_with_provider(page, "erin-1")
    page.wait_for_url(re.compile(r"/$"))
    assert User.objects.filter(email__iexact="erin@acme.test").exists()


def test_the_cli_device_login_is_approved_after_signing_in_through_sso(page, sso, live_server) -> None:  # noqa: F811 (the sso fixture)
    def api(path: str, body: dict) -> tuple[int, dict]:
        request = urllib.request.Request(
            live_server.url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    status, started = api("/api/v1/auth/device", {"client_name": "laptop"})
    assert status == 201
    sso.set_user("frank-1", "frank@acme.test")
    page.goto("/device")  # the CLI opens this; signing in comes first
    assert "/accounts/login/" in page.url
    _sign_in_with_provider(page, "frank-1")
    page.wait_for_url(re.compile(r"/device"))
    page.fill("input#code", started["user_code"])
    page.get_by_role("button", name="Continue").click()
    page.get_by_role("button", name="Approve").click()
    page.wait_for_load_state()

    status, granted = api("/api/v1/auth/device/token", {"device_code": started["device_code"]})
    assert status == 200 and granted["token"]
    assert User.objects.get(email="frank@acme.test").api_tokens.count() == 1
