"""Every administrative event writes exactly one audit row with who, what, when and from where; the
web role can add and read its project's rows but never change or remove one."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from django.test import Client
from django.utils import timezone
from django_scopes import scopes_disabled
from rest_framework.test import APIClient

from governance.retention import audit_events_expire
from projects import device, services
from projects.audit_trail import record
from projects.models import AuditEvent, Invitation, Membership
from projects.scoping import project_scope
from sessions_app.retention import retention_apply
from tests.factories import UserFactory, make_token

SCIM_TOKEN = "scim-token-for-tests-0123456789"


def exactly_one(kind: str, action: Callable[[], object]) -> AuditEvent:
    """Run ``action``; exactly one new event of ``kind`` must exist afterwards."""
    with scopes_disabled():
        before = set(AuditEvent.objects.filter(kind=kind).values_list("pk", flat=True))
    action()
    with scopes_disabled():
        new = list(AuditEvent.objects.filter(kind=kind).exclude(pk__in=before))
    assert len(new) == 1, [(e.kind, e.target) for e in new]
    return new[0]


def bearer(user, **options) -> APIClient:
    client = APIClient(HTTP_USER_AGENT="audit-test/1.0", REMOTE_ADDR="203.0.113.7")
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_token(user, **options)}")
    return client


def member_url(world, user) -> str:
    with scopes_disabled():
        membership = Membership.objects.get(project=world.project, user=user)
    return f"/api/v1/projects/{world.project.slug}/members/{membership.pk}"


def test_a_role_change_records_who_what_and_from_where(world) -> None:
    admin = bearer(world.admin)
    event = exactly_one(
        "membership.role_changed",
        lambda: admin.patch(member_url(world, world.member), {"role": "viewer"}, format="json"),
    )
    assert (event.actor_email, event.target, event.project_id) == (
        world.admin.email,
        world.member.email,
        world.project.pk,
    )
    assert event.detail == {"from": "member", "to": "viewer"}
    assert (event.via, event.ip, event.user_agent) == ("api", "203.0.113.7", "audit-test/1.0")


def test_adding_a_member_is_recorded(world) -> None:
    exactly_one(
        "membership.added", lambda: call_command("add_member", world.project.slug, world.outsider.email, role="viewer")
    )


def test_removing_a_member_is_recorded(world) -> None:
    admin = bearer(world.admin)
    exactly_one("membership.removed", lambda: admin.delete(member_url(world, world.viewer)))


def test_an_invitation_is_recorded_without_its_token(world) -> None:
    admin = bearer(world.admin)
    url = f"/api/v1/projects/{world.project.slug}/invitations"
    event = exactly_one("invitation.created", lambda: admin.post(url, {"email": "new@example.com"}, format="json"))
    with scopes_disabled():
        assert Invitation.objects.get().token not in json.dumps(event.detail) + event.target


def test_revoking_an_invitation_is_recorded(world) -> None:
    admin = bearer(world.admin)
    url = f"/api/v1/projects/{world.project.slug}/invitations"
    invitation_id = admin.post(url, {"email": "new@example.com"}, format="json").json()["id"]
    exactly_one("invitation.revoked", lambda: admin.delete(f"{url}/{invitation_id}"))


def test_accepting_an_invitation_is_recorded(world) -> None:
    with project_scope(world.project):
        invitation = services.invitation_create(
            project=world.project, email=world.outsider.email, role="viewer", invited_by=world.admin
        )
        exactly_one(
            "invitation.accepted", lambda: services.invitation_accept(invitation=invitation, user=world.outsider)
        )


def test_creating_a_token_is_recorded_without_its_secret(world) -> None:
    client = bearer(world.member)
    made: dict[str, str] = {}
    event = exactly_one(
        "token.created",
        lambda: made.update(client.post("/api/v1/tokens", {"name": "ci"}, format="json").json()),
    )
    assert made["secret"] not in f"{event.target} {event.detail}"
    assert (event.target, event.detail["prefix"]) == (world.member.email, made["prefix"])


def test_revoking_a_token_and_its_children_is_one_event(world) -> None:
    client = bearer(world.member)
    child = client.post("/api/v1/tokens", {"name": "child"}, format="json").json()
    parent_id = next(t["id"] for t in client.get("/api/v1/tokens").json() if t["id"] != child["id"])
    event = exactly_one("token.revoked", lambda: bearer(world.member).delete(f"/api/v1/tokens/{parent_id}"))
    assert event.detail["children_revoked"] == 1


@pytest.mark.parametrize(("approve", "kind"), [(True, "device.approved"), (False, "device.denied")])
def test_a_device_login_decision_is_recorded(world, approve: bool, kind: str) -> None:
    started = device.device_start(client_name="laptop")
    grant = device.device_grant_for_user_code(started.user_code)
    assert grant is not None
    exactly_one(kind, lambda: device.device_decide(grant=grant, user=world.member, approve=approve))


@pytest.fixture
def session(world, ingest):
    return ingest(world.project, world.member, "Audited work", seed="audit")


def test_share_links_created_opened_and_revoked_are_recorded(world, session) -> None:
    client = bearer(world.member)
    url = f"/api/v1/projects/{world.project.slug}/sessions/{session.pk}/shares"
    made: dict[str, str] = {}
    exactly_one("share.created", lambda: made.update(client.post(url, {"days": 3}, format="json").json()))
    token = made["url"].rsplit("/share/", 1)[1]
    opened = exactly_one("share.opened", lambda: Client().get(f"/share/{token}"))
    assert opened.actor_email == "" and token not in opened.target
    exactly_one("share.revoked", lambda: client.delete(f"{url}/{made['link']['id']}"))


def test_changing_project_settings_is_recorded(world) -> None:
    admin = bearer(world.admin)
    url = f"/api/v1/projects/{world.project.slug}"
    event = exactly_one("project.settings_changed", lambda: admin.patch(url, {"retention_days": 30}, format="json"))
    assert event.detail == {"retention_days": 30}


def test_switching_sharing_off_is_recorded(world, client) -> None:
    client.force_login(world.admin)
    settings_page = f"/p/{world.project.slug}/settings/shares"
    event = exactly_one(
        "project.settings_changed", lambda: client.post(settings_page, {"action": "sharing", "enabled": "0"})
    )
    assert event.detail == {"sharing_enabled": False} and event.via == "web"


def test_deleting_a_session_is_recorded(world, session) -> None:
    admin = bearer(world.admin)
    exactly_one("session.deleted", lambda: admin.delete(f"/api/v1/projects/{world.project.slug}/sessions/{session.pk}"))


def test_a_retention_run_that_deletes_is_one_event(world, session) -> None:
    with scopes_disabled():
        type(session).objects.filter(pk=session.pk).update(created_at=timezone.now() - timedelta(days=40))
    world.project.retention_days = 30
    world.project.save()
    event = exactly_one("retention.run", lambda: retention_apply(project=world.project))
    assert event.detail["sessions_deleted"] == 1 and event.via == "system"


def test_creating_archiving_and_deleting_a_project_are_recorded(world) -> None:
    staff = bearer(UserFactory(email="ops@example.com", is_staff=True))
    exactly_one("project.created", lambda: staff.post("/api/v1/projects", {"slug": "new-one"}, format="json"))
    exactly_one("project.archived", lambda: staff.patch("/api/v1/projects/new-one", {"archived": True}, format="json"))
    exactly_one("project.deleted", lambda: staff.delete("/api/v1/projects/new-one"))


def test_scim_provisioning_deactivation_reactivation_and_deletion_are_recorded(world, settings) -> None:
    settings.SESSIONLEDGER_SCIM_TOKEN = SCIM_TOKEN
    scim = APIClient()
    scim.credentials(HTTP_AUTHORIZATION=f"Bearer {SCIM_TOKEN}")
    made: dict[str, str] = {}
    event = exactly_one(
        "user.provisioned",
        lambda: made.update(scim.post("/scim/v2/Users", {"userName": "eve@example.com"}, format="json").json()),
    )
    assert event.via == "scim" and event.target == "eve@example.com"
    url = f"/scim/v2/Users/{made['id']}"

    def active(value: bool) -> object:
        return scim.patch(url, {"Operations": [{"op": "replace", "path": "active", "value": value}]}, format="json")

    exactly_one("user.deactivated", lambda: active(False))
    exactly_one("user.reactivated", lambda: active(True))
    exactly_one("user.deleted", lambda: scim.delete(url))


def test_the_deactivate_command_is_recorded_as_a_command(world) -> None:
    event = exactly_one("user.deactivated", lambda: call_command("deactivate_user", world.member.email))
    assert event.via == "command" and event.actor_email == ""


def test_the_web_role_cannot_change_or_remove_an_event(world) -> None:
    with project_scope(world.project):
        event = record(kind="project.settings_changed", project=world.project, target="inserted by the web role")
        for statement in (
            "UPDATE projects_auditevent SET target = 'rewritten' WHERE id = %s",
            "DELETE FROM projects_auditevent WHERE id = %s",
        ):
            with (
                pytest.raises(DatabaseError, match="permission denied"),
                transaction.atomic(),
                connection.cursor() as cursor,
            ):
                cursor.execute(statement, [event.pk])
    with scopes_disabled():
        assert AuditEvent.objects.get(pk=event.pk).target == "inserted by the web role"


def test_the_web_role_sees_and_adds_only_its_projects_events(world) -> None:
    with scopes_disabled():
        theirs = record(kind="project.settings_changed", project=world.other_project, target="theirs")
    with project_scope(world.project):
        assert not AuditEvent.objects.filter(pk=theirs.pk).exists()
        with pytest.raises(DatabaseError, match="row-level security"), transaction.atomic():
            record(kind="project.settings_changed", project=world.other_project, target="forged")


def test_audit_api_filters_and_exports_and_hides_from_outsiders(world) -> None:
    admin = bearer(world.admin)
    admin.patch(member_url(world, world.member), {"role": "viewer"}, format="json")
    admin.post(f"/api/v1/projects/{world.project.slug}/invitations", {"email": "x@example.com"}, format="json")
    url = f"/api/v1/projects/{world.project.slug}/audit"
    assert bearer(world.outsider).get(url).status_code == 404
    assert bearer(world.other_admin).get(url).status_code == 404
    assert bearer(world.member).get(url).status_code == 403
    rows = admin.get(url, {"kind": "membership.role_changed"}).json()["results"]
    assert [(r["kind"], r["actor_email"]) for r in rows] == [("membership.role_changed", world.admin.email)]
    assert admin.get(url, {"actor": "nobody@example.com"}).json()["results"] == []
    jsonl = b"".join(admin.get(url, {"format": "jsonl"}).streaming_content).decode().splitlines()
    assert {json.loads(line)["kind"] for line in jsonl} >= {"membership.role_changed", "invitation.created"}
    csv_text = b"".join(admin.get(url, {"format": "csv", "kind": "invitation.created"}).streaming_content).decode()
    assert csv_text.splitlines()[0].startswith("at,project_slug,actor_email,kind")
    assert len(csv_text.splitlines()) == 2


def test_a_refused_download_is_a_json_error_not_an_empty_file(world) -> None:
    url = f"/api/v1/projects/{world.project.slug}/audit"
    refused = bearer(world.admin).get(url, {"format": "csv", "since": "not a date"})
    assert refused.status_code == 400
    assert refused["Content-Type"] == "application/json"
    assert refused.json()["error"]["field"] == "since"
    hidden = bearer(world.admin).get("/api/v1/audit", {"format": "csv"})
    assert hidden.status_code == 404 and hidden["Content-Type"] == "application/json"
    assert hidden.json()["error"]["code"]


def test_the_deployment_audit_api_is_for_staff_only(world) -> None:
    assert bearer(world.admin).get("/api/v1/audit").status_code == 404
    staff = bearer(UserFactory(email="ops@example.com", is_staff=True))
    bearer(world.admin).patch(f"/api/v1/projects/{world.project.slug}", {"name": "Renamed"}, format="json")
    rows = staff.get("/api/v1/audit", {"project": world.project.slug}).json()["results"]
    assert "project.settings_changed" in {r["kind"] for r in rows}


def test_the_audit_page_is_for_project_admins(world, client) -> None:
    bearer(world.admin).patch(member_url(world, world.member), {"role": "viewer"}, format="json")
    page = f"/p/{world.project.slug}/audit"
    client.force_login(world.outsider)
    assert client.get(page).status_code == 404
    client.force_login(world.member)
    assert client.get(page).status_code in (403, 404)
    client.force_login(world.admin)
    html = client.get(page, {"kind": "membership.role_changed"}).content.decode()
    assert "membership.role_changed" in html and world.member.email in html
    assert b"membership.role_changed" in b"".join(client.get(page, {"format": "csv"}).streaming_content)


@pytest.mark.django_db(transaction=True, databases=["default", "owner"])
def test_events_older_than_the_audit_retention_expire(world, settings) -> None:
    settings.SESSIONLEDGER_AUDIT_DAYS = 30
    with scopes_disabled():
        old = record(kind="project.settings_changed", project=world.project, target="old")
        history = AuditEvent.objects.filter(project_id=world.project.pk, pk__lte=old.pk)  # time follows the chain
        history.update(at=timezone.now() - timedelta(days=31))
        expired = history.count()
        fresh = record(kind="project.settings_changed", project=world.project, target="fresh")
    assert audit_events_expire() == expired
    with scopes_disabled():
        assert list(AuditEvent.objects.filter(pk__in=[old.pk, fresh.pk]).values_list("target", flat=True)) == ["fresh"]
