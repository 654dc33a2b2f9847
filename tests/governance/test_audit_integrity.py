"""The audit trail's integrity: the runtime login may only append, the hash chain names tampering,
erasure keeps the chain whole (docs/security.md "Audit trail")."""

from __future__ import annotations

import psycopg
import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connection
from django_scopes import scopes_disabled

from governance.erasure import user_erase
from governance.integrity import prune, verify
from projects.audit_trail import record
from projects.models import AuditEvent

BOTH = ["default", "owner"]


def events(project, count: int) -> list[int]:
    with scopes_disabled():
        return [record(kind="project.settings_changed", project=project, target=f"change {n}").pk for n in range(count)]


def owner_sql(statement: str, params: list) -> None:
    with connection.cursor() as cursor:  # the suite's harness logs in as the owner
        cursor.execute(statement, params)


@pytest.mark.django_db(transaction=True, databases=BOTH)
def test_verify_audit_names_an_edited_a_deleted_and_a_reordered_event(world, capsys) -> None:
    ours, theirs = events(world.project, 5), events(world.other_project, 3)
    call_command("verify_audit")
    assert "audit trail intact" in capsys.readouterr().out

    owner_sql("UPDATE projects_auditevent SET target = 'nothing happened' WHERE id = %s", [ours[1]])
    owner_sql("DELETE FROM projects_auditevent WHERE id = %s", [ours[3]])
    # The first two events of the other project change places.
    owner_sql("UPDATE projects_auditevent SET id = -id WHERE id IN (%s, %s)", theirs[:2])
    owner_sql("UPDATE projects_auditevent SET id = %s WHERE id = %s", [theirs[1], -theirs[0]])
    owner_sql("UPDATE projects_auditevent SET id = %s WHERE id = %s", [theirs[0], -theirs[1]])

    with pytest.raises(CommandError, match="tampered"):
        call_command("verify_audit")
    report = capsys.readouterr().err.splitlines()
    assert report == [
        f"edited: event {ours[1]} (project {world.project.pk})",
        f"deleted: row(s) missing before event {ours[4]} (project {world.project.pk})",
        f"reordered: event {theirs[0]} (project {world.other_project.pk})",
        f"reordered: event {theirs[1]} (project {world.other_project.pk})",
    ]


@pytest.mark.django_db(transaction=True, databases=BOTH)
def test_a_forged_chain_start_is_a_deletion_but_retention_leaves_the_chain_whole(world) -> None:
    ours = events(world.project, 4)
    owner_sql("DELETE FROM projects_auditevent WHERE id = %s", [ours[0]])
    assert [str(f) for f in verify()] == [
        f"deleted: row(s) missing before event {ours[1]} (project {world.project.pk})"
    ]
    owner_sql("UPDATE projects_auditevent SET at = now() - interval '400 days' WHERE id = ANY(%s)", [ours[1:3]])
    assert verify()  # moving events back in time is an edit too
    # retention, as the owner: removes the oldest rows and anchors the chain where they end
    with scopes_disabled():
        first_kept = AuditEvent.objects.get(pk=ours[3])
    assert prune(project_id=world.project.pk, before=first_kept.at) == 2
    assert verify() == []
    later = events(world.project, 1)
    assert verify() == [] and later[0] > ours[3]


@pytest.mark.django_db(transaction=True, databases=BOTH)
def test_erasure_pseudonymises_the_trail_without_breaking_its_chain(world) -> None:
    with scopes_disabled():
        record(kind="project.settings_changed", project=world.project, actor=world.member, target="by them")
        record(kind="membership.added", project=world.project, target=world.member.email)
    member_id, email = world.member.pk, world.member.email
    user_erase(user=world.member)
    with scopes_disabled():
        assert not AuditEvent.objects.filter(actor_email=email).exists()
        assert not AuditEvent.objects.filter(target__iexact=email).exists()
        assert AuditEvent.objects.filter(actor_email=f"erased user #{member_id}").count() == 1
    assert verify() == []


def runtime_login() -> psycopg.Connection:
    """A connection as web and worker log in: DATABASE_URL's role, to the test database."""
    db = settings.DATABASES["default"]
    return psycopg.connect(
        host=db["HOST"] or None,
        port=db["PORT"] or None,
        dbname=db["NAME"],
        user=settings.DATABASE_RUNTIME_USER,
        password=getattr(settings, "DATABASE_RUNTIME_PASSWORD", "") or None,  # kept aside by tests/conftest.py
        autocommit=True,
    )


needs_two_logins = pytest.mark.skipif(
    not settings.DATABASE_ROLES_SPLIT, reason="one login (DATABASE_OWNER_URL unset): run under config.localstack"
)


@needs_two_logins
@pytest.mark.django_db(transaction=True, databases=BOTH)
def test_the_runtime_login_cannot_update_or_delete_audit_events(world) -> None:
    mine = events(world.project, 1)[0]
    with runtime_login() as runtime:
        assert runtime.execute("SELECT current_user").fetchone() == (settings.DATABASE_RUNTIME_USER,)
        added = runtime.execute(
            "INSERT INTO projects_auditevent (at, project_slug, actor_email, kind, target, detail, via, user_agent)"
            " VALUES (now(), '', '', 'retention.run', 'by the runtime login', '{}', 'system', '') RETURNING id"
        ).fetchone()
        assert added is not None
        assert runtime.execute("SELECT count(*) FROM projects_auditevent").fetchone() == (2,)
        # outside a project scope it reads tenant rows as the owner did
        assert runtime.execute("SELECT count(*) FROM projects_membership").fetchone()[0] >= 4
        for statement in (
            f"UPDATE projects_auditevent SET target = 'rewritten' WHERE id = {mine}",
            f"DELETE FROM projects_auditevent WHERE id = {mine}",
            "TRUNCATE projects_auditevent",
            f"UPDATE projects_auditevent SET hash = '' WHERE id = {added[0]}",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                runtime.execute(statement)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # nor take over the owner's objects
            runtime.execute("DROP TRIGGER audit_chain ON projects_auditevent")
    assert verify() == []
