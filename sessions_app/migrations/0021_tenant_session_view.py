"""Search and the files filter use their GIN indexes under row-level security without a superuser.

The view ``sessions_app_session_tenant`` shows the id and the GIN-indexed columns of the sessions
of the project the transaction is scoped to (the ``tenant_isolation`` policy's condition is its
WHERE). It belongs to the table's owner, who is not subject to row-level security (no FORCE), so
PostgreSQL reads it without the policy: a condition on it is an index condition, as it was under
RLS only after a superuser marked ``@@`` and ``?|`` LEAKPROOF (migration ``0012``). A plain view,
not a security barrier: the planner must be free to order its conditions. The web role may only
read it. The review: docs/scaling.md "Search under row-level security".
"""

import django.contrib.postgres.fields
import django.contrib.postgres.search
from django.conf import settings
from django.db import migrations, models

from projects.rls import TENANT

VIEW = "sessions_app_session_tenant"
WEB = settings.DATABASE_WEB_ROLE

# ``(SELECT …)``: the tenant as a value computed once, not the policy's very expression, which the planner
# would equate with the policy's and so rank the view's conditions below the policy like the outer query's.
CREATE = f"""
CREATE VIEW {VIEW} WITH (security_barrier = false) AS
    SELECT id, search_vector, files_touched, message_uuids FROM sessions_app_session
    WHERE project_id = (SELECT {TENANT});
REVOKE ALL ON {VIEW} FROM PUBLIC, {WEB};
GRANT SELECT ON {VIEW} TO {WEB};
"""


class Migration(migrations.Migration):
    dependencies = [("sessions_app", "0020_attribution_refuse_too_deep")]

    operations = [
        migrations.RunSQL(CREATE, reverse_sql=f"DROP VIEW {VIEW};"),
        migrations.CreateModel(
            name="TenantSession",
            fields=[
                ("id", models.UUIDField(primary_key=True, serialize=False)),
                ("search_vector", django.contrib.postgres.search.SearchVectorField(null=True)),
                ("files_touched", models.JSONField(default=list)),
                (
                    "message_uuids",
                    django.contrib.postgres.fields.ArrayField(base_field=models.UUIDField(), default=list, size=None),
                ),
            ],
            options={"db_table": "sessions_app_session_tenant", "managed": False},
        ),
    ]
