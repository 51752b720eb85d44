"""An import job delivered again after its worker stopped: if the records were stored but not
yet indexed for the text search (on SQLite the words are indexed right after the records are
stored, from a table the stopped worker's connection took with it), the job has them indexed."""

from __future__ import annotations

from pathlib import Path

import pytest

from curation.models import ImportBatch, RecordSearchText
from curation.selectors import records_not_yet_searchable
from curation.services import imports
from curation.services.imports import import_batch_run, import_path
from curation.services.search import search_index_update
from tests.conftest import Cast


@pytest.fixture
def indexing_jobs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The projects an indexing job is sent for; each is indexed, as a worker would."""
    sent: list[int] = []

    def send(*, project_id: int) -> None:
        sent.append(project_id)
        search_index_update(project_id=project_id)

    monkeypatch.setattr(imports, "search_index_update_later", send)
    return sent


def test_a_stored_import_delivered_again_has_its_records_indexed(
    cast: Cast, rjudge_dir: Path, indexing_jobs: list[int]
) -> None:
    batch = import_path(actor=cast.manager, project=cast.project, path=rjudge_dir / "Finance")
    # As a worker that stopped between storing the records and indexing them leaves it.
    RecordSearchText.objects.filter(project=cast.project).delete()
    ImportBatch.objects.filter(pk=batch.pk).update(searchable_at=None)
    indexing_jobs.clear()

    again = import_batch_run(batch_id=batch.pk)

    assert again.state == ImportBatch.State.SUCCEEDED
    assert indexing_jobs == [cast.project.pk]
    assert records_not_yet_searchable(cast.project) == 0


def test_a_searchable_import_delivered_again_sends_no_job(
    cast: Cast, rjudge_dir: Path, indexing_jobs: list[int]
) -> None:
    batch = import_path(actor=cast.manager, project=cast.project, path=rjudge_dir / "Finance")
    indexing_jobs.clear()

    import_batch_run(batch_id=batch.pk)

    assert indexing_jobs == []
