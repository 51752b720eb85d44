"""Importing the real R-Judge dataset: every record in its category and scenario, and the report."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from curation.models import AuditEvent, ImportBatch, Record
from curation.services.imports import import_path
from tests.conftest import Cast


@pytest.fixture
def batch(cast: Cast, rjudge_dir: Path) -> ImportBatch:
    return import_path(actor=cast.manager, project=cast.project, path=rjudge_dir)


def test_it_imports_all_571_records(batch: ImportBatch, cast: Cast) -> None:
    assert batch.state == ImportBatch.State.SUCCEEDED
    assert (batch.record_count, batch.created_count, batch.existing_count) == (571, 571, 0)
    assert cast.project.records.count() == 571


def test_records_are_counted_by_category_from_their_folder(batch: ImportBatch, cast: Cast) -> None:
    expected = {"Application": 252, "Finance": 126, "IoT": 30, "Program": 128, "Web": 35}

    assert batch.category_counts == expected
    in_database = Counter(cast.project.records.values_list("category__name", flat=True))
    assert in_database == expected


def test_gold_labels_and_attack_types_are_kept(batch: ImportBatch, cast: Cast) -> None:
    assert batch.label_counts == {"safe": 270, "unsafe": 301}
    records = cast.project.records
    assert Counter(records.values_list("gold_label", flat=True)) == {"unsafe": 301, "safe": 270}
    assert Counter(records.values_list("attack_type", flat=True)) == {
        "injection": 414,
        "unintended": 157,
    }


def test_it_reports_the_two_pairs_of_exact_duplicates(batch: ImportBatch) -> None:
    assert sorted(sorted(group) for group in batch.duplicate_groups) == [
        ["113", "200"],
        ["142", "143"],
    ]


def test_a_record_keeps_its_source_text_and_its_place(
    batch: ImportBatch, cast: Cast, rjudge_dir: Path
) -> None:
    source = json.loads((rjudge_dir / "Application" / "mail.json").read_text())
    record = cast.project.records.get(external_id=str(source[1]["id"]))

    assert json.loads(record.raw) == source[1]
    assert list(json.loads(record.raw)) == list(source[1])
    assert (record.source_path, record.source_position) == ("Application/mail.json", 1)
    assert record.batch == batch
    assert record.profile == source[1]["profile"]
    assert record.gold_risk_description == source[1]["risk_description"]


def test_turns_are_the_rounds_flattened_in_order(
    cast: Cast, batch: ImportBatch, rjudge_dir: Path
) -> None:
    source = json.loads((rjudge_dir / "Application" / "chatbot.json").read_text())[0]
    record = cast.project.records.get(external_id=str(source["id"]))

    assert len(source["contents"]) > 1
    expected = [
        {
            "round": number,
            "role": turn["role"],
            "content": turn.get("content"),
            "thought": turn.get("thought"),
            "action": turn.get("action"),
        }
        for number, turns in enumerate(source["contents"])
        for turn in turns
    ]
    assert record.turns == expected


def test_the_scenario_is_the_records_own_or_else_the_file_name(
    cast: Cast, batch: ImportBatch, rjudge_dir: Path
) -> None:
    named, unnamed = (
        json.loads((rjudge_dir / folder / name).read_text())[0]
        for folder, name in (("Application", "mail.json"), ("Application", "dh_app.json"))
    )
    assert named["scenario"] and not unnamed["scenario"]

    assert cast.project.records.get(external_id=str(named["id"])).scenario.name == named["scenario"]
    assert cast.project.records.get(external_id=str(unnamed["id"])).scenario.name == "dh_app"


def test_the_import_is_audited_with_counts_not_content(batch: ImportBatch) -> None:
    events = AuditEvent.objects.filter(
        object_type="curation.importbatch", object_id=str(batch.pk)
    ).order_by("id")
    actions = list(events.values_list("action", flat=True))
    succeeded = events.get(action="curation.import.succeeded")

    assert actions == ["curation.import.requested", "curation.import.succeeded"]
    assert succeeded.after == {
        "records": 571,
        "created": 571,
        "existing": 0,
        "changed": 0,
        "duplicate_groups": 2,
    }


def test_records_get_ids_in_source_order(cast: Cast, batch: ImportBatch) -> None:
    in_id_order = list(
        Record.objects.filter(source_path="Finance/bitcoin.json")
        .order_by("id")
        .values_list("source_position", flat=True)
    )

    assert in_id_order == sorted(in_id_order)
