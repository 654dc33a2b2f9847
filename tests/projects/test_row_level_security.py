"""The second wall: PostgreSQL refuses other tenants' rows even to code that asks for them."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.conf import settings
from django.db import connection

from projects.rls import TENANT_TABLES
from projects.scoping import project_scope


def _scalar(sql: str, params: list | None = None) -> object:
    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])
        return cursor.fetchone()[0]


@pytest.fixture
def two_tenants(world, ingest):
    ingest(world.project, world.member, "ours")
    ingest(world.other_project, world.other_admin, "theirs")
    return world


def test_raw_sql_inside_a_scope_sees_only_that_projects_rows(two_tenants) -> None:
    with project_scope(two_tenants.project):
        assert _scalar("SELECT current_user") == settings.DATABASE_WEB_ROLE
        assert _scalar("SELECT count(*) FROM sessions_app_session") == 1
        assert (
            _scalar("SELECT count(*) FROM sessions_app_session WHERE project_id = %s", [two_tenants.other_project.pk])
            == 0
        )
        assert _scalar("SELECT count(*) FROM projects_membership") == 3


def test_raw_sql_as_the_web_role_without_a_project_returns_no_rows(two_tenants) -> None:
    with project_scope(two_tenants.project):
        _scalar("SELECT set_config('sessionledger.project', '', true)")
        assert _scalar("SELECT count(*) FROM sessions_app_session") == 0
        assert _scalar("SELECT count(*) FROM projects_membership") == 0


def test_the_web_role_cannot_write_into_another_project(two_tenants) -> None:
    from django.db import DatabaseError, transaction

    with (
        project_scope(two_tenants.project),
        pytest.raises(DatabaseError, match="row-level security"),
        transaction.atomic(),
    ):
        _scalar("UPDATE projects_membership SET project_id = %s RETURNING 1", [two_tenants.other_project.pk])


def test_leaving_the_scope_restores_the_connecting_role(two_tenants) -> None:
    owner = _scalar("SELECT current_user")
    with project_scope(two_tenants.project):
        pass
    assert _scalar("SELECT current_user") == owner
    assert _scalar("SELECT count(*) FROM sessions_app_session") == 2


def test_the_web_role_owns_nothing_and_cannot_bypass(db) -> None:
    role = settings.DATABASE_WEB_ROLE
    assert _scalar("SELECT rolbypassrls OR rolsuper FROM pg_roles WHERE rolname = %s", [role]) is False
    assert _scalar("SELECT count(*) FROM pg_tables WHERE tableowner = %s", [role]) == 0


def test_every_scoped_model_has_row_level_security(db) -> None:
    scoped = {m._meta.db_table for m in apps.get_models() if hasattr(m._default_manager, "with_scopes_disabled")}
    assert scoped == set(TENANT_TABLES)
    for table in scoped:
        assert _scalar("SELECT relrowsecurity FROM pg_class WHERE relname = %s", [table]) is True


def test_the_app_connects_as_an_owner_that_is_no_superuser(db) -> None:
    """As on a managed PostgreSQL: the embedded stack's owner has CREATEROLE and CREATEDB, nothing more
    (``config/localstack.py``), and everything above — the web role, the policies, the view — is its work."""
    from config.localstack import OWNER

    row = _scalar(
        "SELECT (session_user, rolsuper, rolcreaterole, rolcreatedb)::text FROM pg_roles WHERE rolname = session_user"
    )
    if not str(row).startswith(f"({OWNER},"):
        pytest.skip(f"connected as {row}: DATABASE_URL names a PostgreSQL of its own")
    assert row == f"({OWNER},f,t,t)"
    assert (
        _scalar("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'sessions_app_%%' AND tableowner <> %s", [OWNER])
        == 0
    )


def test_a_scope_cannot_reach_another_projects_sessions_through_the_search_view(world, ingest) -> None:
    from django.db import DatabaseError, transaction

    from sessions_app import selectors

    ours = ingest(world.project, world.member, "Tune the flux capacitor", seed="ours", files_touched=["src/ours.py"])
    theirs = ingest(
        world.other_project,
        world.other_admin,
        "Tune the flux capacitor",
        seed="theirs",
        files_touched=["src/theirs.py"],
    )
    view = "sessions_app_session_tenant"
    with project_scope(world.project):
        sessions = selectors.session_queryset(project=world.project)
        assert [s.pk for s in selectors.session_search(sessions, "capacitor")] == [ours.pk]
        assert [s.pk for s in selectors.session_files(sessions, ["src/ours.py", "src/theirs.py"])] == [ours.pk]
        # asked by hand for the other project's row, by id, word or file: the view holds none of it
        assert _scalar(f"SELECT count(*) FROM {view} WHERE id = %s", [theirs.pk]) == 0
        assert _scalar(f"SELECT array_agg(id) FROM {view} WHERE search_vector @@ to_tsquery('capacitor')") == [ours.pk]
        assert _scalar(f"SELECT count(*) FROM {view} WHERE files_touched ? 'src/theirs.py'") == 0
        _scalar("SELECT set_config('sessionledger.project', '', true)")
        assert _scalar(f"SELECT count(*) FROM {view}") == 0  # no project named: nothing
        with pytest.raises(DatabaseError, match="permission denied"), transaction.atomic():
            _scalar(f"UPDATE {view} SET files_touched = '[]' RETURNING 1")
    assert _scalar(f"SELECT count(*) FROM {view}") == 0  # the owner outside a scope: no project, nothing
