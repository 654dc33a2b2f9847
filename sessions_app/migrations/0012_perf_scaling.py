"""Scaling to a million sessions (docs/scaling.md).

Dates: ``captured_at`` — when the conversation happened — is the session's date for lists, date
filters, timelines and insights; ``created_at`` stays the upload time. ``captured_at`` becomes
non-null (a session uploaded without it is dated by its upload; one dated after its upload is
dated by the upload), the recency indexes move to it, and the daily insights totals are rebuilt
by it.

This migration once marked the functions of ``@@`` and ``?|`` LEAKPROOF (a superuser's step, which
warned under any other role) so that search could use its GIN index under row-level security.
Migration ``0021``'s view does that without a superuser (docs/scaling.md "Search under row-level
security"); a database where the marks were made keeps them, and nothing relies on them.
"""

import django.db.models.functions.datetime
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

BACKFILL = """
DROP TRIGGER IF EXISTS insights_on_write ON sessions_app_session;
DROP TRIGGER IF EXISTS insights_on_update ON sessions_app_session;
DROP TRIGGER IF EXISTS insights_on_insert ON sessions_app_session;
DROP TRIGGER IF EXISTS insights_on_delete ON sessions_app_session;
UPDATE sessions_app_session SET captured_at = created_at
WHERE captured_at IS NULL OR captured_at > created_at;
"""

# Insights totals per statement, not per row (transition tables): one INSERT … SELECT of a
# million sessions, a restore or a bulk UPDATE adds up its rows' facts once, grouped by day and key,
# instead of one upsert per session and facet. What a session contributes is still
# sessions_app_insight_facts (migration 0006), by the day of captured_at; ``changed`` is the
# statement's rows with +1 (new) and -1 (old), so an UPDATE that changes no counted fact nets out
# to nothing and writes nothing.
DELTA = """
    WITH changed AS ({rows}),
    per_branch AS (  -- each session's facts once, summed per branch; the project's copy ('') sums those
        SELECT (c.s).project_id AS project_id, (c.s).feature_branch AS branch, f.facet,
               ((c.s).captured_at AT TIME ZONE 'UTC')::date AS day, f.key,
               sum(c.sign * f.sessions) AS sessions, sum(c.sign * f.a) AS a, sum(c.sign * f.b) AS b
        FROM changed AS c, sessions_app_insight_facts(c.s) AS f
        WHERE (c.s).status NOT IN ('processing', 'failed')
        GROUP BY 1, 2, 3, 4, 5
    ),
    delta AS (
        SELECT project_id, branch, facet, day, key, sessions::integer, a::bigint, b::bigint FROM (
            SELECT * FROM per_branch WHERE branch <> ''
            UNION ALL
            SELECT project_id, '', facet, day, key, sum(sessions), sum(a), sum(b) FROM per_branch GROUP BY 1, 3, 4, 5
        ) AS both_copies
        WHERE sessions <> 0 OR a <> 0 OR b <> 0
    ),
    applied AS (
        INSERT INTO sessions_app_insightsday AS d (project_id, branch, facet, day, key, sessions, a, b)
        SELECT * FROM delta ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (project_id, branch, facet, day, key) DO UPDATE
            SET sessions = d.sessions + EXCLUDED.sessions, a = d.a + EXCLUDED.a, b = d.b + EXCLUDED.b
        RETURNING d.project_id, d.branch, d.facet, d.day, d.key, d.sessions
    )
    SELECT array_agg(project_id), array_agg(branch), array_agg(facet), array_agg(day), array_agg(key)
    INTO emptied_project, emptied_branch, emptied_facet, emptied_day, emptied_key
    FROM applied WHERE sessions <= 0;"""

NEW_ROWS = "SELECT n::sessions_app_session AS s, 1 AS sign FROM new_rows AS n"
OLD_ROWS = "SELECT o::sessions_app_session AS s, -1 AS sign FROM old_rows AS o"

ROLLUP = f"""
DROP FUNCTION IF EXISTS sessions_app_insights_trigger();
DROP FUNCTION IF EXISTS sessions_app_insights_apply(sessions_app_session, integer);

CREATE OR REPLACE FUNCTION sessions_app_insights_statement() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    emptied_project uuid[]; emptied_branch text[]; emptied_facet text[]; emptied_day date[]; emptied_key text[];
BEGIN
    IF TG_OP = 'INSERT' THEN {DELTA.format(rows=NEW_ROWS)}
    ELSIF TG_OP = 'DELETE' THEN {DELTA.format(rows=OLD_ROWS)}
    ELSE {DELTA.format(rows=f"{NEW_ROWS} UNION ALL {OLD_ROWS}")}
    END IF;
    -- Keys a statement took down to nothing (deleted, failed or moved sessions) leave no row behind.
    IF emptied_project IS NOT NULL THEN
        DELETE FROM sessions_app_insightsday AS d
        USING unnest(emptied_project, emptied_branch, emptied_facet, emptied_day, emptied_key)
            AS e(project_id, branch, facet, day, key)
        WHERE (d.project_id, d.branch, d.facet, d.day, d.key) = (e.project_id, e.branch, e.facet, e.day, e.key)
          AND d.sessions <= 0;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER insights_on_insert AFTER INSERT ON sessions_app_session
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION sessions_app_insights_statement();
CREATE TRIGGER insights_on_update AFTER UPDATE ON sessions_app_session
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION sessions_app_insights_statement();
CREATE TRIGGER insights_on_delete AFTER DELETE ON sessions_app_session
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION sessions_app_insights_statement();

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
        migrations.AddField(
            model_name="session",
            name="search_text",
            field=models.TextField(
                blank=True,
                db_default="",
                default="",
                editable=False,
                help_text="bounded lines of the searched text, for snippets",
            ),
        ),
        migrations.RunSQL(ROLLUP, reverse_sql=migrations.RunSQL.noop),
    ]
