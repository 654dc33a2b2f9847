"""Deactivating a user ends every access at once — whichever way it is done (SCIM, the staff API,
the command, Django admin) — and what they uploaded stays the project's."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.core.management import call_command
from django.test import Client
from django_scopes import scopes_disabled
from rest_framework.test import APIClient

from projects import device
from projects.models import AuditEvent, Membership, Role, User
from sessions_app.models import Session
from tests.factories import UserFactory, make_member, make_token

SCIM_TOKEN = "scim-token-for-tests-0123456789"


@pytest.fixture
def scim(settings) -> APIClient:
    settings.SESSIONLEDGER_SCIM_TOKEN = SCIM_TOKEN
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {SCIM_TOKEN}")
    return client


@dataclass
class Access:
    """Every way the member gets in, opened before the offboarding."""

    token: str
    child_token: str
    device_code: str
    share_token: str
    browser: Client
    session: Session


@pytest.fixture
def access(world, ingest, api_as) -> Access:
    session = ingest(world.project, world.member, "Explain the retry policy", seed="offboard")
    token = make_token(world.member)
    parent = APIClient()
    parent.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    child = parent.post("/api/v1/tokens", {"name": "child"}, format="json").json()["secret"]
    started = device.device_start(client_name="laptop", project=world.project.slug)
    grant = device.device_grant_for_user_code(started.user_code)
    assert grant is not None
    device.device_decide(grant=grant, user=world.member, approve=True)
    url = f"/api/v1/projects/{world.project.slug}/sessions/{session.pk}/shares"
    share = api_as(world.member).post(url, {"days": 7}, format="json").json()["url"].rsplit("/share/", 1)[1]
    browser = Client()
    browser.force_login(world.member)
    access = Access(token, child, started.device_code, share, browser, session)
    assert_everything(access, world, works=True)
    return access


def _bearer(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def assert_everything(access: Access, world, *, works: bool) -> None:
    ok = 200 if works else None
    for secret in (access.token, access.child_token):
        status = _bearer(secret).get("/api/v1/projects").status_code
        assert (status == 200) if works else status == 401
    if not works:  # collecting the approved device login would mint a token
        poll = APIClient().post("/api/v1/auth/device/token", {"device_code": access.device_code}, format="json")
        assert poll.status_code == 403
        assert poll.json()["error"]["code"] == "access_denied"
    assert (Client().get(f"/share/{access.share_token}").status_code == ok) if works else True
    if not works:
        assert Client().get(f"/share/{access.share_token}").status_code == 404
    page = access.browser.get(f"/p/{world.project.slug}/")
    assert (page.status_code == 200) if works else page.status_code in (302, 404)
    if not works and page.status_code == 302:
        assert "/accounts/login/" in page["Location"]


def assert_offboarded(access: Access, world) -> None:
    assert_everything(access, world, works=False)
    with scopes_disabled():
        assert not Membership.objects.filter(user=world.member).exists()
        assert Session.objects.get(pk=access.session.pk).author_id == world.member.pk  # stays the project's
        assert not User.objects.get(pk=world.member.pk).is_active


def test_scim_deprovisioning_refuses_token_device_grant_share_link_and_browser_session(world, access, scim) -> None:
    body = {
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations": [{"op": "replace", "path": "active", "value": False}],
    }
    response = scim.patch(f"/scim/v2/Users/{world.member.pk}", body, format="json", HTTP_ACCEPT="application/scim+json")
    assert response.status_code == 200, response.content
    assert response.json()["active"] is False
    assert_offboarded(access, world)


def test_scim_patch_in_entra_shape_deprovisions(world, access, scim) -> None:
    body = {"Operations": [{"op": "Replace", "value": {"active": "False"}}]}
    assert scim.patch(f"/scim/v2/Users/{world.member.pk}", body, format="json").status_code == 200
    assert_offboarded(access, world)


def test_scim_delete_ends_access_and_leaves_sessions_to_the_project(world, access, scim) -> None:
    assert scim.delete(f"/scim/v2/Users/{world.member.pk}").status_code == 204
    assert scim.get(f"/scim/v2/Users/{world.member.pk}").status_code == 404
    for secret in (access.token, access.child_token):
        assert _bearer(secret).get("/api/v1/projects").status_code == 401
    assert Client().get(f"/share/{access.share_token}").status_code == 404
    assert access.browser.get(f"/p/{world.project.slug}/").status_code in (302, 404)
    with scopes_disabled():
        assert Session.objects.filter(pk=access.session.pk, project=world.project).exists()


def test_staff_api_deactivation_ends_every_access(world, access, api_as) -> None:
    staff = UserFactory(email="ops@example.com", is_staff=True)
    response = api_as(staff).post(f"/api/v1/users/{world.member.pk}/deactivate")
    assert response.status_code == 200
    assert response.json()["memberships"] == 1
    assert_offboarded(access, world)


def test_deactivate_user_command_ends_every_access(world, access) -> None:
    call_command("deactivate_user", world.member.email)
    assert_offboarded(access, world)


def test_unticking_active_in_django_admin_ends_every_access(world, access) -> None:
    staff = User.objects.create_superuser("root@example.com", "pw-for-tests-1")
    admin = Client()
    admin.force_login(staff)
    response = admin.post(
        f"/admin/projects/user/{world.member.pk}/change/",
        {
            "email": world.member.email,
            "name": "",
            "is_staff": "",
            "is_active": "",
            "last_login_0": "",
            "last_login_1": "",
            "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00",
        },
    )
    assert response.status_code == 302, response.content[:2000]
    assert_offboarded(access, world)


def test_non_staff_cannot_deactivate_anyone(world, api_as) -> None:
    for user in (world.admin, world.outsider):
        assert api_as(user).post(f"/api/v1/users/{world.member.pk}/deactivate").status_code == 404
    with scopes_disabled():
        assert User.objects.get(pk=world.member.pk).is_active


def test_staff_token_restricted_to_a_project_cannot_deactivate(world, api_as) -> None:
    staff = UserFactory(email="ops@example.com", is_staff=True)
    restricted = api_as(staff, project=world.project)
    assert restricted.post(f"/api/v1/users/{world.member.pk}/deactivate").status_code == 404


def test_scim_refuses_a_wrong_or_missing_token_and_when_unconfigured(world, settings) -> None:
    settings.SESSIONLEDGER_SCIM_TOKEN = SCIM_TOKEN
    wrong = APIClient()
    wrong.credentials(HTTP_AUTHORIZATION="Bearer not-the-token")
    response = wrong.get("/scim/v2/Users")
    assert response.status_code == 401
    assert response.json()["schemas"] == ["urn:ietf:params:scim:api:messages:2.0:Error"]
    assert APIClient().get("/scim/v2/Users").status_code == 401
    assert _bearer(make_token(world.admin)).get("/scim/v2/Users").status_code == 401  # an API token is no SCIM token
    settings.SESSIONLEDGER_SCIM_TOKEN = ""
    assert _bearer("").get("/scim/v2/Users").status_code == 401


def test_scim_creates_finds_by_user_name_and_lists(world, scim) -> None:
    created = scim.post(
        "/scim/v2/Users",
        {
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
            "userName": "Dana@Example.com",
            "name": {"givenName": "Dana", "familyName": "Scully"},
            "active": True,
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    assert created.json()["userName"] == "dana@example.com"
    assert created.json()["displayName"] == "Dana Scully"
    found = scim.get("/scim/v2/Users", {"filter": 'userName eq "dana@example.com"'}).json()
    assert found["totalResults"] == 1
    assert found["Resources"][0]["id"] == created.json()["id"]
    assert scim.get("/scim/v2/Users", {"filter": 'userName eq "nobody@example.com"'}).json()["totalResults"] == 0
    assert scim.get("/scim/v2/Users").json()["totalResults"] == User.objects.count()
    again = scim.post("/scim/v2/Users", {"userName": "dana@example.com"}, format="json")
    assert again.status_code == 409
    assert again.json()["scimType"] == "uniqueness"
    bad = scim.get("/scim/v2/Users", {"filter": 'emails co "x"'})
    assert bad.status_code == 400 and bad.json()["scimType"] == "invalidFilter"


def test_scim_reactivation_lets_the_user_sign_in_but_revives_nothing(world, access, scim) -> None:
    url = f"/scim/v2/Users/{world.member.pk}"
    scim.patch(url, {"Operations": [{"op": "replace", "path": "active", "value": False}]}, format="json")
    scim.patch(url, {"Operations": [{"op": "replace", "path": "active", "value": True}]}, format="json")
    assert _bearer(access.token).get("/api/v1/projects").status_code == 401
    assert Client().get(f"/share/{access.share_token}").status_code == 404
    fresh = Client()
    assert fresh.login(username=world.member.email, password="pw-for-tests-1")


# --- the invitations a leaving admin sent ---------------------------------------------------------

PRIVATE = "leaving.private@example.net"


def _deactivate_by(path: str, user: User, api_as, scim: APIClient) -> None:
    if path == "scim":
        body = {"Operations": [{"op": "replace", "path": "active", "value": False}]}
        assert scim.patch(f"/scim/v2/Users/{user.pk}", body, format="json").status_code == 200
    elif path == "staff-api":
        staff = api_as(UserFactory(email="ops@example.com", is_staff=True))
        assert staff.post(f"/api/v1/users/{user.pk}/deactivate").json()["invitations"] == 1
    elif path == "command":
        call_command("deactivate_user", user.email)
    else:
        admin = Client()
        admin.force_login(User.objects.create_superuser("root@example.com", "pw-for-tests-1"))
        response = admin.post("/admin/projects/user/", {"action": "deactivate", "_selected_action": [str(user.pk)]})
        assert response.status_code == 302


def _leaving_admin_invites_their_private_address(world, api_as) -> tuple[User, str, Client]:
    """An admin about to leave invites an address of their own as admin; it has an account, verified."""
    with scopes_disabled():
        leaving = make_member(world.project, Role.ADMIN, email="leaving@example.com")
    url = f"/api/v1/projects/{world.project.slug}/invitations"
    sent = api_as(leaving).post(url, {"email": PRIVATE, "role": "admin"}, format="json")
    assert sent.status_code == 201, sent.content
    browser = Client()
    browser.force_login(UserFactory(email=PRIVATE))
    return leaving, sent.json()["url"].removeprefix("http://testserver"), browser


@pytest.mark.parametrize("path", ["scim", "staff-api", "command", "django-admin"])
def test_a_leaving_admins_invitation_cannot_bring_them_back_as_admin(world, api_as, scim, path) -> None:
    leaving, page, browser = _leaving_admin_invites_their_private_address(world, api_as)
    _deactivate_by(path, leaving, api_as, scim)

    assert "was revoked" in browser.get(page).content.decode()
    refused = browser.post(page)
    assert refused.status_code == 200 and "was revoked" in refused.content.decode()
    with scopes_disabled():
        assert not Membership.objects.filter(project=world.project, user__email=PRIVATE).exists()
        [event] = AuditEvent.objects.filter(kind="user.deactivated", target=leaving.email)
    assert event.detail == {
        "tokens": 1,  # the one the invitation was sent with
        "device_grants": 0,
        "share_links": 0,
        "memberships": 1,
        "invitations": 1,
        "browser_sessions": 0,
    }


@pytest.mark.parametrize("inviter", ["demoted", "deactivated-bypassing-offboarding"])
def test_an_invitation_whose_sender_is_no_longer_an_active_admin_is_refused_on_its_page(world, api_as, inviter) -> None:
    leaving, page, browser = _leaving_admin_invites_their_private_address(world, api_as)
    with scopes_disabled():
        membership = Membership.objects.get(project=world.project, user=leaving)
    if inviter == "demoted":
        url = f"/api/v1/projects/{world.project.slug}/members/{membership.pk}"
        assert api_as(world.admin).patch(url, {"role": "member"}, format="json").status_code == 200
    else:  # a write that skips user_deactivate (a script, a shell): the accept still checks
        User.objects.filter(pk=leaving.pk).update(is_active=False)

    shown = browser.get(page).content.decode()
    assert "no longer an admin of Acme Api" in shown and "Accept invitation" not in shown
    refused = browser.post(page)
    assert "no longer an admin of Acme Api" in refused.content.decode()
    with scopes_disabled():
        assert not Membership.objects.filter(project=world.project, user__email=PRIVATE).exists()
