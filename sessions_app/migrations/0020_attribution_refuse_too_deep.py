"""Stored attribution records nested deeper than the bound now checked on input are refused.

Before the bound (16 levels, ``sessions_app/attribution/validation.py``), a member could store a
record nested hundreds deep on a colleague's commit, and every read of that commit — its
attribution, ``why``, ``blame``, the PR AI share — answered 500 for everyone. Such a record is
dropped and the refusal kept, as an upload of it is refused today (docs/security.md "Records and
links a teammate cannot forge"). The test is jsonpath's, in the database: such a row may be too deep
to decode in Python at all. Other bounds need no pass: a record breaking them could not be stored.
"""

from django.db import migrations

REFUSE_TOO_DEEP = """
UPDATE sessions_app_attribution
SET record = NULL, added_lines = 0, ai_lines = 0,
    error = jsonb_build_object(
        'code', 'invalid_attribution',
        'message', 'Attribution refused: nested deeper than 16 levels.',
        'field', 'attribution'
    )
WHERE record IS NOT NULL
  AND jsonb_path_exists(record, 'strict $.**{17 to last} ? (@.type() == "array" || @.type() == "object")')
"""


class Migration(migrations.Migration):
    dependencies = [("sessions_app", "0019_worker_insights_skip_uncounted")]

    operations = [migrations.RunSQL(REFUSE_TOO_DEEP, reverse_sql=migrations.RunSQL.noop)]
