"""The session page's reading aids: message uuids for the short permalink /p/{project}/m/{uuid}, an
access log of one row per reader, session, way of reading and hour, with a count; and insights'
effort facets (tokens per model, active and tool time, steps) from the digest's ``effort``."""

import django.contrib.postgres.fields
import django.contrib.postgres.indexes
import django.utils.timezone
import sessions_app.models
from django.conf import settings
from django.db import migrations, models

MERGE_EXISTING_READS = """
SET CONSTRAINTS ALL IMMEDIATE;
UPDATE sessions_app_accesslog SET hour = date_trunc('hour', at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
WITH grouped AS (
    SELECT max(id) AS keep, count(*) AS reads, project_id, session_id, user_id, via, hour
    FROM sessions_app_accesslog
    GROUP BY project_id, session_id, user_id, via, hour
    HAVING count(*) > 1
)
UPDATE sessions_app_accesslog AS log SET count = grouped.reads
FROM grouped WHERE log.id = grouped.keep;
DELETE FROM sessions_app_accesslog AS log
USING sessions_app_accesslog AS kept
WHERE kept.count > 1 AND kept.id > log.id
  AND kept.project_id = log.project_id AND kept.session_id = log.session_id
  AND kept.user_id IS NOT DISTINCT FROM log.user_id AND kept.via = log.via AND kept.hour = log.hour;
SET CONSTRAINTS ALL DEFERRED;
"""

# sessions_app_insight_facts as in 0006, plus four facets read from digest -> 'effort'
# (sessionledger.core.formats.facts.effort): 'tok' and 'cache' keyed "author|model" (input and output,
# cache writes and reads), 'effort' keyed by author (active and tool milliseconds), 'steps' keyed by
# author (steps, and 1 for a checkpoint: its commit). Sessions without effort facts add none.
EFFORT_FACTS = """
CREATE OR REPLACE FUNCTION sessions_app_jsonb_count(j jsonb) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN jsonb_typeof(j) = 'number' THEN LEAST(GREATEST((j #>> '{}')::numeric, 0), 1e15)::bigint ELSE 0 END
$$;

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
    UNION ALL SELECT 'tok', COALESCE(s.author_id::text, '') || '|' || m.key, 1,
        sessions_app_jsonb_count(m.value -> 0), sessions_app_jsonb_count(m.value -> 1)
    FROM jsonb_each(CASE WHEN jsonb_typeof(s.digest -> 'effort' -> 'tokens') = 'object'
                         THEN s.digest -> 'effort' -> 'tokens' ELSE '{}'::jsonb END) AS m
    WHERE jsonb_typeof(m.value) = 'array'
    UNION ALL SELECT 'cache', COALESCE(s.author_id::text, '') || '|' || m.key, 1,
        sessions_app_jsonb_count(m.value -> 2), sessions_app_jsonb_count(m.value -> 3)
    FROM jsonb_each(CASE WHEN jsonb_typeof(s.digest -> 'effort' -> 'tokens') = 'object'
                         THEN s.digest -> 'effort' -> 'tokens' ELSE '{}'::jsonb END) AS m
    WHERE jsonb_typeof(m.value) = 'array'
    UNION ALL SELECT 'effort', COALESCE(s.author_id::text, ''), 1,
        sessions_app_jsonb_count(s.digest -> 'effort' -> 'active_ms'), sessions_app_jsonb_count(s.digest -> 'effort' -> 'tool_ms')
    WHERE jsonb_typeof(s.digest -> 'effort') = 'object'
    UNION ALL SELECT 'steps', COALESCE(s.author_id::text, ''), 1,
        sessions_app_jsonb_count(s.digest -> 'effort' -> 'steps'), (s.kind = 'checkpoint')::int::bigint
    WHERE jsonb_typeof(s.digest -> 'effort') = 'object'
$$;

-- The statement-level triggers of 0012 sum whatever this function yields: recount with the new facets.
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
        ('projects', '0003_secauth_device_grant_claims'),
        ('sessions_app', '0013_perf_search_statistics'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunSQL(EFFORT_FACTS, reverse_sql=migrations.RunSQL.noop),
        migrations.AddField(
            model_name='session',
            name='message_uuids',
            field=django.contrib.postgres.fields.ArrayField(base_field=models.UUIDField(), blank=True, default=list, help_text="the uuids of the conversation's messages, for the short message permalink /p/{project}/m/{uuid}", size=None),
        ),
        migrations.AddIndex(
            model_name='session',
            index=django.contrib.postgres.indexes.GinIndex(fields=['message_uuids'], name='session_message_uuids'),
        ),
        migrations.AddField(
            model_name='accesslog',
            name='count',
            field=models.PositiveIntegerField(default=1, help_text='reads by this reader of this session in this hour'),
        ),
        migrations.AddField(
            model_name='accesslog',
            name='hour',
            field=models.DateTimeField(null=True, help_text="the hour (UTC) the row's reads fall in"),
        ),
        # Rows written before: each read its own row. Fold them into one row per reader, session,
        # way of reading and hour (the latest time, ip and user agent kept), as new reads are.
        migrations.RunSQL(MERGE_EXISTING_READS, reverse_sql=migrations.RunSQL.noop),
        migrations.AlterField(
            model_name='accesslog',
            name='hour',
            field=models.DateTimeField(default=sessions_app.models.this_hour, help_text="the hour (UTC) the row's reads fall in"),
        ),
        migrations.AlterField(
            model_name='accesslog',
            name='at',
            field=models.DateTimeField(default=django.utils.timezone.now, help_text='the latest read counted in this row'),
        ),
        migrations.AddIndex(
            model_name='accesslog',
            index=models.Index(fields=['project', 'user', '-at'], name='accesslog_project_user'),
        ),
        migrations.AddConstraint(
            model_name='accesslog',
            constraint=models.UniqueConstraint(fields=('project', 'session_id', 'user', 'via', 'hour'), name='accesslog_one_row_per_hour', nulls_distinct=False),
        ),
    ]
