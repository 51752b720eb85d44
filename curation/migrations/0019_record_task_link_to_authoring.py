"""The record's task link becomes authoring's (`authoring.RecordTask`), so that no curation
model names a model above it.

Only Django's idea of the model changes: the `task_id` column stays in the record table, with
its data, its foreign key and its index (`record_by_task`), and authoring's model reads and
writes it from now on (authoring 0003). No row is copied and nothing is locked.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("curation", "0018_record_filters_by_category_with_label_counts"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveIndex(model_name="record", name="record_by_task"),
                migrations.RemoveField(model_name="record", name="task"),
            ],
        ),
    ]
