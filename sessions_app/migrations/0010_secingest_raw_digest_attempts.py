"""Guards against hostile uploads: the transcript's digest (a re-upload of the same offsets with
other bytes is a 409), the count of processing attempts (a poison session is given up), and no
control characters left in branch names or task ids (a newline made every page linking to them
fail: their URLs cannot be built)."""

import re

from django.db import migrations, models
from django.db.models import Q

CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def replace_control_characters(apps, schema_editor):
    Session = apps.get_model("sessions_app", "Session")
    broken = Session._base_manager.filter(
        Q(feature_branch__regex=r"[[:cntrl:]]") | Q(task_id__regex=r"[[:cntrl:]]")
    ).only("pk", "feature_branch", "task_id")
    for session in broken.iterator():
        session.feature_branch = CONTROL.sub(" ", session.feature_branch)
        session.task_id = CONTROL.sub(" ", session.task_id) if session.task_id else session.task_id
        session.save(update_fields=["feature_branch", "task_id"])


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_app", "0006_insights_rollup"),
    ]

    operations = [
        migrations.AddField(
            model_name="session",
            name="processing_attempts",
            field=models.PositiveSmallIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="session",
            name="raw_sha256",
            field=models.CharField(blank=True, default="", help_text="of the decompressed transcript", max_length=64),
        ),
        migrations.RunPython(replace_control_characters, migrations.RunPython.noop),
    ]
