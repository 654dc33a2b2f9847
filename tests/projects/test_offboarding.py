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
from projects.models import Membership, User
from sessions_app.models import Session
from tests.factories import UserFactory, make_token

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
