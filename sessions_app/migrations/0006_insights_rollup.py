"""Daily insights totals kept by the database, and size-ordered indexes for the median sizes.

``sessions_app_insight_facts(session)`` is the one definition of what a session contributes to
insights (see ``InsightsDay``). The trigger applies it to every insert, relevant update and
delete of a session; ``sessions_app.insights`` applies the same function to the raw rows of a
period's partial first and last day, so both paths count alike by construction.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from projects.rls import policy_sql

FACTS = """
CREATE OR REPLACE FUNCTION sessions_app_insight_facts(s sessions_app_session)
RETURNS TABLE (facet text, key text, sessions integer, a bigint, b bigint)
LANGUAGE sql STABLE AS $$
    SELECT 'author', COALESCE(s.author_id::text, ''), 1, s.turn_count::bigint, 0::bigint
    UNION ALL SELECT 'commit', s.turn_count::text, 1, s.message_count, 0 WHERE s.kind = 'checkpoint'
    UNION ALL SELECT 'task', s.status, 1, 0, 0 WHERE s.kind = 'task'
    UNION ALL SELECT 'branch', s.feature_branch, 1, s.turn_count, 0 WHERE s.feature_branch <> ''
    UNION ALL SELECT 'tool', t.key, 1,
        CASE WHEN jsonb_typeof(t.value -> 'calls') = 'number' THEN (t.value ->> 'calls')::numeric::bigint ELSE 0 END,
        CASE WHEN jsonb_typeof(t.value -> 'errors') = 'number' THEN (t.value ->> 'errors')::numeric::bigint ELSE 0 END
    FROM jsonb_each(CASE WHEN jsonb_typeof(s.digest -> 'tool_counts') = 'object'
                         THEN s.digest -> 'tool_counts' ELSE '{}'::jsonb END) AS t
$$;

-- Adds (direction 1) or takes away (direction -1) one session's facts, for the project and for its branch.
CREATE OR REPLACE FUNCTION sessions_app_insights_apply(s sessions_app_session, direction integer)
RETURNS void LANGUAGE sql AS $$
    INSERT INTO sessions_app_insightsday AS d (project_id, branch, facet, day, key, sessions, a, b)
    SELECT s.project_id, br.branch, f.facet, (s.created_at AT TIME ZONE 'UTC')::date, f.key,
           direction * f.sessions, direction * f.a, direction * f.b
    FROM sessions_app_insight_facts(s) AS f,
         (SELECT DISTINCT unnest(ARRAY['', s.feature_branch]) AS branch) AS br
    WHERE s.status NOT IN ('processing', 'failed')
    ORDER BY 2, 3, 5
    ON CONFLICT (project_id, branch, facet, day, key) DO UPDATE
        SET sessions = d.sessions + EXCLUDED.sessions, a = d.a + EXCLUDED.a, b = d.b + EXCLUDED.b;
    DELETE FROM sessions_app_insightsday
    WHERE direction < 0 AND project_id = s.project_id AND branch IN ('', s.feature_branch)
      AND day = (s.created_at AT TIME ZONE 'UTC')::date AND sessions <= 0;
$$;

CREATE OR REPLACE FUNCTION sessions_app_insights_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN PERFORM sessions_app_insights_apply(OLD, -1); END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN PERFORM sessions_app_insights_apply(NEW, 1); END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER insights_on_write AFTER INSERT OR DELETE ON sessions_app_session
    FOR EACH ROW EXECUTE FUNCTION sessions_app_insights_trigger();
CREATE TRIGGER insights_on_update AFTER UPDATE ON sessions_app_session
    FOR EACH ROW WHEN (
        OLD.status IS DISTINCT FROM NEW.status OR OLD.created_at IS DISTINCT FROM NEW.created_at
        OR OLD.kind IS DISTINCT FROM NEW.kind OR OLD.feature_branch IS DISTINCT FROM NEW.feature_branch
        OR OLD.author_id IS DISTINCT FROM NEW.author_id OR OLD.project_id IS DISTINCT FROM NEW.project_id
        OR OLD.turn_count IS DISTINCT FROM NEW.turn_count OR OLD.message_count IS DISTINCT FROM NEW.message_count
        OR (OLD.digest -> 'tool_counts') IS DISTINCT FROM (NEW.digest -> 'tool_counts'))
    EXECUTE FUNCTION sessions_app_insights_trigger();

-- Sessions already stored (the trigger above holds writers back until this commits).
INSERT INTO sessions_app_insightsday (project_id, branch, facet, day, key, sessions, a, b)
SELECT s.project_id, br.branch, f.facet, (s.created_at AT TIME ZONE 'UTC')::date, f.key,
       sum(f.sessions), sum(f.a), sum(f.b)
FROM sessions_app_session AS s, sessions_app_insight_facts(s) AS f,
     LATERAL (SELECT DISTINCT unnest(ARRAY['', s.feature_branch]) AS branch) AS br
WHERE s.status NOT IN ('processing', 'failed')
GROUP BY 1, 2, 3, 4, 5;
"""

UNDO = """
DROP TRIGGER IF EXISTS insights_on_write ON sessions_app_session;
DROP TRIGGER IF EXISTS insights_on_update ON sessions_app_session;
DROP FUNCTION IF EXISTS sessions_app_insights_trigger();
DROP FUNCTION IF EXISTS sessions_app_insights_apply(sessions_app_session, integer);
DROP FUNCTION IF EXISTS sessions_app_insight_facts(sessions_app_session);
"""


class Migration(migrations.Migration):
    dependencies = [
        ("projects", "0002_device_grant"),
        ("sessions_app", "0005_row_level_security"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="InsightsDay",
            fields=[
                (
                    "pk",
                    models.CompositePrimaryKey(
                        "project",
                        "branch",
                        "facet",
                        "day",
                        "key",
                        blank=True,
                        editable=False,
                        primary_key=True,
                        serialize=False,
                    ),
                ),
                (
                    "project",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to="projects.project"
                    ),
                ),
                ("branch", models.CharField(blank=True, max_length=255)),
                ("facet", models.CharField(max_length=8)),
                ("day", models.DateField()),
                ("key", models.TextField(blank=True)),
                ("sessions", models.IntegerField(default=0)),
                ("a", models.BigIntegerField(default=0)),
                ("b", models.BigIntegerField(default=0)),
            ],
        ),
        migrations.AddIndex(
            model_name="session",
            index=models.Index(
                fields=["project", "raw_size_bytes"],
                include=("status", "created_at", "feature_branch"),
                name="session_raw_size",
            ),
        ),
        migrations.AddIndex(
            model_name="session",
            index=models.Index(
                fields=["project", "size_bytes"],
                include=("status", "created_at", "feature_branch"),
                name="session_stored_size",
            ),
        ),
        migrations.RunSQL(policy_sql("sessions_app_insightsday"), reverse_sql=migrations.RunSQL.noop),
        migrations.RunSQL(FACTS, reverse_sql=UNDO),
    ]
