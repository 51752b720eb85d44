"""Authoring takes over the record's task link (curation 0019): `RecordTask` reads and writes
the record table's `task_id` column, where the link has always been, and makes no table."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("authoring", "0002_task_imports"),
        ("curation", "0019_record_task_link_to_authoring"),
    ]

    operations = [
        migrations.CreateModel(
            name="RecordTask",
            fields=[
                (
                    "record",
                    models.OneToOneField(
                        db_column="id",
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        primary_key=True,
                        related_name="task_link",
                        serialize=False,
                        to="curation.record",
                    ),
                ),
            ],
            options={
                "db_table": "curation_record",
                "managed": False,
            },
        ),
    ]
