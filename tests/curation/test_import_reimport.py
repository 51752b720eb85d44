"""Importing again: nothing is duplicated, duplicates of existing records are reported, and a
batch run twice (or by two workers at once) imports once."""

from __future__ import annotations

import threading
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from curation.models import ImportBatch, Record
from curation.services.imports import import_batch_run, import_path
from tests.conftest import Cast
from tests.curation.import_files import rjudge_bytes, write_file
from tests.factories import rjudge_record


def test_importing_the_dataset_again_creates_nothing(cast: Cast, rjudge_dir: Path) -> None:
    import_path(actor=cast.manager, project=cast.project, path=rjudge_dir)
    first_ids = set(cast.project.records.values_list("id", flat=True))

    again = import_path(actor=cast.manager, project=cast.project, path=rjudge_dir)

    assert again.state == ImportBatch.State.SUCCEEDED
    assert (again.record_count, again.created_count, again.existing_count) == (571, 0, 571)
    assert set(cast.project.records.values_list("id", flat=True)) == first_ids


def test_a_file_with_some_new_records_adds_only_those(cast: Cast, tmp_path: Path) -> None:
    first = write_file(tmp_path / "one" / "mail.json", rjudge_bytes([rjudge_record(1)]))
    both = write_file(
        tmp_path / "two" / "mail.json", rjudge_bytes([rjudge_record(1), rjudge_record(2)])
    )
    import_path(actor=cast.manager, project=cast.project, path=first)

    batch = import_path(actor=cast.manager, project=cast.project, path=both)

    assert (batch.created_count, batch.existing_count) == (1, 1)
    assert sorted(cast.project.records.values_list("external_id", flat=True)) == ["1", "2"]


def test_the_same_content_under_a_new_id_is_reported_as_a_duplicate(
    cast: Cast, tmp_path: Path
) -> None:
    import_path(
        actor=cast.manager,
        project=cast.project,
        path=write_file(tmp_path / "old" / "mail.json", rjudge_bytes([rjudge_record(7)])),
    )

    batch = import_path(
        actor=cast.manager,
        project=cast.project,
        path=write_file(tmp_path / "new" / "mail.json", rjudge_bytes([rjudge_record(70)])),
    )

    assert batch.created_count == 1
    assert batch.duplicate_groups == [["7", "70"]]


def test_the_same_record_twice_in_one_import_is_written_once(cast: Cast, tmp_path: Path) -> None:
    path = write_file(tmp_path / "mail.json", rjudge_bytes([rjudge_record(1), rjudge_record(1)]))

    batch = import_path(actor=cast.manager, project=cast.project, path=path)

    assert (batch.record_count, batch.created_count, batch.existing_count) == (2, 1, 1)


def test_running_a_finished_batch_again_changes_nothing(cast: Cast, tmp_path: Path) -> None:
    path = write_file(tmp_path / "mail.json", rjudge_bytes([rjudge_record(1)]))
    batch = import_path(actor=cast.manager, project=cast.project, path=path)

    again = import_batch_run(batch_id=batch.pk)

    assert again.state == ImportBatch.State.SUCCEEDED
    assert again.attempts == 1
    assert cast.project.records.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_batch_another_worker_holds_is_left_alone(cast: Cast) -> None:
    batch = cast.project.import_batches.create(source_name="mail.json", created_by=cast.manager)
    locked, release = threading.Event(), threading.Event()

    def other_worker() -> None:
        # A second connection, as a second worker would have, holding the batch row.
        settings = connection.settings_dict
        with psycopg.connect(
            dbname=settings["NAME"],
            user=settings["USER"],
            host=settings["HOST"],
            port=settings["PORT"],
            autocommit=False,
        ) as other:
            other.execute(
                "SELECT id FROM curation_importbatch WHERE id = %s FOR UPDATE", [batch.pk]
            )
            locked.set()
            release.wait(10)

    thread = threading.Thread(target=other_worker)
    thread.start()
    try:
        assert locked.wait(10)
        result = import_batch_run(batch_id=batch.pk)
    finally:
        release.set()
        thread.join()

    assert result.state == ImportBatch.State.PENDING
    assert result.attempts == 0
    assert not Record.objects.exists()
