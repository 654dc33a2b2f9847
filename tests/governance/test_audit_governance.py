"""Reading the audit trail is audited once per request; a project's audit trail has its own retention,
a legal hold keeps a project's data past every retention and refuses erasure; erasure reaches Django
admin's change history and the address and user agent of the person's events; SCIM's DELETE itemises."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone
from django_scopes import scopes_disabled
from rest_framework.test import APIClient

from governance.audit import EXPORT_CHUNK
from governance.erasure import user_erase
from governance.retention import audit_events_expire
from projects.audit_trail import record
from projects.models import AuditEvent, Membership, Project, User
from sessions_app.models import Session
from sessions_app.retention import retention_apply
from tests.factories import UserFactory
from tests.governance.test_audit_trail import SCIM_TOKEN, bearer, exactly_one

ADDRESS = {"REMOTE_ADDR": "198.51.100.4", "HTTP_USER_AGENT": "erased-browser/1.0"}


def test_each_read_of_the_trail_through_the_api_is_one_event_naming_its_filters(world) -> None:
    admin = bearer(world.admin)
    url = f"/api/v1/projects/{world.project.slug}/audit"
    event = exactly_one("audit.read", lambda: admin.get(url, {"kind": "membership.added", "limit": 1}))
    assert (event.actor_email, event.project_id, event.target) == (world.admin.email, world.project.pk, "acme-api")
    assert event.detail == {"filters": {"kind": "membership.added"}}
    assert event.via == "api"
    exactly_one("audit.read", lambda: admin.get(url, {"offset": 1, "limit": 1}))  # the next page is a request too


def test_an_export_is_one_event_however_many_rows_it_streams(world) -> None:
    with scopes_disabled():
        AuditEvent.objects.bulk_create(
            [
                AuditEvent(project_id=world.project.pk, kind="share.opened", target=str(n))
                for n in range(EXPORT_CHUNK + 5)
            ]
        )
    admin = bearer(world.admin)
    url = f"/api/v1/projects/{world.project.slug}/audit"

    def download() -> None:
        body = b"".join(admin.get(url, {"format": "csv", "kind": "share.opened"}).streaming_content)
        assert len(body.splitlines()) == EXPORT_CHUNK + 6

    event = exactly_one("audit.exported", download)
    assert event.detail == {"format": "csv", "filters": {"kind": "share.opened"}}
    with scopes_disabled():
        assert not AuditEvent.objects.filter(kind="audit.read").exists()


def test_reading_and_downloading_the_audit_page_are_recorded(world) -> None:
    client = Client(**ADDRESS)
    client.force_login(world.admin)
    page = f"/p/{world.project.slug}/audit"
    read = exactly_one("audit.read", lambda: client.get(page, {"actor": world.member.email}))
    assert (read.actor_email, read.via, read.detail) == (
        world.admin.email,
        "web",
        {"filters": {"actor": world.member.email}},
    )
    exported = exactly_one("audit.exported", lambda: b"".join(client.get(page, {"format": "jsonl"}).streaming_content))
    assert exported.detail == {"format": "jsonl", "filters": {}}


def test_a_refused_read_of_the_trail_records_nothing(world) -> None:
    bearer(world.member).get(f"/api/v1/projects/{world.project.slug}/audit")
    bearer(world.admin).get("/api/v1/audit")
    with scopes_disabled():
        assert not AuditEvent.objects.filter(kind__startswith="audit.").exists()


def test_staff_reading_the_deployments_trail_is_a_deployment_event(world) -> None:
    staff = UserFactory(email="ops@example.com", is_staff=True)
    event = exactly_one("audit.read", lambda: bearer(staff).get("/api/v1/audit", {"project": "acme-api"}))
    assert (event.project_id, event.actor_email, event.detail) == (
        None,
        staff.email,
        {"filters": {"project": "acme-api"}},
    )


def _aged(project: Project | None, days: int, target: str) -> AuditEvent:
    """An event ``days`` old; the chain's earlier events are made at least as old, since time follows a
    chain's order in life, and retention removes a chain's oldest rows (``governance.integrity.prune``)."""
    at = timezone.now() - timedelta(days=days)
    with scopes_disabled():
        event = record(kind="project.settings_changed", project=project, target=target)
        chain = AuditEvent.objects.filter(project_id=project.pk if project else None, pk__lte=event.pk)
        chain.filter(at__gt=at).update(at=at)
    return event


def _chain_up_to(event: AuditEvent) -> int:
    with scopes_disabled():
        return AuditEvent.objects.filter(project_id=event.project_id, pk__lte=event.pk).count()


def _left(*events: AuditEvent) -> set[str]:
    with scopes_disabled():
        return set(AuditEvent.objects.filter(pk__in=[e.pk for e in events]).values_list("target", flat=True))


@pytest.mark.django_db(transaction=True, databases=["default", "owner"])
def test_a_projects_audit_retention_deletes_its_older_events_as_one_summary_event(world, settings) -> None:
    settings.SESSIONLEDGER_AUDIT_DAYS = 730
    call_command("project_policy", world.project.slug, "--audit-days", "30")
    older, old = _aged(world.project, 300, "older"), _aged(world.project, 31, "old")
    expired = _chain_up_to(old)
    fresh = _aged(world.project, 29, "fresh")
    theirs = _aged(world.other_project, 300, "other project, default retention")
    deployment = _aged(None, 300, "deployment-wide")

    summary = exactly_one("audit.expired", lambda: audit_events_expire())

    assert _left(old, older, fresh, theirs, deployment) == {
        "fresh",
        "other project, default retention",
        "deployment-wide",
    }
    assert (summary.project_id, summary.via, summary.actor_email) == (world.project.pk, "system", "")
    assert summary.detail["events_deleted"] == expired


def test_changing_a_projects_audit_retention_is_recorded_and_staff_only(world) -> None:
    event = exactly_one(
        "project.audit_retention_changed",
        lambda: call_command("project_policy", world.project.slug, "--audit-days", "90"),
    )
    assert (event.detail, event.via) == ({"from": None, "to": 90}, "command")
    refused = bearer(world.admin).patch(
        f"/api/v1/projects/{world.project.slug}", {"audit_retention_days": 1}, format="json"
    )
    assert refused.status_code in (200, 400)
    with scopes_disabled():
        assert Project.objects.get(pk=world.project.pk).audit_retention_days == 90


@pytest.fixture
def session(world, ingest):
    return ingest(world.project, world.member, "Held work", seed="held")


@pytest.mark.django_db(transaction=True, databases=["default", "owner"])
def test_a_legal_hold_suspends_session_access_log_and_audit_retention(world, session, settings) -> None:
    settings.SESSIONLEDGER_AUDIT_DAYS = 30
    held = exactly_one(
        "project.legal_hold_set", lambda: call_command("project_policy", world.project.slug, "--hold", "Acme v. Globex")
    )
    assert (held.detail, held.target) == ({"reason": "Acme v. Globex"}, "acme-api")
    with scopes_disabled():
        Session.objects.filter(pk=session.pk).update(created_at=timezone.now() - timedelta(days=40))
    project = Project.objects.get(pk=world.project.pk)
    project.retention_days = 30
    project.save()
    old_event = _aged(project, 400, "kept by the hold")

    assert retention_apply(project=project) == 0
    audit_events_expire()
    with scopes_disabled():
        assert Session.objects.filter(pk=session.pk).exists()
    assert _left(old_event) == {"kept by the hold"}

    exactly_one("project.legal_hold_released", lambda: call_command("project_policy", "acme-api", "--release"))
    assert retention_apply(project=Project.objects.get(pk=project.pk)) == 1
    audit_events_expire()
    assert _left(old_event) == set()


def test_a_legal_hold_needs_a_reason(world) -> None:
    with pytest.raises(CommandError, match="reason"):
        call_command("project_policy", world.project.slug, "--hold", "  ")


def test_erasing_someone_with_anything_in_a_held_project_is_refused_naming_it(world, session, api_as) -> None:
    call_command("project_policy", world.project.slug, "--hold", "Regulator's request")
    staff = UserFactory(email="ops@example.com", is_staff=True)
    refused = api_as(staff).post(f"/api/v1/users/{world.member.pk}/erase")
    assert refused.status_code == 409
    assert "acme-api" in refused.json()["error"]["message"]
    assert refused.json()["error"]["projects"] == ["acme-api"]
    with scopes_disabled():
        assert User.objects.filter(pk=world.member.pk).exists() and Session.objects.filter(pk=session.pk).exists()
        assert not AuditEvent.objects.filter(kind="user.erased").exists()
    with pytest.raises(CommandError, match="acme-api"):
        call_command("erase_user", world.member.email)
    # Someone with nothing in the held project is erased as before.
    assert api_as(staff).post(f"/api/v1/users/{world.other_admin.pk}/erase").status_code == 200


def test_erasure_leaves_no_address_in_django_admins_history_and_no_ip_or_user_agent(
    world, django_capture_on_commit_callbacks
) -> None:
    person = world.member
    root = User.objects.create_superuser("root@example.com", "pw-for-tests-1")
    with scopes_disabled():
        membership = Membership.objects.get(user=person, project=world.project)
    for obj, message in (
        (person, '[{"changed": {"fields": ["Name"]}}]'),
        (membership, f"Changed role of {person.email.upper()} to viewer"),
    ):
        LogEntry.objects.log_actions(
            user_id=root.pk, queryset=[obj], action_flag=CHANGE, change_message=message, single_object=True
        )
    client = Client(**ADDRESS)
    client.post("/accounts/login/", {"login": person.email, "password": "pw-for-tests-1"})  # auth.login by them
    Client(**ADDRESS).post("/accounts/login/", {"login": person.email, "password": "wrong"})  # about them
    with scopes_disabled():
        theirs = list(AuditEvent.objects.filter(actor_id=person.pk).values_list("pk", flat=True))
        theirs += list(AuditEvent.objects.filter(target=person.email).values_list("pk", flat=True))
        assert AuditEvent.objects.filter(pk__in=theirs, ip="198.51.100.4").count() >= 2

    with django_capture_on_commit_callbacks(execute=True):
        user_erase(user=person)

    pseudonym = f"erased user #{person.pk}"
    entries = set(LogEntry.objects.values_list("object_repr", "change_message"))
    assert entries == {
        (pseudonym, '[{"changed": {"fields": ["Name"]}}]'),
        (f"{pseudonym} in acme-api (member)", f"Changed role of {pseudonym} to viewer"),
    }
    with scopes_disabled():
        rows = AuditEvent.objects.filter(pk__in=theirs)
        assert rows.count() == len(set(theirs))
        assert set(rows.filter(actor_id__isnull=True).values_list("ip", "user_agent")) == {(None, "")}
        assert set(rows.filter(actor_id=person.pk).values_list("ip", "user_agent")) <= {(None, "")}
        assert not AuditEvent.objects.filter(ip="198.51.100.4").exclude(kind="user.erased").exists()


def test_scim_delete_is_one_itemised_event(world, settings) -> None:
    settings.SESSIONLEDGER_SCIM_TOKEN = SCIM_TOKEN
    scim = APIClient()
    scim.credentials(HTTP_AUTHORIZATION=f"Bearer {SCIM_TOKEN}")
    bearer(world.member)  # a live token the delete must end
    with scopes_disabled():
        before = AuditEvent.objects.filter(kind="user.deactivated").count()
    event = exactly_one("user.deleted", lambda: scim.delete(f"/scim/v2/Users/{world.member.pk}"))
    assert event.detail["tokens"] == 1 and event.detail["memberships"] == 1
    assert set(event.detail) == {
        "tokens",
        "device_grants",
        "share_links",
        "memberships",
        "invitations",
        "browser_sessions",
    }
    with scopes_disabled():
        assert AuditEvent.objects.filter(kind="user.deactivated").count() == before


def test_nothing_of_a_held_project_can_be_deleted_by_api_page_or_admin(world, session, api_as) -> None:
    """A hold that retention respects but a delete button ignores would hold nothing."""
    call_command("project_policy", world.project.slug, "--hold", "Acme v. Globex")
    admin = api_as(world.admin)

    refused_session = admin.delete(f"/api/v1/projects/{world.project.slug}/sessions/{session.pk}")
    refused_project = admin.delete(f"/api/v1/projects/{world.project.slug}")
    page = Client()
    page.force_login(world.admin)
    refused_page = page.post(f"/p/{world.project.slug}/s/{session.pk}/delete", follow=True)
    staff = UserFactory(email="ops@example.com", is_staff=True, is_superuser=True)
    page.force_login(staff)
    admin_form = page.get(f"/admin/projects/project/{world.project.pk}/delete/")

    assert (refused_session.status_code, refused_session.json()["error"]["code"]) == (409, "legal_hold")
    assert (refused_project.status_code, refused_project.json()["error"]["code"]) == (409, "legal_hold")
    assert "under legal hold" in refused_page.content.decode()
    assert admin_form.status_code == 403
    with scopes_disabled():
        assert Session.objects.filter(pk=session.pk).exists() and Project.objects.filter(pk=world.project.pk).exists()
    assert not AuditEvent.objects.filter(kind__in=["session.deleted", "project.deleted"]).exists()


@pytest.mark.django_db(transaction=True, databases=["default", "owner"])
def test_expire_audit_runs_the_trails_retention_where_a_cronjob_has_the_owners_login(world, settings) -> None:
    settings.SESSIONLEDGER_AUDIT_DAYS = 30
    old = _aged(world.project, 31, "old")
    expired = _chain_up_to(old)
    out = io.StringIO()

    call_command("expire_audit", stdout=out)

    assert out.getvalue().strip() == f"{expired} audit event(s) expired"
    assert _left(old) == set()
