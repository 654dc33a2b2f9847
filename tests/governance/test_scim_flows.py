"""Provisioning as Okta and Entra ID do it, end to end through /scim/v2 (docs/identity.md): create,
rename, group push, group membership change, deactivate, delete — and what each does to the
person's project memberships and sign-in. The request shapes are the ones each provider documents."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django_scopes import scopes_disabled

from governance.groups import mapping_create
from governance.models import GroupMapping, ScimToken
from projects.models import AuditEvent, Membership, Project, Role, User
from projects.scoping import project_scope
from projects.services import membership_add
from tests.factories import ProjectFactory, UserFactory
from tests.governance.scim_client import SCIM_TOKEN, Scim

USER = "urn:ietf:params:scim:schemas:core:2.0:User"
GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group"


@pytest.fixture
def scim(db, settings) -> Scim:
    settings.SESSIONLEDGER_SCIM_TOKEN = SCIM_TOKEN
    return Scim()


@pytest.fixture
def api(db) -> Project:
    """A project with an admin of its own, so groups may lower and remove their admins."""
    project = ProjectFactory(slug="api")
    with project_scope(project):
        membership_add(project=project, user=UserFactory(email="owner@acme.test"), role=Role.ADMIN)
    return project


def _role(user_id: str, project: Project) -> str | None:
    with scopes_disabled():
        membership = Membership.objects.filter(user_id=int(user_id), project=project).first()
    return membership.role if membership else None


def _kinds() -> list[str]:
    return list(AuditEvent.objects.order_by("id").values_list("kind", flat=True))


def test_okta_provisioning_flow(scim, api) -> None:
    mapping_create(match_on=GroupMapping.MatchOn.DISPLAY_NAME, group="Engineering", project=api, role=Role.MEMBER)
    # Okta first looks the person up, then creates them
    assert (
        scim.ok("get", "Users", filter='userName eq "ann@acme.test"', startIndex="1", count="100")["totalResults"] == 0
    )
    ann = scim.ok(
        "post",
        "Users",
        {
            "schemas": [USER],
            "userName": "ann@acme.test",
            "name": {"givenName": "Ann", "familyName": "Lee"},
            "emails": [{"primary": True, "value": "ann@acme.test", "type": "work"}],
            "displayName": "Ann Lee",
            "locale": "en-US",
            "externalId": "00u1okta",
            "groups": [],
            "active": True,
        },
        status=201,
    )
    assert (ann["userName"], ann["externalId"], ann["name"]["formatted"]) == ("ann@acme.test", "00u1okta", "Ann Lee")

    # rename: Okta PUTs the whole user with the new userName and address
    renamed = scim.ok(
        "put",
        f"Users/{ann['id']}",
        {
            **ann,
            "userName": "ann.lee@acme.test",
            "emails": [{"primary": True, "value": "ann.lee@acme.test", "type": "work"}],
        },
    )
    assert renamed["userName"] == "ann.lee@acme.test"
    assert User.objects.get(pk=ann["id"]).email == "ann.lee@acme.test"
    assert scim.ok("get", "Users", filter='userName eq "ann@acme.test"')["totalResults"] == 0

    # group push: create the group, then add members with a PATCH
    group = scim.ok("post", "Groups", {"schemas": [GROUP], "displayName": "Engineering", "members": []}, status=201)
    assert _role(ann["id"], api) is None
    scim.patch(
        f"Groups/{group['id']}",
        {"op": "add", "path": "members", "value": [{"value": ann["id"], "display": "ann.lee@acme.test"}]},
    )
    assert _role(ann["id"], api) == Role.MEMBER

    # membership change: Okta removes with a filtered path
    scim.patch(f"Groups/{group['id']}", {"op": "remove", "path": f'members[value eq "{ann["id"]}"]'})
    assert _role(ann["id"], api) is None
    scim.patch(f"Groups/{group['id']}", {"op": "add", "path": "members", "value": [{"value": ann["id"]}]})

    # deactivate: a value-object replace
    scim.patch(f"Users/{ann['id']}", {"op": "replace", "value": {"active": False}})
    assert not User.objects.get(pk=ann["id"]).is_active and _role(ann["id"], api) is None

    # Okta deletes the group, then the user
    scim.ok("delete", f"Groups/{group['id']}", status=204)
    scim.ok("delete", f"Users/{ann['id']}", status=204)
    assert not User.objects.filter(pk=ann["id"]).exists()
    kinds = _kinds()
    for kind in (
        "user.provisioned",
        "user.updated",
        "group.provisioned",
        "group.member_added",
        "membership.added",
        "group.member_removed",
        "membership.removed",
        "user.deactivated",
        "group.deleted",
        "user.deleted",
    ):
        assert kind in kinds, kind


def test_entra_provisioning_flow(scim, api) -> None:
    """Entra matches on externalId, keeps a UPN apart from the mail address, sends op names in any
    case, "False" as a string, and filtered e-mail paths."""
    mapping_create(match_on=GroupMapping.MatchOn.EXTERNAL_ID, group="aad-grp-1", project=api, role=Role.ADMIN)
    assert scim.ok("get", "Users", filter='externalId eq "aad-0001"')["totalResults"] == 0
    bo = scim.ok(
        "post",
        "Users",
        {
            "schemas": [USER, "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
            "externalId": "aad-0001",
            "userName": "bo@acmecorp.onmicrosoft.com",
            "active": True,
            "displayName": "Bo Chen",
            "emails": [{"primary": True, "type": "work", "value": "bo.chen@acme.test"}],
            "name": {"formatted": "Bo Chen", "familyName": "Chen", "givenName": "Bo"},
            "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"department": "R&D"},
        },
        status=201,
    )
    assert (bo["userName"], bo["emails"][0]["value"]) == ("bo@acmecorp.onmicrosoft.com", "bo.chen@acme.test")
    assert User.objects.get(pk=bo["id"]).email == "bo.chen@acme.test"  # the sign-in address is the mail
    found = scim.ok("get", "Users", filter='userName eq "bo@acmecorp.onmicrosoft.com"', attributes="userName")
    assert found["Resources"] == [
        {"schemas": [USER], "id": bo["id"], "userName": "bo@acmecorp.onmicrosoft.com", "meta": bo["meta"]}
    ]

    # rename: new UPN and new mail, each in its own operation, op names capitalised
    scim.patch(
        f"Users/{bo['id']}",
        {"op": "Replace", "path": "userName", "value": "bo.chen@acmecorp.onmicrosoft.com"},
        {"op": "Replace", "path": 'emails[type eq "work"].value', "value": "bo.c@acme.test"},
        {"op": "Replace", "path": "name.familyName", "value": "Chen-Wu"},
        {"op": "Remove", "path": "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department"},
    )
    user = User.objects.get(pk=bo["id"])
    assert (user.scim_user_name, user.email, user.name) == (
        "bo.chen@acmecorp.onmicrosoft.com",
        "bo.c@acme.test",
        "Bo Chen-Wu",
    )
    assert scim.ok("get", "Users", filter='emails[type eq "work"].value eq "bo.c@acme.test"')["totalResults"] == 1

    # group push with members in the create, as Entra sends it; then a second member by PATCH
    cy = scim.ok("post", "Users", {"userName": "cy@acme.test", "externalId": "aad-0002"}, status=201)
    group = scim.ok(
        "post",
        "Groups",
        {"schemas": [GROUP], "externalId": "aad-grp-1", "displayName": "Platform", "members": [{"value": bo["id"]}]},
        status=201,
    )
    assert _role(bo["id"], api) == Role.ADMIN
    scim.patch(f"Groups/{group['id']}", {"op": "Add", "path": "members", "value": [{"value": cy["id"]}]})
    assert _role(cy["id"], api) == Role.ADMIN
    listed = scim.ok("get", "Groups", filter='displayName eq "Platform"', excludedAttributes="members")
    assert listed["totalResults"] == 1 and "members" not in listed["Resources"][0]

    # membership change: Entra removes with the value list
    scim.patch(f"Groups/{group['id']}", {"op": "Remove", "path": "members", "value": [{"value": cy["id"]}]})
    assert _role(cy["id"], api) is None and _role(bo["id"], api) == Role.ADMIN

    # deactivate with the string Entra sends, then the soft-delete's hard delete
    scim.patch(f"Users/{bo['id']}", {"op": "Replace", "path": "active", "value": "False"})
    assert not User.objects.get(pk=bo["id"]).is_active and _role(bo["id"], api) is None
    scim.ok("delete", f"Users/{bo['id']}", status=204)
    assert scim.call("get", f"Users/{bo['id']}").status_code == 404
    scim.ok("delete", f"Groups/{group['id']}", status=204)
    assert scim.ok("get", "Groups")["totalResults"] == 0


def test_several_mapped_groups_give_the_highest_role_and_leaving_one_keeps_the_other(scim, api) -> None:
    mapping_create(match_on=GroupMapping.MatchOn.DISPLAY_NAME, group="readers", project=api, role=Role.VIEWER)
    mapping_create(match_on=GroupMapping.MatchOn.DISPLAY_NAME, group="leads", project=api, role=Role.ADMIN)
    dee = scim.ok("post", "Users", {"userName": "dee@acme.test"}, status=201)
    readers = scim.ok("post", "Groups", {"displayName": "Readers", "members": [{"value": dee["id"]}]}, status=201)
    leads = scim.ok("post", "Groups", {"displayName": "Leads", "members": [{"value": dee["id"]}]}, status=201)
    assert _role(dee["id"], api) == Role.ADMIN
    scim.patch(f"Groups/{leads['id']}", {"op": "replace", "path": "members", "value": []})
    assert _role(dee["id"], api) == Role.VIEWER  # still granted by readers, at its role
    scim.patch(f"Groups/{readers['id']}", {"op": "remove", "path": "members"})
    assert _role(dee["id"], api) is None


def test_groups_never_remove_a_membership_made_by_hand(scim, api) -> None:
    eve = UserFactory(email="eve@acme.test")
    with project_scope(api):
        membership_add(project=api, user=eve, role=Role.MEMBER)
    mapping_create(match_on=GroupMapping.MatchOn.DISPLAY_NAME, group="leads", project=api, role=Role.ADMIN)
    leads = scim.ok("post", "Groups", {"displayName": "leads", "members": [{"value": str(eve.pk)}]}, status=201)
    assert _role(str(eve.pk), api) == Role.ADMIN
    scim.ok("delete", f"Groups/{leads['id']}", status=204)
    assert _role(str(eve.pk), api) == Role.ADMIN  # raised by the group, kept: it was theirs before


def test_a_mapping_made_after_the_push_applies_at_once_and_its_removal_too(scim, api) -> None:
    fay = scim.ok("post", "Users", {"userName": "fay@acme.test"}, status=201)
    scim.ok(
        "post", "Groups", {"displayName": "Ops", "externalId": "ops-1", "members": [{"value": fay["id"]}]}, status=201
    )
    assert _role(fay["id"], api) is None
    mapping = mapping_create(match_on=GroupMapping.MatchOn.EXTERNAL_ID, group="ops-1", project=api, role=Role.MEMBER)
    assert _role(fay["id"], api) == Role.MEMBER
    from governance.groups import mapping_delete

    mapping_delete(mapping=mapping)
    assert _role(fay["id"], api) is None


def test_renaming_a_group_moves_what_its_name_granted(scim, api) -> None:
    mapping_create(match_on=GroupMapping.MatchOn.DISPLAY_NAME, group="eng", project=api, role=Role.MEMBER)
    gus = scim.ok("post", "Users", {"userName": "gus@acme.test"}, status=201)
    group = scim.ok("post", "Groups", {"displayName": "eng", "members": [{"value": gus["id"]}]}, status=201)
    assert _role(gus["id"], api) == Role.MEMBER
    scim.patch(f"Groups/{group['id']}", {"op": "replace", "value": {"id": group["id"], "displayName": "eng-old"}})
    assert _role(gus["id"], api) is None


def test_scim_cannot_deactivate_or_delete_a_break_glass_account(scim) -> None:
    root = UserFactory(email="root@acme.test", is_staff=True)
    call_command("break_glass", "root@acme.test", stdout=io.StringIO())  # the operator marks it
    assert AuditEvent.objects.filter(kind="user.break_glass_changed", target="root@acme.test", via="command").exists()
    for method, body in [
        ("patch", {"Operations": [{"op": "replace", "path": "active", "value": False}]}),
        ("patch", {"Operations": [{"op": "Replace", "value": {"active": "False"}}]}),
        ("put", {"userName": "root@acme.test", "active": False}),
        ("delete", None),
    ]:
        response = scim.call(method, f"Users/{root.pk}", body)
        assert response.status_code == 403, response.content
        assert response.json()["schemas"] == ["urn:ietf:params:scim:api:messages:2.0:Error"]
    root.refresh_from_db()
    assert root.is_active
    refusals = AuditEvent.objects.filter(kind="scim.refused", target="root@acme.test")
    assert [event.detail["action"] for event in refusals.order_by("id")] == ["deactivate"] * 3 + ["delete"]
    assert scim.ok(
        "patch", f"Users/{root.pk}", {"Operations": [{"op": "replace", "path": "displayName", "value": "Root"}]}
    )


def test_two_scim_tokens_are_valid_during_a_rotation_and_a_revoked_one_is_not(db, settings) -> None:
    settings.SESSIONLEDGER_SCIM_TOKEN = ""
    out = io.StringIO()
    call_command("scim_token", "create", "okta-2025", stdout=out)
    old = out.getvalue().strip()
    out = io.StringIO()
    call_command("scim_token", "create", "okta-2026", stdout=out)
    new = out.getvalue().strip()
    assert Scim(old).call("get", "Users").status_code == 200
    assert Scim(new).call("get", "Users").status_code == 200
    call_command("scim_token", "revoke", old[:12], stdout=io.StringIO())
    assert Scim(old).call("get", "Users").status_code == 401
    assert Scim(new).call("get", "Users").status_code == 200
    assert {"scim_token.created", "scim_token.revoked"} <= set(_kinds())
    assert old not in str(list(AuditEvent.objects.values_list("detail", flat=True)))


def test_the_environment_token_still_works_beside_the_stored_ones(scim) -> None:
    assert scim.call("get", "Users").status_code == 200
    assert Scim("slscim_not-a-token").call("get", "Users").status_code == 401


def test_staff_map_a_group_through_the_api_and_others_get_a_404(scim, api) -> None:
    from rest_framework.test import APIClient

    hal = scim.ok("post", "Users", {"userName": "hal@acme.test"}, status=201)
    scim.ok("post", "Groups", {"displayName": "Support", "members": [{"value": hal["id"]}]}, status=201)
    outsider = APIClient()
    outsider.force_authenticate(UserFactory(email="mallory@acme.test"))
    assert outsider.get("/api/v1/group-mappings").status_code == 404
    assert (
        outsider.post("/api/v1/group-mappings", {"group": "Support", "project": "api"}, format="json").status_code
        == 404
    )
    staff = APIClient()
    staff.force_authenticate(UserFactory(email="ops@acme.test", is_staff=True))
    created = staff.post(
        "/api/v1/group-mappings", {"group": "Support", "project": "api", "role": "viewer"}, format="json"
    )
    assert created.status_code == 201, created.content
    assert _role(hal["id"], api) == Role.VIEWER
    assert (
        staff.post("/api/v1/group-mappings", {"group": "Support", "project": "api"}, format="json").status_code == 409
    )
    assert [m["group"] for m in staff.get("/api/v1/group-mappings").json()] == ["Support"]
    assert staff.delete(f"/api/v1/group-mappings/{created.json()['id']}").status_code == 204
    assert _role(hal["id"], api) is None
    assert {"group_mapping.created", "group_mapping.deleted"} <= set(_kinds())


def test_django_admin_creates_and_revokes_scim_tokens_and_maps_groups(db, settings, api) -> None:
    from django.contrib.messages import get_messages
    from django.test import Client

    settings.SESSIONLEDGER_SCIM_TOKEN = ""
    admin = Client()
    admin.force_login(User.objects.create_superuser("root@example.com", "pw-for-tests-1"))
    response = admin.post("/admin/governance/scimtoken/add/", {"name": "entra"})
    assert response.status_code == 302, response.content[:500]
    [message] = [str(m) for m in get_messages(response.wsgi_request) if "SCIM token" in str(m)]
    secret = message.rpartition(" ")[2]
    assert Scim(secret).call("get", "Users").status_code == 200
    ivy = Scim(secret).ok("post", "Users", {"userName": "ivy@acme.test"}, status=201)
    Scim(secret).ok("post", "Groups", {"displayName": "QA", "members": [{"value": ivy["id"]}]}, status=201)

    added = admin.post(
        "/admin/governance/groupmapping/add/",
        {"match_on": "displayName", "group": "qa", "project": api.pk, "role": "member"},
    )
    assert added.status_code == 302, added.content[:2000]
    assert _role(ivy["id"], api) == Role.MEMBER  # at once, for the people already in the group
    [token] = ScimToken.objects.all()
    admin.post("/admin/governance/scimtoken/", {"action": "revoke", "_selected_action": [str(token.pk)]})
    assert Scim(secret).call("get", "Users").status_code == 401
