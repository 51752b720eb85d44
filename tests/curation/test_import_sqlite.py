"""The embedded default's import, for real on SQLite: its rows are written by a thread of their
own (curation.importers.writers.ExecuteManyWriter) while the importer parses the next ones.
What a user sees must be what the PostgreSQL import gives: every record once, duplicates left
alone, an import into a project with records, and nothing kept of an import with a bad line.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.curation.test_record_text_search_sqlite import migrated, run_on_sqlite
from tests.factories import rjudge_record

__all__ = ["migrated"]

SCRIPT = """
import json, sys
import django

django.setup()
from django.core.management import call_command

call_command("migrate", verbosity=0)
from curation.importers import writers
from curation.importers.writers import ExecuteManyWriter
from curation.models import Record
from curation.selectors import record_search
from curation.services.imports import import_path
from curation.services.projects import project_create

# Chunks of 7 records: the writing thread writes many, and stops while the importer creates
# each new category and scenario.
ExecuteManyWriter.BATCH_SIZE = 7
# And their words indexed in transactions of 20 records, once they are stored.
writers.WORDS_CHUNK = 20
project = project_create(actor=None, name="Embedded", slug="embedded")
batches = [import_path(actor=None, project=project, path=path) for path in sys.argv[1:]]
records = Record.objects.filter(project=project)
print(json.dumps({
    "batches": [
        [batch.state, batch.created_count, batch.existing_count, batch.searchable_at is not None]
        for batch in batches
    ],
    "errors": [[error["file"], error["index"], error["unit"]] for error in batches[-1].errors],
    "ids": sorted(records.values_list("external_id", flat=True), key=int),
    "categories": sorted(set(records.values_list("category__name", flat=True))),
    "found": sorted(record.external_id for record in record_search(project, text="zebra")),
}))
"""


def record(number: int) -> dict[str, object]:
    user = "Feed the zebra." if number in (13, 42, 55) else f"Tidy up mailbox {number}."
    return rjudge_record(number, user=user)


def write_jsonl(path: Path, numbers: range, broken_line: int | None = None) -> Path:
    lines = [json.dumps(record(n)) for n in numbers]
    if broken_line is not None:
        lines[broken_line - 1] = '{"id": 1, "contents": '
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_embedded_default_imports_in_chunks_into_a_project_with_records(
    tmp_path: Path, migrated: Path
) -> None:
    folder = tmp_path / "dataset"
    for category, scenario, numbers in (
        ("Application", "mail", range(1, 31)),
        ("Finance", "bank", range(31, 51)),
    ):
        (folder / category).mkdir(parents=True)
        (folder / category / f"{scenario}.json").write_text(
            json.dumps([record(n) for n in numbers])
        )
    # Ten records the project has already, ten new.
    more = write_jsonl(tmp_path / "more.jsonl", range(41, 61))
    broken = write_jsonl(tmp_path / "broken.jsonl", range(61, 81), broken_line=15)

    printed = run_on_sqlite(
        tmp_path, SCRIPT, str(folder), str(more), str(broken), database=migrated
    )

    report = json.loads(printed)
    assert report["batches"] == [
        ["succeeded", 50, 0, True],
        ["succeeded", 10, 10, True],
        ["failed", 0, 0, False],
    ]
    assert report["errors"] == [["broken.jsonl", 15, "line"]]
    assert report["ids"] == [str(n) for n in range(1, 61)]
    assert report["categories"] == ["Application", "Finance", "Uncategorized"]
    assert report["found"] == ["13", "42", "55"]
