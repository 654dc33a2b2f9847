"""Search statistics: a word in one session of a million must look rare to the planner.

Otherwise it walks the newest-first index through the whole project looking for it (docs/scaling.md).
With the default statistics target a lexeme missing from the 1,000 most common is estimated at
0.5 % of rows (5,000 at a million); tracking 10,000 brings that to about 400, and the planner takes
the GIN index for a rare word while it still walks the newest-first index for a frequent one.
"""

from django.db import migrations

SEARCH_STATISTICS = (
    "ALTER TABLE sessions_app_session ALTER COLUMN search_vector SET STATISTICS {};"
    " ANALYZE sessions_app_session (search_vector);"
)


class Migration(migrations.Migration):
    dependencies = [("sessions_app", "0012_perf_scaling")]

    operations = [
        migrations.RunSQL(SEARCH_STATISTICS.format(1000), reverse_sql=SEARCH_STATISTICS.format(-1)),
    ]
