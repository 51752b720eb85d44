"""Disagreements, adjudications and pending checks leave judging for the review app.

Their tables stay as they are (each moved model names its old table in `db_table`), so this
and review's first migration change only Django's idea of where the models live: no row is
copied and nothing is locked. What does change in the database: the content types of the moved
models (permissions and the admin's log refer to them by id, so they follow), and the audit
log's object types, by which an adjudication's history is found.

Review's first migration does not wait for this one, nor this one for it: each app's
migrations depend only on apps below it (tests/test_layout.py).
"""

from django.db import migrations

MOVED = ("disagreement", "adjudication", "pendingcheck")


def _relabel(apps, old, new):
    ContentType = apps.get_model("contenttypes", "ContentType")
    AuditEvent = apps.get_model("curation", "AuditEvent")
    ContentType.objects.filter(app_label=old, model__in=MOVED).update(app_label=new)
    for model in MOVED:
        AuditEvent.objects.filter(object_type=f"{old}.{model}").update(object_type=f"{new}.{model}")


def forwards(apps, schema_editor):
    _relabel(apps, "judging", "review")


def backwards(apps, schema_editor):
    _relabel(apps, "review", "judging")


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("judging", "0010_merge_versions_workers_scores_and_record_list"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="Disagreement"),
                migrations.DeleteModel(name="Adjudication"),
                migrations.DeleteModel(name="PendingCheck"),
            ],
        ),
        migrations.RunPython(forwards, backwards),
    ]
