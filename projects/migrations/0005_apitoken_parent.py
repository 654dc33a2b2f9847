from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("projects", "0004_attrib_sharing"),
    ]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="parent",
            field=models.ForeignKey(
                blank=True,
                help_text="the token this one was created with through the API; revoking it revokes this one",
                null=True,
                on_delete=models.deletion.CASCADE,
                related_name="children",
                to="projects.apitoken",
            ),
        ),
    ]
