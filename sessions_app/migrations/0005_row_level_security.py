from django.conf import settings
from django.db import migrations

from projects.rls import policy_sql, role_sql

# The tenant tables of this migration's time (projects.rls.TENANT_TABLES grows with later ones,
# whose own migrations add their policies once the table exists).
TENANT_TABLES = (
    "projects_membership",
    "projects_invitation",
    "sessions_app_session",
    "sessions_app_commitlink",
    "sessions_app_accesslog",
)


def _disable(table: str) -> str:
    return f"DROP POLICY IF EXISTS tenant_isolation ON {table}; ALTER TABLE {table} DISABLE ROW LEVEL SECURITY;"


class Migration(migrations.Migration):
    dependencies = [
        ("projects", "0002_device_grant"),
        ("sessions_app", "0004_access_log"),
    ]

    operations = [
        migrations.RunSQL(role_sql(settings.DATABASE_WEB_ROLE), reverse_sql=migrations.RunSQL.noop),
        *[migrations.RunSQL(policy_sql(table), reverse_sql=_disable(table)) for table in TENANT_TABLES],
    ]
