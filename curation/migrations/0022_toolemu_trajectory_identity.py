"""ToolEmu records take the id the study identifies their trajectory by, and an import's changes
may be changes of an imported evaluator's verdict.

A trajectory's id was `<agent>/<case>/<12 characters of its content's hash>`, so that a corrected
trajectory came in as a second record. It becomes `<agent>/<case>/<emulator>/<run>`
(curation.formats.toolemu.trajectory_id), read from the record's source columns, which every
ToolEmu record has. Where a project holds two records of one trajectory (a corrected one
imported beside the first), the first takes the id and the later ones keep theirs: each may
carry labels and verdicts, which a migration does not merge or drop, and a manager can see
them, side by side, under the agent and case.
"""

from django.db import migrations, models

# As the studio stored them; the migration keeps its own copy of what it reads.
TOOLEMU = "toolemu"
EXTERNAL_ID_MAX_LENGTH = 200
OLD_HASH_CHARS = 12
CHUNK = 1000


def _identity(agent: str, case: str, emulator: str, replicate: str) -> str:
    return f"{agent}/{case}/{emulator}/{replicate}"


def _content_id(agent: str, case: str, content_hash: str) -> str:
    return f"{agent}/{case}/{content_hash[:OLD_HASH_CHARS]}"


def _renamed(apps, new_id) -> None:
    """Give each ToolEmu record the id `new_id` makes of its row, where the project has no
    record of that id yet; first come (the oldest record), first served."""
    Record = apps.get_model("curation", "Record")
    projects = (
        Record.objects.filter(source_format=TOOLEMU)
        .values_list("project_id", flat=True)
        .distinct()
        .order_by("project_id")
    )
    for project_id in list(projects):
        records = Record.objects.filter(project_id=project_id)
        taken = set(records.values_list("external_id", flat=True))
        renamed = []
        rows = records.filter(source_format=TOOLEMU).order_by("pk")
        for record in rows.only(
            "pk",
            "external_id",
            "content_hash",
            "source_agent",
            "source_emulator",
            "source_case",
            "source_replicate",
        ).iterator(chunk_size=CHUNK):
            external_id = new_id(record)
            if external_id in taken or len(external_id) > EXTERNAL_ID_MAX_LENGTH:
                continue
            taken.discard(record.external_id)
            taken.add(external_id)
            record.external_id = external_id
            renamed.append(record)
        Record.objects.bulk_update(renamed, ["external_id"], batch_size=CHUNK)


def ids_from_identity(apps, schema_editor) -> None:
    _renamed(
        apps,
        lambda record: _identity(
            record.source_agent,
            record.source_case,
            record.source_emulator,
            record.source_replicate,
        ),
    )


def ids_from_content(apps, schema_editor) -> None:
    _renamed(
        apps,
        lambda record: _content_id(record.source_agent, record.source_case, record.content_hash),
    )


class Migration(migrations.Migration):
    dependencies = [
        ("curation", "0020_import_inspect_logs_and_chat_transcripts"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="recordchange",
            name="recordchange_once_per_batch",
        ),
        migrations.AddField(
            model_name="recordchange",
            name="verdict_of",
            field=models.CharField(blank=True, max_length=200),
        ),
        migrations.AddConstraint(
            model_name="recordchange",
            constraint=models.UniqueConstraint(
                fields=("batch", "record", "verdict_of"), name="recordchange_once_per_batch"
            ),
        ),
        migrations.RunPython(ids_from_identity, ids_from_content, elidable=False),
    ]
