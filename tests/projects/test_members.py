"""Managing who is in a project: members, roles, the last admin, invitations."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from projects import services
from projects.models import Invitation, Membership, Role
from projects.scoping import project_scope, unscoped
from tests.factories import UserFactory


def _members_url(world, member_id: int | None = None) -> str:
    base = f"/api/v1/projects/{world.project.slug}/members"
    return base if member_id is None else f"{base}/{member_id}"


def _invitations_url(world, invitation_id: int | None = None) -> str:
    base = f"/api/v1/projects/{world.project.slug}/invitations"
    return base if invitation_id is None else f"{base}/{invitation_id}"


def _membership(project, user) -> Membership | None:
    with unscoped():
        return Membership.objects.filter(project=project, user=user).first()


def _roles(response) -> dict[str, str]:
    assert response.status_code == 200, response.content
    return {m["user"]["email"]: m["role"] for m in response.json()}


# --- members -------------------------------------------------------------------------------------


def test_an_admin_lists_the_members_with_their_roles(world, api_as) -> None:
    assert _roles(api_as(world.admin).get(_members_url(world))) == {
        "alice@example.com": "admin",
        "mallory@example.com": "member",
        "victor@example.com": "viewer",
    }


def test_adding_a_user_by_email_invites_them_and_they_join_on_accepting(world, api_as, client) -> None:
    response = api_as(world.admin).post(
        _members_url(world), {"email": "Charlie@Example.com", "role": "viewer"}, format="json"
    )
    assert response.status_code == 202
    invitation = response.json()
    assert invitation["email"] == "charlie@example.com" and invitation["role"] == "viewer"
    assert _membership(world.project, world.outsider) is None

    client.force_login(world.outsider)
    assert client.post(invitation["url"].removeprefix("http://testserver")).status_code == 302
    assert _membership(world.project, world.outsider).role == Role.VIEWER
    assert api_as(world.outsider).get(f"/api/v1/projects/{world.project.slug}").status_code == 200


def test_adding_someone_who_is_already_a_member_is_a_conflict(world, api_as) -> None:
    response = api_as(world.admin).post(_members_url(world), {"email": world.member.email}, format="json")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "exists"
    assert _membership(world.project, world.member).role == Role.MEMBER


def test_an_admin_changes_a_members_role(world, api_as) -> None:
    membership = _membership(world.project, world.member)
    response = api_as(world.admin).patch(_members_url(world, membership.pk), {"role": "viewer"}, format="json")
    assert response.status_code == 200 and response.json()["role"] == "viewer"
    assert _membership(world.project, world.member).role == Role.VIEWER


def test_an_unknown_role_is_refused_naming_the_field(world, api_as) -> None:
    membership = _membership(world.project, world.member)
    response = api_as(world.admin).patch(_members_url(world, membership.pk), {"role": "owner"}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "role"


def test_an_admin_removes_a_member_who_then_loses_access(world, api_as) -> None:
    membership = _membership(world.project, world.member)
    assert api_as(world.admin).delete(_members_url(world, membership.pk)).status_code == 204
    assert _membership(world.project, world.member) is None
    assert api_as(world.member).get(f"/api/v1/projects/{world.project.slug}").status_code == 404


@pytest.mark.parametrize("role", ["member", "viewer"])
def test_non_admins_cannot_manage_members(world, api_as, role: str) -> None:
    client = api_as(world.user(role))
    victim = _membership(world.project, world.viewer if role == "member" else world.member)
    refusals = [
        client.get(_members_url(world)),
        client.post(_members_url(world), {"email": world.outsider.email, "role": "admin"}, format="json"),
        client.patch(_members_url(world, victim.pk), {"role": "admin"}, format="json"),
        client.delete(_members_url(world, victim.pk)),
        client.get(_invitations_url(world)),
        client.post(_invitations_url(world), {"email": "new@example.com"}, format="json"),
    ]
    assert [r.status_code for r in refusals] == [403] * len(refusals)
    assert all(r.json()["error"]["code"] == "permission_denied" for r in refusals)
    assert _membership(world.project, world.outsider) is None
    assert _membership(world.project, victim.user).role == victim.role


def test_the_members_api_is_404_for_an_outsider(world, api_as) -> None:
    assert api_as(world.outsider).get(_members_url(world)).status_code == 404
    assert api_as(world.other_admin).get(_members_url(world)).status_code == 404


# --- the last admin ------------------------------------------------------------------------------


def test_the_last_admin_can_be_neither_removed_nor_demoted(world, api_as) -> None:
    client = api_as(world.admin)
    admin = _membership(world.project, world.admin)

    removed = client.delete(_members_url(world, admin.pk))
    demoted = client.patch(_members_url(world, admin.pk), {"role": "member"}, format="json")

    for response in (removed, demoted):
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "last_admin"
        assert "at least one admin" in response.json()["error"]["message"]
    assert _membership(world.project, world.admin).role == Role.ADMIN


def test_an_admin_can_step_down_once_another_admin_exists(world, api_as) -> None:
    client = api_as(world.admin)
    promoted = client.patch(
        _members_url(world, _membership(world.project, world.member).pk), {"role": "admin"}, format="json"
    )
    assert promoted.status_code == 200

    admin = _membership(world.project, world.admin)
    assert client.patch(_members_url(world, admin.pk), {"role": "member"}, format="json").status_code == 200
    assert _membership(world.project, world.admin).role == Role.MEMBER

    new_admin = api_as(world.member)
    assert new_admin.delete(_members_url(world, admin.pk)).status_code == 204
    assert _membership(world.project, world.admin) is None


def test_an_admin_can_be_removed_once_another_admin_exists(world, api_as) -> None:
    with project_scope(world.project):
        services.membership_add(project=world.project, user=world.outsider, role=Role.ADMIN)
    admin = _membership(world.project, world.admin)
    assert api_as(world.admin).delete(_members_url(world, admin.pk)).status_code == 204
    assert _membership(world.project, world.admin) is None


# --- another project's memberships ---------------------------------------------------------------


def test_another_projects_membership_id_is_404_and_untouched(world, api_as) -> None:
    theirs = _membership(world.other_project, world.other_admin)
    client = api_as(world.admin)
    responses = [
        client.get(_members_url(world, theirs.pk)),
        client.patch(_members_url(world, theirs.pk), {"role": "viewer"}, format="json"),
        client.delete(_members_url(world, theirs.pk)),
    ]
    assert [r.status_code for r in responses] == [404, 404, 404]
    assert all(r.json()["error"]["code"] == "not_found" for r in responses)
    assert _membership(world.other_project, world.other_admin).role == Role.ADMIN


# --- invitations ---------------------------------------------------------------------------------


def _invite(world, api_as, email: str = "dana@example.com", role: str = "viewer") -> dict:
    response = api_as(world.admin).post(_invitations_url(world), {"email": email, "role": role}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def test_an_admin_invites_by_email_and_sees_the_invitation_listed(world, api_as) -> None:
    created = _invite(world, api_as, email="Dana@Example.com")
    assert created["email"] == "dana@example.com" and created["role"] == "viewer"
    assert created["invited_by"]["email"] == world.admin.email
    assert created["url"].startswith("http://testserver/invitations/")
    assert created["accepted_at"] is None and created["revoked_at"] is None

    listed = api_as(world.admin).get(_invitations_url(world))
    assert listed.status_code == 200
    assert [(i["id"], i["email"]) for i in listed.json()] == [(created["id"], "dana@example.com")]


def test_inviting_an_existing_member_is_a_conflict(world, api_as) -> None:
    response = api_as(world.admin).post(_invitations_url(world), {"email": world.viewer.email}, format="json")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "exists"


def test_a_flood_of_invitations_is_a_429(world, api_as, settings) -> None:
    settings.SESSIONLEDGER_INVITE_RATE = "2/hour"
    admin = api_as(world.admin)
    members_url = f"/api/v1/projects/{world.project.slug}/members"
    codes = [
        admin.post(_invitations_url(world), {"email": "a@example.com"}, format="json").status_code,
        admin.post(members_url, {"email": "b@example.com"}, format="json").status_code,
        admin.post(_invitations_url(world), {"email": "c@example.com"}, format="json").status_code,
    ]
    assert codes == [201, 202, 429]


def test_an_admin_revokes_an_invitation(world, api_as) -> None:
    created = _invite(world, api_as)
    assert api_as(world.admin).delete(_invitations_url(world, created["id"])).status_code == 204
    detail = api_as(world.admin).get(_invitations_url(world, created["id"]))
    assert detail.status_code == 200 and detail.json()["revoked_at"] is not None


def test_another_projects_invitation_id_is_404(world, api_as) -> None:
    with project_scope(world.other_project):
        theirs = services.invitation_create(
            project=world.other_project, email="eve@example.com", role="member", invited_by=world.other_admin
        )
    client = api_as(world.admin)
    assert client.get(_invitations_url(world, theirs.pk)).status_code == 404
    assert client.delete(_invitations_url(world, theirs.pk)).status_code == 404
    with unscoped():
        assert Invitation.objects.get(pk=theirs.pk).revoked_at is None


# --- accepting an invitation in the browser ------------------------------------------------------


def _page(invitation: dict) -> str:
    return invitation["url"].removeprefix("http://testserver")


def test_accepting_an_invitation_creates_the_membership_with_its_role(world, api_as, client) -> None:
    invitation = _invite(world, api_as, email="dana@example.com", role="viewer")
    dana = UserFactory(email="dana@example.com")
    client.force_login(dana)

    page = client.get(_page(invitation))
    assert page.status_code == 200 and "Accept invitation" in page.content.decode()

    response = client.post(_page(invitation))
    assert response.status_code == 302 and response["Location"] == f"/p/{world.project.slug}/"
    assert _membership(world.project, dana).role == Role.VIEWER
    listed = api_as(world.admin).get(_invitations_url(world, invitation["id"])).json()
    assert listed["accepted_at"] is not None


def test_an_invitation_cannot_be_used_twice(world, api_as, client) -> None:
    invitation = _invite(world, api_as, email="dana@example.com")
    client.force_login(UserFactory(email="dana@example.com"))
    client.post(_page(invitation))
    again = client.post(_page(invitation))
    assert again.status_code == 200
    assert "already used" in again.content.decode()


def test_an_invitation_for_another_email_is_refused(world, api_as, client) -> None:
    invitation = _invite(world, api_as, email="dana@example.com")
    client.force_login(world.outsider)
    response = client.post(_page(invitation))
    assert response.status_code == 200
    assert "This invitation is for dana@example.com" in response.content.decode()
    assert _membership(world.project, world.outsider) is None


def test_a_revoked_invitation_is_refused(world, api_as, client) -> None:
    invitation = _invite(world, api_as, email="dana@example.com")
    api_as(world.admin).delete(_invitations_url(world, invitation["id"]))
    dana = UserFactory(email="dana@example.com")
    client.force_login(dana)
    assert "Accept invitation" not in client.get(_page(invitation)).content.decode()
    response = client.post(_page(invitation))
    assert "revoked" in response.content.decode()
    assert _membership(world.project, dana) is None


def test_an_expired_invitation_is_refused(world, api_as, client) -> None:
    invitation = _invite(world, api_as, email="dana@example.com")
    with unscoped():
        Invitation.objects.filter(pk=invitation["id"]).update(expires_at=timezone.now() - timedelta(minutes=1))
    dana = UserFactory(email="dana@example.com")
    client.force_login(dana)
    response = client.post(_page(invitation))
    assert "expired" in response.content.decode()
    assert _membership(world.project, dana) is None


def test_an_unknown_invitation_token_is_404(world, client) -> None:
    client.force_login(world.outsider)
    assert client.get("/invitations/not-a-token/").status_code == 404


def test_the_invitation_page_needs_a_login(world, api_as, client) -> None:
    invitation = _invite(world, api_as)
    response = client.get(_page(invitation))
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
