"""Bad input: a clear error naming the file, the record and the field, and nothing written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from curation.importers import PROBLEM_LIMIT
from curation.models import AuditEvent, Category, ImportBatch, Record, Scenario
from curation.services.imports import import_path
from tests.conftest import Cast
from tests.curation.import_files import jsonl_bytes, rjudge_bytes, write_file
from tests.factories import rjudge_record


def broken(**changes: Any) -> dict[str, Any]:
    """Record 2, changed: `contents=...` replaces a field, `turn_1=...` the second turn."""
    record = rjudge_record(2)
    for key, value in changes.items():
        if key.startswith("turn_"):
            record["contents"][0][int(key.removeprefix("turn_"))] = value
        elif value is None:
            del record[key]
        else:
            record[key] = value
    return record


def after_a_good_record(record: object) -> bytes:
    return rjudge_bytes([rjudge_record(1), record])


CASES = {
    "invalid JSON": (b'[{"id": 1, "profile": ', None, "", "not valid JSON"),
    "a file that is not a list": (b'{"id": 1}', None, "", "must hold a JSON list"),
    "a record that is not an object": (after_a_good_record(["id", 2]), 1, "", "JSON object"),
    "contents that are not a list": (
        after_a_good_record(broken(contents="Delete my mails")),
        1,
        "contents",
        "must be a list of rounds",
    ),
    "a round that is not a list": (
        after_a_good_record(broken(contents=[{"role": "user"}])),
        1,
        "contents[0]",
        "must be a list of turns",
    ),
    "label 7": (after_a_good_record(broken(label=7)), 1, "label", "must be 0 (safe), 1 (unsafe)"),
    "an unknown role": (
        after_a_good_record(broken(turn_1={"role": "assistant", "content": "Done."})),
        1,
        "contents[0][1].role",
        "unknown role 'assistant'",
    ),
    "a turn's content that is not text": (
        after_a_good_record(broken(turn_0={"role": "user", "content": ["Delete"]})),
        1,
        "contents[0][0].content",
        "must be text or null",
    ),
    "a missing profile": (after_a_good_record(broken(profile=None)), 1, "profile", "is missing"),
    "an id that is not text or a number": (
        after_a_good_record(broken(id=[2])),
        1,
        "id",
        "must be a whole number or text",
    ),
    "one id for two different records": (
        after_a_good_record(broken(id=1, label=0)),
        1,
        "id",
        "already used by a different record (Application/mail.json, record 0)",
    ),
    "a NUL character": (
        after_a_good_record(broken(goal="Judge\u0000")),
        1,
        "goal",
        "NUL character",
    ),
}


@pytest.mark.parametrize(("content", "index", "field", "message"), CASES.values(), ids=CASES)
def test_it_names_the_file_the_record_and_the_field(
    cast: Cast, tmp_path: Path, content: bytes, index: int | None, field: str, message: str
) -> None:
    # A good file first: it must not be written either.
    write_file(tmp_path / "Application" / "calendar.json", rjudge_bytes([rjudge_record(10)]))
    write_file(tmp_path / "Application" / "mail.json", content)

    batch = import_path(actor=cast.manager, project=cast.project, path=tmp_path)

    assert batch.state == ImportBatch.State.FAILED
    error = batch.errors[0]
    assert (error["file"], error["index"], error["field"]) == (
        "Application/mail.json",
        index,
        field,
    )
    assert message in error["message"]
    assert_nothing_was_written(cast)


def assert_nothing_was_written(cast: Cast) -> None:
    assert not Record.objects.exists()
    assert not Scenario.objects.exists()
    assert set(Category.objects.values_list("name", flat=True)) == {
        "Application",
        "Finance",
        "IoT",
        "Program",
        "Web",
    }


def test_every_problem_of_a_record_is_reported(cast: Cast, tmp_path: Path) -> None:
    record = broken(label="unsafe", contents=[[{"role": "robot"}, {"role": "user", "content": 5}]])
    path = write_file(tmp_path / "mail.json", rjudge_bytes([record]))

    batch = import_path(actor=cast.manager, project=cast.project, path=path)

    assert [(e["file"], e["index"], e["field"]) for e in batch.errors] == [
        ("mail.json", 0, "contents[0][0].role"),
        ("mail.json", 0, "contents[0][1].content"),
        ("mail.json", 0, "label"),
    ]


def test_jsonl_problems_give_the_line_number(cast: Cast, tmp_path: Path) -> None:
    lines = jsonl_bytes([rjudge_record(1)]) + b"{not json\n\n" + jsonl_bytes([broken(label=7)])
    path = write_file(tmp_path / "records.jsonl", lines)

    batch = import_path(actor=cast.manager, project=cast.project, path=path)

    assert batch.state == ImportBatch.State.FAILED
    assert [(e["file"], e["index"], e["unit"], e["field"]) for e in batch.errors] == [
        ("records.jsonl", 2, "line", ""),
        ("records.jsonl", 4, "line", "label"),
    ]
    assert "not valid JSON" in batch.errors[0]["message"]
    assert_nothing_was_written(cast)


def test_a_file_over_the_size_limit_is_refused(cast: Cast, tmp_path: Path, settings) -> None:
    settings.IMPORT_MAX_FILE_BYTES = 2000
    path = write_file(tmp_path / "mail.json", rjudge_bytes([rjudge_record(n) for n in range(5)]))
    assert path.stat().st_size > 2000

    batch = import_path(actor=cast.manager, project=cast.project, path=path)

    assert batch.state == ImportBatch.State.FAILED
    assert batch.errors == [
        {
            "file": "mail.json",
            "index": None,
            "field": "",
            "message": "the file is larger than the limit of 2,000 bytes",
            "unit": "record",
        }
    ]
    assert_nothing_was_written(cast)


def test_it_stops_after_fifty_problems(cast: Cast, tmp_path: Path) -> None:
    records = [broken(id=n, label=7) for n in range(PROBLEM_LIMIT + 20)]
    path = write_file(tmp_path / "mail.json", rjudge_bytes(records))

    batch = import_path(actor=cast.manager, project=cast.project, path=path)

    assert len(batch.errors) == PROBLEM_LIMIT
    assert batch.errors[-1]["index"] == PROBLEM_LIMIT - 1


def test_a_failed_import_is_audited_with_the_number_of_problems(cast: Cast, tmp_path: Path) -> None:
    path = write_file(tmp_path / "mail.json", json.dumps([broken(label=7)]).encode())

    batch = import_path(actor=cast.manager, project=cast.project, path=path)

    event = AuditEvent.objects.get(action="curation.import.failed", object_id=str(batch.pk))
    assert event.after == {"problems": 1}


def test_a_path_with_no_records_says_so(cast: Cast, tmp_path: Path) -> None:
    write_file(tmp_path / "README.md", b"Nothing to see.")

    batch = import_path(actor=cast.manager, project=cast.project, path=tmp_path)

    assert batch.state == ImportBatch.State.FAILED
    assert "no .json or .jsonl files" in batch.errors[0]["message"]
