"""Workers send again the jobs no worker holds (curation/job_leases.py): once however many
workers look, never one a live worker holds, never one sent a moment ago; a job sent twice
runs once."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

import curation.tasks  # noqa: F401 (registers the kinds of jobs workers recover)
from curation import job_leases
from curation.job_leases import job_lease, jobs_recover
from curation.models import ImportBatch
from curation.services.imports import IMPORT_TASK, import_batch_create, import_batch_run
from tests.conftest import Cast
from tests.factories import rjudge_record


@pytest.fixture(autouse=True)
def sent(monkeypatch: pytest.MonkeyPatch, settings, tmp_path) -> list[tuple[str, int]]:
    """The jobs sent, kept here rather than sent to the workers."""
    settings.MEDIA_ROOT = tmp_path / "media"
    cache.clear()
    jobs: list[tuple[str, int]] = []
    monkeypatch.setattr(job_leases, "job_send", lambda task, pk: jobs.append((task, pk)))
    return jobs


def batch_of(cast: Cast, age_seconds: int) -> ImportBatch:
    upload = SimpleUploadedFile("mail.json", json.dumps([rjudge_record(1)]).encode())
    batch = import_batch_create(actor=cast.manager, project=cast.project, upload=upload)
    created = timezone.now() - timedelta(seconds=age_seconds)
    ImportBatch.objects.filter(pk=batch.pk).update(created_at=created)
    return batch


def test_an_import_no_worker_holds_is_sent_again_once(cast: Cast, sent) -> None:
    batch = batch_of(cast, age_seconds=60)

    jobs_recover()
    jobs_recover()

    assert sent == [(IMPORT_TASK, batch.pk)]


def test_an_import_a_worker_holds_or_just_sent_is_left_alone(cast: Cast, sent) -> None:
    held = batch_of(cast, age_seconds=60)
    batch_of(cast, age_seconds=0)

    with job_lease(IMPORT_TASK, held.pk):
        jobs_recover()

    assert sent == []


def test_an_import_sent_twice_runs_once(cast: Cast, sent) -> None:
    batch = batch_of(cast, age_seconds=60)

    with job_lease(IMPORT_TASK, batch.pk):
        # The copy finds the lease taken and leaves the import to its holder.
        assert import_batch_run(batch_id=batch.pk).state == ImportBatch.State.PENDING
    assert not cast.project.records.exists()
    assert import_batch_run(batch_id=batch.pk).state == ImportBatch.State.SUCCEEDED
    assert import_batch_run(batch_id=batch.pk).created_count == 1
    assert cast.project.records.count() == 1
    jobs_recover()
    assert (IMPORT_TASK, batch.pk) not in sent
