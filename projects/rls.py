"""The second wall: PostgreSQL row-level security keyed on a per-transaction setting.

Inside a project scope every statement runs as the role ``sessionledger_web`` (which owns no
table and has no BYPASSRLS), with ``sessionledger.project`` naming the project. Both are set
with ``set_config(…, true)`` — transaction-local — so a pooled connection never carries a tenant
into the next request: when the scope opened the transaction, its COMMIT (or ROLLBACK) drops both
settings, with no statement of ours; when it is a savepoint inside a caller's transaction (a
test, a command), both are reset explicitly as the scope ends, since the caller's transaction goes
on. The policies (migration ``sessions_app.0005``) show a tenant table's rows only when their project is that setting.

Outside a scope, code runs as the connecting (owner) role: that is where django-scopes already
refuses tenant queries, and where the named bypass ``unscoped()`` is meant to see everything.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import DatabaseError, connection, transaction

TENANT_TABLES = (
    "projects_membership",
    "projects_invitation",
    "sessions_app_session",
    "sessions_app_commitlink",
    "sessions_app_accesslog",
    "sessions_app_attribution",
    "sessions_app_sharelink",
    "sessions_app_partialupload",
    "integrations_pullrequest",
    "integrations_pullrequestcommit",
    "integrations_forgecommentsettings",
)
SETTING = "sessionledger.project"


@contextmanager
def tenant_transaction(project_id: object, *, durable: bool = True) -> Iterator[None]:
    """A transaction (or savepoint) in which only ``project_id``'s tenant rows exist.

    ``durable=False`` makes it a ``lazy_commit`` transaction, set with the tenant settings in the same
    statement: for a worker's result, which can be derived again."""
    if not settings.SESSIONLEDGER_RLS:
        yield
        return
    outermost = connection.get_autocommit() and not connection.in_atomic_block
    with transaction.atomic():
        with connection.cursor() as cursor:
            lazy = "" if durable else ", set_config('synchronous_commit', 'off', true)"  # = lazy_commit()
            joins = _KEEP_VIEW_JOINS if getattr(connection, "pg_version", 0) >= 180000 else ""
            cursor.execute(
                f"SELECT set_config(%s, %s, true), set_config('role', %s, true){_SERIAL}{lazy}{joins}",
                [SETTING, str(project_id), settings.DATABASE_WEB_ROLE],
            )
        try:
            yield
        finally:
            if not outermost:
                _reset()


# A tenant transaction reads pages (≤ 51 rows) and single records: parallel workers cost more to start than
# they save there, and a search, whose condition the planner counts twice (``sessions_app.selectors.indexed``),
# looks costly enough to the planner to get them (bench/bench_scale.py ``q_10_percent``; docs/scaling.md).
_SERIAL = ", set_config('max_parallel_workers_per_gather', '0', true)"

# PostgreSQL 18 may fold ``id IN (SELECT id FROM sessions_app_session_tenant …)`` into the outer, policed
# scan of the same table (self-join elimination), where the view's index condition ranks below the policy
# again and search walks the project (``sessions_app.selectors.indexed``; docs/scaling.md).
_KEEP_VIEW_JOINS = ", set_config('enable_self_join_elimination', 'off', true)"


def lazy_commit() -> None:
    """Let the current transaction commit without waiting for the WAL flush (``SET LOCAL``: this
    transaction only), for writes that may be lost in a crash of PostgreSQL itself but never half
    made. Waiting for the flush is most of a small write's time when the disk is shared
    (``bench_worker.py``: ``commit_wait``)."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL synchronous_commit TO OFF")


def _reset() -> None:
    if connection.needs_rollback:
        return  # the rollback undoes the transaction-local settings anyway
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config(%s, '', true); RESET ROLE", [SETTING])
    except DatabaseError:
        return


# The project the transaction is scoped to (NULL outside a scope): the policies' condition compares to it.
TENANT = f"NULLIF(current_setting('{SETTING}', true), '')::uuid"


def policy_sql(table: str) -> str:
    return f"""
        ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;
        DROP POLICY IF EXISTS tenant_isolation ON {table};
        CREATE POLICY tenant_isolation ON {table}
            USING (project_id = {TENANT})
            WITH CHECK (project_id = {TENANT});"""


def role_sql(role: str) -> str:
    """Create the web role if needed and let it use every table (present and future) — under RLS."""
    return f"""
        DO $$ BEGIN
            IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{role}') THEN
                -- Roles belong to the cluster: two databases migrating at once both find it missing.
                BEGIN
                    CREATE ROLE {role} NOLOGIN NOBYPASSRLS;
                EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
                END;
            END IF;
            IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
                EXECUTE format('GRANT {role} TO %I', current_user);
            END IF;
        END $$;
        GRANT USAGE ON SCHEMA public TO {role};
        GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role};
        GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO {role};
        ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {role};
        ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO {role};"""
