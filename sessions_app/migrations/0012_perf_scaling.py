"""Scaling to a million sessions (docs/scaling.md).

Dates: ``captured_at`` — when the conversation happened — is the session's date for lists, date
filters, timelines and insights; ``created_at`` stays the upload time. ``captured_at`` becomes
non-null (a session uploaded without it is dated by its upload; one dated after its upload is
dated by the upload), the recency indexes move to it, and the daily insights totals are rebuilt
by it.

Search under row-level security: the operator functions of full-text search (``@@``) and of the
files filter (``?|``) are marked LEAKPROOF, so the planner may use the GIN indexes for them inside
the ``tenant_isolation`` policy (docs/scaling.md "Search under row-level security" gives the review
and the measurements). Only a superuser may mark functions; run by another role, this step warns
and does nothing, and the operator runs LEAKPROOF_SQL once by hand.
"""

import django.db.models.functions.datetime
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

BACKFILL = """
DROP TRIGGER IF EXISTS insights_on_write ON sessions_app_session;
DROP TRIGGER IF EXISTS insights_on_update ON sessions_app_session;
UPDATE sessions_app_session SET captured_at = created_at
WHERE captured_at IS NULL OR captured_at > created_at;
"""

# The apply function of migration 0006 with the session's day taken from captured_at.
ROLLUP = """
CREATE OR REPLACE FUNCTION sessions_app_insights_apply(s sessions_app_session, direction integer)
RETURNS void LANGUAGE sql AS $$
    INSERT INTO sessions_app_insightsday AS d (project_id, branch, facet, day, key, sessions, a, b)
    SELECT s.project_id, br.branch, f.facet, (s.captured_at AT TIME ZONE 'UTC')::date, f.key,
           direction * f.sessions, direction * f.a, direction * f.b
    FROM sessions_app_insight_facts(s) AS f,
         (SELECT DISTINCT unnest(ARRAY['', s.feature_branch]) AS branch) AS br
    WHERE s.status NOT IN ('processing', 'failed')
    ORDER BY 2, 3, 5
    ON CONFLICT (project_id, branch, facet, day, key) DO UPDATE
        SET sessions = d.sessions + EXCLUDED.sessions, a = d.a + EXCLUDED.a, b = d.b + EXCLUDED.b;
    DELETE FROM sessions_app_insightsday
    WHERE direction < 0 AND project_id = s.project_id AND branch IN ('', s.feature_branch)
      AND day = (s.captured_at AT TIME ZONE 'UTC')::date AND sessions <= 0;
$$;

CREATE TRIGGER insights_on_write AFTER INSERT OR DELETE ON sessions_app_session
    FOR EACH ROW EXECUTE FUNCTION sessions_app_insights_trigger();
CREATE TRIGGER insights_on_update AFTER UPDATE ON sessions_app_session
    FOR EACH ROW WHEN (
        OLD.status IS DISTINCT FROM NEW.status OR OLD.captured_at IS DISTINCT FROM NEW.captured_at
        OR OLD.kind IS DISTINCT FROM NEW.kind OR OLD.feature_branch IS DISTINCT FROM NEW.feature_branch
        OR OLD.author_id IS DISTINCT FROM NEW.author_id OR OLD.project_id IS DISTINCT FROM NEW.project_id
        OR OLD.turn_count IS DISTINCT FROM NEW.turn_count OR OLD.message_count IS DISTINCT FROM NEW.message_count
        OR (OLD.digest -> 'tool_counts') IS DISTINCT FROM (NEW.digest -> 'tool_counts'))
    EXECUTE FUNCTION sessions_app_insights_trigger();

-- The totals, recounted by the new day.
DELETE FROM sessions_app_insightsday;
INSERT INTO sessions_app_insightsday (project_id, branch, facet, day, key, sessions, a, b)
SELECT s.project_id, br.branch, f.facet, (s.captured_at AT TIME ZONE 'UTC')::date, f.key,
       sum(f.sessions), sum(f.a), sum(f.b)
FROM sessions_app_session AS s, sessions_app_insight_facts(s) AS f,
     LATERAL (SELECT DISTINCT unnest(ARRAY['', s.feature_branch]) AS branch) AS br
WHERE s.status NOT IN ('processing', 'failed')
GROUP BY 1, 2, 3, 4, 5;
"""


LEAKPROOF_FUNCTIONS = ("ts_match_vq(tsvector, tsquery)", "jsonb_exists_any(jsonb, text[])")


def _mark(mark: str) -> str:
    alters = " ".join(f"ALTER FUNCTION pg_catalog.{function} {mark};" for function in LEAKPROOF_FUNCTIONS)
    return f"""
DO $$ BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        {alters}
    ELSE
        RAISE WARNING 'sessionledger: not a superuser, so search and the files filter cannot use their indexes '
            'under row-level security; as a superuser, run once in this database: {alters}';
    END IF;
END $$;"""


class Migration(migrations.Migration):
    dependencies = [
        ("projects", "0003_secauth_device_grant_claims"),
        ("sessions_app", "0011_redact_server_redaction"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunSQL(BACKFILL, reverse_sql=migrations.RunSQL.noop),
        migrations.AlterModelOptions(name="session", options={"ordering": ["-captured_at", "-id"]}),
        migrations.RemoveIndex(model_name="session", name="session_project_recent"),
        migrations.RemoveIndex(model_name="session", name="session_branch_recent"),
        migrations.RemoveIndex(model_name="session", name="session_author_recent"),
        migrations.RemoveIndex(model_name="session", name="session_raw_size"),
        migrations.RemoveIndex(model_name="session", name="session_stored_size"),
        migrations.AlterField(
            model_name="session",
            name="captured_at",
            field=models.DateTimeField(
                db_default=django.db.models.functions.datetime.Now(), default=django.utils.timezone.now
            ),
        ),
        migrations.AlterField(
            model_name="session",
            name="created_at",
            field=models.DateTimeField(auto_now_add=True, help_text="upload time"),
        ),
        migrations.AddIndex(
            model_name="session",
            index=models.Index(fields=["project", "-captured_at", "-id"], name="session_project_recent"),
        ),
        migrations.AddIndex(
            model_name="session",
            index=models.Index(
                fields=["project", "feature_branch", "-captured_at", "-id"], name="session_branch_recent"
            ),
        ),
        migrations.AddIndex(
            model_name="session",
            index=models.Index(fields=["author", "-captured_at"], name="session_author_recent"),
        ),
        migrations.AddIndex(
            model_name="session",
            index=models.Index(
                fields=["project", "raw_size_bytes"],
                include=("status", "captured_at", "feature_branch"),
                name="session_raw_size",
            ),
        ),
        migrations.AddIndex(
            model_name="session",
            index=models.Index(
                fields=["project", "size_bytes"],
                include=("status", "captured_at", "feature_branch"),
                name="session_stored_size",
            ),
        ),
        migrations.RunSQL(ROLLUP, reverse_sql=migrations.RunSQL.noop),
        migrations.RunSQL(_mark("LEAKPROOF"), reverse_sql=_mark("NOT LEAKPROOF")),
    ]
