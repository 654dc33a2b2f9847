"""A squatted account reclaimed by single sign-on (docs/security.md "Single sign-on").

With open sign-up and optional verification, anyone can register ``victim@acme.test`` with a password,
mint tokens and stay signed in. When the real person later signs in through the company's identity
provider, allauth connects that login to the existing account: everything the squatter opened must end
there. Both sides go through the real flows: allauth's sign-up and the suite's real OpenID Provider.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from allauth.account.models import EmailAddress
from allauth.socialaccount.models import SocialAccount
from django.contrib.sessions.models import Session as BrowserSession
from django.test import Client
from django_scopes import scopes_disabled
from rest_framework.test import APIClient

from projects import audit_trail, device
from projects.models import AuditEvent, Invitation, Membership, Role, User
from projects.services import invitation_create
from tests.factories import UserFactory
from tests.governance.sso_provider import PROVIDER_ID, authorize, configure, oidc_provider, sso_sign_in  # noqa: F401 (fixture)

PASSWORD = "Squatters-pass-123"
VICTIM = "victim@acme.test"


@pytest.fixture
def provider(db, settings, oidc_provider):  # noqa: F811 (fixture)
    settings.ACCOUNT_ALLOW_SIGNUPS = True
    settings.ACCOUNT_EMAIL_VERIFICATION = "optional"
    return configure(settings, oidc_provider, "http://testserver")


def _sign_up(email: str) -> Client:
    browser = Client()
    browser.post("/accounts/signup/", {"email": email, "password1": PASSWORD, "password2": PASSWORD})
    assert browser.session.get("_auth_user_id"), "optional verification signs the new account in"
    return browser


def _mint(browser: Client) -> str:
    minted = browser.post("/api/v1/tokens", {"name": "squatter"}, content_type="application/json")
    assert minted.status_code == 201, minted.content
    return str(minted.json()["secret"])


def _projects(secret: str) -> int:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client.get("/api/v1/projects").status_code


def test_sso_sign_in_ends_the_squatters_token_and_browser_session_and_verifies_the_address(provider) -> None:
    squatter = _sign_up(VICTIM)
    secret = _mint(squatter)
    squatter_session = squatter.session.session_key
    assert _projects(secret) == 200
    account = User.objects.get(email=VICTIM)
    assert not EmailAddress.objects.filter(user=account, verified=True).exists()

    person = sso_sign_in(provider, "victim-sub", VICTIM)

    assert person.session["_auth_user_id"] == str(account.pk)  # the real person signs in, to that account
    assert _projects(secret) == 401
    assert not BrowserSession.objects.filter(session_key=squatter_session).exists()
    page = squatter.get("/")
    assert page.status_code == 302 and "/accounts/login/" in page["Location"]
    assert EmailAddress.objects.get(user=account, email__iexact=VICTIM).verified
    account.refresh_from_db()
    assert not account.has_usable_password()
    assert Client().login(email=VICTIM, password=PASSWORD) is False
    [event] = AuditEvent.objects.filter(kind=audit_trail.SSO_ACCOUNT_RECLAIMED)
    assert event.target == VICTIM
    assert event.detail["provider"] == PROVIDER_ID
    assert event.detail["ended"]["tokens"] == 1 and event.detail["ended"]["browser_sessions"] == 1


def test_sso_reclaim_denies_device_logins_revokes_share_links_invitations_and_other_identities(
    provider, world, ingest
) -> None:
    """A squatter an admin once added by address (before verification was required) had more to hold."""
    squatter = _sign_up(VICTIM)
    account = User.objects.get(email=VICTIM)
    with scopes_disabled():
        Membership.objects.create(project=world.project, user=account, role=Role.ADMIN)
        invitation = invitation_create(
            project=world.project, email="friend@elsewhere.test", role=Role.MEMBER, invited_by=account
        )
    session = ingest(world.project, account, "Plant a prompt", seed="squat")
    share = squatter.post(
        f"/api/v1/projects/{world.project.slug}/sessions/{session.pk}/shares",
        {"days": 7},
        content_type="application/json",
    )
    share_token = share.json()["url"].rsplit("/share/", 1)[1]
    started = device.device_start(client_name="squatter laptop", project=world.project.slug)
    grant = device.device_grant_for_user_code(started.user_code)
    assert grant is not None
    device.device_decide(grant=grant, user=account, approve=True)
    SocialAccount.objects.create(user=account, provider=PROVIDER_ID, uid="squatters-own-sub")
    assert Client().get(f"/share/{share_token}").status_code == 200

    sso_sign_in(provider, "victim-sub-2", VICTIM)

    assert Client().get(f"/share/{share_token}").status_code == 404
    poll = APIClient().post("/api/v1/auth/device/token", {"device_code": started.device_code}, format="json")
    assert poll.status_code == 403 and poll.json()["error"]["code"] == "access_denied"
    assert list(SocialAccount.objects.filter(user=account).values_list("uid", flat=True)) == ["victim-sub-2"]
    with scopes_disabled():
        assert Invitation.objects.get(pk=invitation.pk).revoked_at is not None
        # Kept: only staff by hand could have added an unverified account, naming this address.
        assert Membership.objects.filter(user=account, project=world.project).exists()
    [event] = AuditEvent.objects.filter(kind=audit_trail.SSO_ACCOUNT_RECLAIMED)
    ended = event.detail["ended"]
    assert (ended["device_grants"], ended["share_links"], ended["invitations"], ended["identities"]) == (1, 1, 1, 1)
    assert event.detail["memberships_kept"] == [world.project.slug]


def test_an_account_whose_address_was_verified_keeps_its_tokens_when_sso_connects(provider) -> None:
    owner = UserFactory(email="owner@acme.test")
    assert EmailAddress.objects.get(user=owner, email=owner.email).verified
    browser = Client()
    browser.force_login(owner)
    secret = _mint(browser)

    sso_sign_in(provider, "owner-sub", "owner@acme.test")

    assert _projects(secret) == 200
    assert not AuditEvent.objects.filter(kind=audit_trail.SSO_ACCOUNT_RECLAIMED).exists()


def test_a_second_sso_sign_in_reclaims_nothing(provider) -> None:
    _sign_up(VICTIM)
    sso_sign_in(provider, "victim-sub-3", VICTIM)
    person = sso_sign_in(provider, "victim-sub-3", VICTIM)
    secret = _mint(person)

    sso_sign_in(provider, "victim-sub-3", VICTIM)

    assert _projects(secret) == 200
    assert AuditEvent.objects.filter(kind=audit_trail.SSO_ACCOUNT_RECLAIMED).count() == 1


def test_an_unverified_second_address_on_another_account_is_refused_not_connected(provider) -> None:
    """A squatter with an account of their own adds the victim's address to it, unverified: taking the
    account back would end its credentials, but its holder would reset them through their own address."""
    squatter = UserFactory(email="squatter@elsewhere.test")
    EmailAddress.objects.create(user=squatter, email=VICTIM, verified=False, primary=False)
    browser = Client()
    browser.force_login(squatter)
    secret = _mint(browser)
    provider.set_user("victim-sub-4", VICTIM)
    person = Client()
    started = person.post(f"/accounts/oidc/{PROVIDER_ID}/login/")
    back = urlsplit(authorize(started["Location"], "victim-sub-4"))

    refused = person.get(f"{back.path}?{back.query}")

    assert refused.status_code == 403
    assert b"second address it never verified" in refused.content
    assert "_auth_user_id" not in person.session
    assert not SocialAccount.objects.filter(user=squatter).exists()
    assert _projects(secret) == 200  # nothing of the squatter's account changed hands
    [event] = AuditEvent.objects.filter(kind=audit_trail.SSO_LOGIN_REFUSED)
    assert event.target == VICTIM and event.detail["reason"] == "unverified_second_address"
