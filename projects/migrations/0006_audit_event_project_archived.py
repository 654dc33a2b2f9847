import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

from projects.rls import SETTING

TABLE = "projects_auditevent"
# Append-only for the web role: it may read and add the scoped project's events, never change or
# remove one (no UPDATE/DELETE policy and no UPDATE/DELETE grant). The owner role (retention of old
# events, erasure's own record, deployment-wide events) is not subject to either.
APPEND_ONLY = f"""
    ALTER TABLE {TABLE} ENABLE ROW LEVEL SECURITY;
    CREATE POLICY audit_read ON {TABLE} FOR SELECT
        USING (project_id = NULLIF(current_setting('{SETTING}', true), '')::uuid);
    CREATE POLICY audit_append ON {TABLE} FOR INSERT
        WITH CHECK (project_id = NULLIF(current_setting('{SETTING}', true), '')::uuid);
    REVOKE UPDATE, DELETE, TRUNCATE ON {TABLE} FROM {settings.DATABASE_WEB_ROLE};
"""
UNDO = f"""
    DROP POLICY IF EXISTS audit_read ON {TABLE};
    DROP POLICY IF EXISTS audit_append ON {TABLE};
    ALTER TABLE {TABLE} DISABLE ROW LEVEL SECURITY;
"""


class Migration(migrations.Migration):
    dependencies = [
        ("projects", "0005_apitoken_parent"),
        # After the migration that creates the web role and grants it every table: the REVOKE below must
        # come after that GRANT.
        ("sessions_app", "0005_row_level_security"),
    ]

    operations = [
        migrations.AddField(
            model_name="project",
            name="archived_at",
            field=models.DateTimeField(
                blank=True,
                help_text='archived: read-only, uploads refused (docs/security.md "Admin API")',
                null=True,
            ),
        ),
        migrations.CreateModel(
            name="AuditEvent",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("at", models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                ("project_id", models.UUIDField(blank=True, db_index=True, null=True)),
                ("project_slug", models.CharField(blank=True, default="", max_length=64)),
                ("actor_id", models.BigIntegerField(blank=True, null=True)),
                ("actor_email", models.CharField(blank=True, default="", help_text="empty: the system", max_length=254)),
                ("kind", models.CharField(max_length=64)),
                ("target", models.CharField(blank=True, default="", max_length=300)),
                ("detail", models.JSONField(blank=True, default=dict)),
                (
                    "via",
                    models.CharField(default="web", help_text="web, api, scim, admin, command, system", max_length=16),
                ),
                ("ip", models.GenericIPAddressField(blank=True, null=True)),
                ("user_agent", models.CharField(blank=True, default="", max_length=300)),
            ],
            options={
                "ordering": ["-at", "-id"],
                "indexes": [models.Index(fields=["project_id", "-at"], name="auditevent_project_at")],
            },
        ),
        migrations.RunSQL(APPEND_ONLY, reverse_sql=UNDO),
    ]
