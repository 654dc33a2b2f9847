from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("projects", "0006_audit_event_project_archived")]

    operations = [
        migrations.AddField(
            model_name="project",
            name="audit_retention_days",
            field=models.PositiveIntegerField(
                blank=True, null=True, help_text="days this project's audit events are kept; empty: SESSIONLEDGER_AUDIT_DAYS"
            ),
        ),
        migrations.AddField(
            model_name="project",
            name="legal_hold_since",
            field=models.DateTimeField(
                blank=True, null=True, help_text="under legal hold: no retention, no erasure of its members"
            ),
        ),
        migrations.AddField(
            model_name="project",
            name="legal_hold_reason",
            field=models.CharField(blank=True, default="", max_length=300),
        ),
    ]
