"""Undoing an import: a manager deletes the records an import created, after a page says what
goes with them; the records it only matched stay, and records in a release are refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from curation.models import AuditEvent, ImportBatch
from curation.services.imports import import_path
from tests.conftest import Cast
from tests.curation.import_files import rjudge_bytes, write_file
from tests.factories import rjudge_record
from tests.releases.helpers import built_release, label


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path: Path) -> None:
    settings.MEDIA_ROOT = tmp_path / "media"


def two_imports(cast: Cast, tmp_path: Path) -> ImportBatch:
    """Record 1 imported first; then a file with records 1, 2 and 3, which creates two."""
    first = write_file(tmp_path / "one" / "mail.json", rjudge_bytes([rjudge_record(1)]))
    later = write_file(
        tmp_path / "two" / "mail.json",
        rjudge_bytes([rjudge_record(1), rjudge_record(2), rjudge_record(3)]),
    )
    import_path(actor=cast.manager, project=cast.project, path=first)
    return import_path(actor=cast.manager, project=cast.project, path=later)


def undo_url(cast: Cast, batch: ImportBatch) -> str:
    return reverse("curation:import_undo", args=[cast.project.slug, batch.pk])


def external_ids(cast: Cast) -> list[str]:
    return sorted(cast.project.records.values_list("external_id", flat=True))


def test_the_import_page_leads_to_a_confirmation_that_counts(cast: Cast, tmp_path: Path) -> None:
    batch = two_imports(cast, tmp_path)
    label(batch.records.get(external_id="2"), cast.annotator, "unsafe")
    client = cast.client_for("manager")

    report = client.get(reverse("curation:import_detail", args=[cast.project.slug, batch.pk]))
    confirmation = client.get(undo_url(cast, batch)).content.decode()

    assert f'href="{undo_url(cast, batch)}"' in report.content.decode()
    counted = "2 records, with 1 label, no verdict, no disagreement and no adjudication"
    assert f"This deletes <strong>{counted}</strong>." in confirmation
    assert external_ids(cast) == ["1", "2", "3"]


def test_undoing_deletes_the_created_records_and_keeps_the_matched(
    cast: Cast, tmp_path: Path
) -> None:
    batch = two_imports(cast, tmp_path)

    response = cast.client_for("manager").post(undo_url(cast, batch), follow=True)

    assert external_ids(cast) == ["1"]
    page = response.content.decode()
    assert "Import undone: deleted 2 records" in page
    assert "Undo this import" not in page
    event = AuditEvent.objects.get(action="curation.import.undone")
    assert (event.actor, event.object_id) == (cast.manager, str(batch.pk))
    assert event.before["records"] == ["2", "3"]


def test_an_import_whose_records_are_in_a_release_is_not_undone(cast: Cast, tmp_path: Path) -> None:
    batch = two_imports(cast, tmp_path)
    built_release(cast.project, cast.manager, version="2.0.0")
    client = cast.client_for("manager")

    confirmation = client.get(undo_url(cast, batch)).content.decode()
    refused = client.post(undo_url(cast, batch), follow=True).content.decode()

    assert "Release 2.0.0: 2, 3" in confirmation
    assert "release 2.0.0: 2, 3" in refused
    assert external_ids(cast) == ["1", "2", "3"]


def test_only_managers_undo_an_import(cast: Cast, tmp_path: Path) -> None:
    batch = two_imports(cast, tmp_path)

    response = cast.client_for("reviewer").post(undo_url(cast, batch))

    assert response.status_code == 403
    assert external_ids(cast) == ["1", "2", "3"]
