"""The session page's reading aids: message uuids for the short permalink /p/{project}/m/{uuid}, and
an access log of one row per reader, session, way of reading and hour, with a count."""

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

class Migration(migrations.Migration):

    dependencies = [
        ('projects', '0003_secauth_device_grant_claims'),
        ('sessions_app', '0011_redact_server_redaction'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
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
