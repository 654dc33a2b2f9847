"""The two database logins (docs/deployment.md "Two database logins").

``DATABASE_OWNER_URL`` logs in as the owner of the tables: migrations and maintenance (retention of audit
events) only, through the ``owner`` alias. ``DATABASE_URL`` is then the runtime login of web, worker and
beat: a role that owns nothing, may do to every table what the application does — except that audit
events may only be read and added — and switches to ``DATABASE_WEB_ROLE`` inside a project scope as the
owner did (``projects/rls.py``). After every ``migrate`` as the owner, ``runtime_grants`` gives it that,
so tables a later migration adds are covered.

With one URL, web and worker are the owner: the database no longer stops a compromised process from
rewriting the audit trail, and only the hash chain (``governance.integrity``) and the copy off the box
(``governance.streaming``) tell.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import connections

AUDIT_TABLE = "projects_auditevent"


def owner_connection() -> Any:
    """The owner's connection, for maintenance that must change or remove audit events (retention).
    Its own transaction: rows written but not yet committed on the runtime connection are not there."""
    return connections["owner"]


def runtime_grants_sql(runtime: str, web: str) -> str:
    """What the runtime login may do. Outside a scope it sees every row, as the owner did (a policy
    per row-secured table, for it alone); inside one it is the web role, under the tenant policies."""
    return f"""
DO $$ DECLARE name text; BEGIN
    EXECUTE format('GRANT %I TO %I', '{web}', '{runtime}');
    GRANT USAGE ON SCHEMA public TO {runtime};
    GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {runtime};
    GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO {runtime};
    REVOKE UPDATE, DELETE, TRUNCATE ON {AUDIT_TABLE} FROM {runtime};
    FOR name IN SELECT c.relname FROM pg_class AS c
                WHERE c.relnamespace = 'public'::regnamespace AND c.relrowsecurity AND c.relkind = 'r' LOOP
        EXECUTE format('DROP POLICY IF EXISTS runtime_login ON %I', name);
        IF name = '{AUDIT_TABLE}' THEN
            EXECUTE format('DROP POLICY IF EXISTS runtime_login_append ON %I', name);
            EXECUTE format('CREATE POLICY runtime_login ON %I FOR SELECT TO %I USING (true)', name, '{runtime}');
            EXECUTE format('CREATE POLICY runtime_login_append ON %I FOR INSERT TO %I WITH CHECK (true)',
                           name, '{runtime}');
        ELSE
            EXECUTE format('CREATE POLICY runtime_login ON %I TO %I USING (true) WITH CHECK (true)',
                           name, '{runtime}');
        END IF;
    END LOOP;
END $$;"""


def runtime_grants(using: str = "owner") -> None:
    """Give the runtime login its rights (a no-op with one login)."""
    runtime = settings.DATABASE_RUNTIME_USER
    if not settings.DATABASE_ROLES_SPLIT or connections[using].settings_dict["USER"] == runtime:
        return
    with connections[using].cursor() as cursor:
        cursor.execute(runtime_grants_sql(runtime, settings.DATABASE_WEB_ROLE))


def after_migrate(sender: Any, using: str = "default", **kwargs: Any) -> None:
    if sender.name == "governance":  # once per migrate: the last app's signal is enough
        runtime_grants(using)
