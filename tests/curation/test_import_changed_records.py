"""A record imported again under its id with other content is never taken or dropped silently:
the report says which and what changed, and a manager takes the new version or keeps the stored
one, with the stored version kept in the history."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.urls import reverse

from curation.errors import Conflict
from curation.models import AuditEvent, ImportBatch, Record, RecordChange
from curation.services.imports import import_path
from curation.services.record_changes import record_changes_decide
from tests.conftest import Cast
from tests.curation.import_files import rjudge_bytes, write_file
from tests.factories import rjudge_record


def import_records(cast: Cast, tmp_path: Path, folder: str, records: list[dict]) -> ImportBatch:
    path = write_file(tmp_path / folder / "mail.json", rjudge_bytes(records))
    return import_path(actor=cast.manager, project=cast.project, path=path)


@pytest.fixture
def flipped(cast: Cast, tmp_path: Path) -> ImportBatch:
    """Records 1 and 2 imported; then the file again with record 1's label flipped and a new
    risk description, record 2 as it was, and a new record 3."""
    import_records(cast, tmp_path, "first", [rjudge_record(1), rjudge_record(2, user="Hi.")])
    changed = rjudge_record(1, label=0, risk_description="Nothing was lost.")
    return import_records(
        cast, tmp_path, "again", [changed, rjudge_record(2, user="Hi."), rjudge_record(3)]
    )


def test_the_report_counts_and_lists_what_changed(cast: Cast, flipped: ImportBatch) -> None:
    assert (flipped.created_count, flipped.existing_count, flipped.changed_count) == (1, 2, 1)
    change = flipped.changes.get()
    assert (change.record.external_id, change.fields) == ("1", ["label", "risk_description"])
    assert change.state == RecordChange.State.PENDING
    # Until a manager decides, the stored version is the record.
    record = Record.objects.get(external_id="1")
    assert (record.gold_label, record.gold_risk_description) == (
        "unsafe",
        "The agent deleted mails without asking.",
    )

    page = cast.client_for("manager").get(
        reverse("curation:import_detail", args=[cast.project.slug, flipped.pk])
    )

    body = page.content.decode()
    assert "2, of which 1 with other content" in body
    assert "<code>label</code>, <code>risk_description</code>" in body
    assert "Take the new versions" in body


def test_a_manager_takes_the_new_version_and_the_old_stays_in_the_history(
    cast: Cast, flipped: ImportBatch
) -> None:
    response = cast.client_for("manager").post(
        reverse("curation:import_changes", args=[cast.project.slug, flipped.pk]),
        {"decision": "take"},
        follow=True,
    )

    assert "You took the new version of 1 record." in response.content.decode()
    record = Record.objects.get(external_id="1")
    assert (record.gold_label, record.gold_risk_description) == ("safe", "Nothing was lost.")
    assert json.loads(record.raw)["label"] == 0
    event = AuditEvent.objects.get(action="curation.record.changed")
    assert (event.before["gold_label"], event.after["fields"]) == (
        "unsafe",
        ["label", "risk_description"],
    )
    assert flipped.changes.get().state == RecordChange.State.TAKEN


def test_keeping_the_stored_version_changes_nothing_but_the_decision(
    cast: Cast, flipped: ImportBatch
) -> None:
    before = Record.objects.get(external_id="1").raw

    record_changes_decide(actor=cast.manager, batch=flipped, take=False)

    assert Record.objects.get(external_id="1").raw == before
    assert flipped.changes.get().state == RecordChange.State.KEPT
    with pytest.raises(Conflict):
        record_changes_decide(actor=cast.manager, batch=flipped, take=True)


def test_the_api_shows_the_changes_and_takes_a_decision(cast: Cast, flipped: ImportBatch) -> None:
    client = cast.client_for("manager")
    detail = reverse("api:import_detail", args=[cast.project.slug, flipped.pk])

    shown = client.get(detail).json()
    decided = client.post(
        reverse("api:import_changes", args=[cast.project.slug, flipped.pk]),
        {"take": True},
        content_type="application/json",
    )
    again = client.post(
        reverse("api:import_changes", args=[cast.project.slug, flipped.pk]),
        {"take": False},
        content_type="application/json",
    )

    assert shown["changed_count"] == 1
    assert shown["changes"][0]["record"] == "1"
    assert shown["changes"][0]["fields"] == ["label", "risk_description"]
    assert decided.status_code == 200
    assert decided.json()["changes"][0]["state"] == "taken"
    assert again.status_code == 409
    assert Record.objects.get(external_id="1").gold_label == "safe"


def test_an_unchanged_reimport_holds_nothing(cast: Cast, tmp_path: Path) -> None:
    import_records(cast, tmp_path, "first", [rjudge_record(1)])

    batch = import_records(cast, tmp_path, "again", [rjudge_record(1)])

    assert (batch.existing_count, batch.changed_count) == (1, 0)
    assert not RecordChange.objects.exists()
