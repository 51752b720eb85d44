"""A release's tasks point at the models in their new app (curation 0006); the columns stay."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("authoring", "0001_initial"),
        ("releases", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="releasetask",
                    name="revision",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="authoring.taskrevision",
                    ),
                ),
                migrations.AlterField(
                    model_name="releasetask",
                    name="task",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="authoring.task",
                    ),
                ),
            ],
        ),
    ]
