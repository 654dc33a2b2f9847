"""The insights statement trigger returns at once when no row of the statement counts.

Insights count only sessions whose status is neither ``processing`` nor ``failed`` (migration 0012's
delta filters on it), so a statement whose old and new rows are all ``processing`` or ``failed`` — the
worker counting an attempt, ingest inserting a new session — adds nothing. It still planned and ran the
whole delta query; and since ``sessions_app_insightsday`` has row-level security, that query's cached
plan depends on the role, so a worker alternating between the owner (the attempt, outside a project
scope) and the tenant role (the result) planned it afresh on every statement (docs/scaling.md, worker).
PostgreSQL allows no column list or row condition on a trigger with transition tables, hence the check
inside. The function is otherwise migration 0012's, unchanged.
"""

from django.db import migrations

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
UNCOUNTED = "NOT EXISTS (SELECT 1 FROM {table} WHERE status NOT IN ('processing', 'failed'))"

# Each transition table exists only for its operation, so each check sits in its own branch.
GUARD = f"""
    IF TG_OP = 'INSERT' THEN
        IF {UNCOUNTED.format(table="new_rows")} THEN RETURN NULL; END IF;
    ELSIF TG_OP = 'DELETE' THEN
        IF {UNCOUNTED.format(table="old_rows")} THEN RETURN NULL; END IF;
    ELSIF {UNCOUNTED.format(table="new_rows")} THEN
        IF {UNCOUNTED.format(table="old_rows")} THEN RETURN NULL; END IF;
    END IF;"""

FUNCTION = """
CREATE OR REPLACE FUNCTION sessions_app_insights_statement() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    emptied_project uuid[]; emptied_branch text[]; emptied_facet text[]; emptied_day date[]; emptied_key text[];
BEGIN{guard}
    IF TG_OP = 'INSERT' THEN {insert}
    ELSIF TG_OP = 'DELETE' THEN {delete}
    ELSE {update}
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
"""


def _function(guard: str) -> str:
    return FUNCTION.format(
        guard=guard,
        insert=DELTA.format(rows=NEW_ROWS),
        delete=DELTA.format(rows=OLD_ROWS),
        update=DELTA.format(rows=f"{NEW_ROWS} UNION ALL {OLD_ROWS}"),
    )


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_app", "0018_digest_context_text"),
    ]

    operations = [
        migrations.RunSQL(_function(GUARD), reverse_sql=_function("")),
    ]
