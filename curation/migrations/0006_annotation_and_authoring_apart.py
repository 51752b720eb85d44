"""Annotation and task authoring leave the curation app for apps of their own.

Their tables stay as they are (each moved model names its old table in `db_table`), so this
and the new apps' first migrations change only Django's idea of where the models live: no row
is copied and nothing is locked. What does change in the database: the content types of the
moved models (permissions and the admin's log refer to them by id, so they follow), and the
audit log's object types, by which a task's history is found.
"""

import django.db.models.deletion
from django.db import migrations, models

MOVED = {
    "annotation": ("guidelineversion", "lease", "annotation"),
    "authoring": (
        "riskcategory",
        "rubriccheck",
        "task",
        "referencefile",
        "taskrevision",
        "review",
    ),
}


def _relabel(apps, from_app, to_app):
    ContentType = apps.get_model("contenttypes", "ContentType")
    AuditEvent = apps.get_model("curation", "AuditEvent")
    for app, models_ in MOVED.items():
        old, new = (from_app or app), (to_app or app)
        ContentType.objects.filter(app_label=old, model__in=models_).update(app_label=new)
        for model in models_:
            AuditEvent.objects.filter(object_type=f"{old}.{model}").update(
                object_type=f"{new}.{model}"
            )


def forwards(apps, schema_editor):
    _relabel(apps, "curation", None)


def backwards(apps, schema_editor):
    _relabel(apps, None, "curation")


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("curation", "0005_record_filters_with_gold_label"),
        ("annotation", "0001_initial"),
        ("authoring", "0001_initial"),
        ("releases", "0002_tasks_in_authoring"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="record",
                    name="task",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="records",
                        to="authoring.task",
                    ),
                ),
                # Those that others point to go last.
                migrations.DeleteModel(name="Annotation"),
                migrations.DeleteModel(name="Lease"),
                migrations.DeleteModel(name="GuidelineVersion"),
                migrations.DeleteModel(name="Review"),
                migrations.DeleteModel(name="TaskRevision"),
                migrations.DeleteModel(name="ReferenceFile"),
                migrations.DeleteModel(name="Task"),
                migrations.DeleteModel(name="RiskCategory"),
                migrations.DeleteModel(name="RubricCheck"),
            ],
        ),
        migrations.RunPython(forwards, backwards),
    ]
