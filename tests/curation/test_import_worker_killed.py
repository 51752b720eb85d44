"""Real workers killed (kill -9) in the middle of a large import, then of its indexing, on both
stacks: fresh workers finish both, with every record stored and indexed once, within a minute
of each kill rather than Redis's hour; meanwhile the import's page says the worker stopped,
then that the import resumed, never the figures of the dead worker."""

from __future__ import annotations

import time

import orjson
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from curation.job_leases import job_liveness
from curation.models import ImportBatch, RecordSearchText
from curation.progress import progress_read
from curation.services.imports import IMPORT_TASK, PROGRESS_KIND, import_batch_create
from curation.services.projects import project_create
from tests.factories import UserFactory, rjudge_record
from tests.workers import WorkerStack

# As many as the import the review killed: small records (about 600 bytes, 30 MB in all) keep
# the import to seconds, so that each stack's test stays near a minute on a busy machine.
RECORDS = 50_000
# Work taken over within this many seconds of the kill: never the broker's hour.
RECOVERY_SECONDS = 60


def upload_of(count: int) -> SimpleUploadedFile:
    records = [
        rjudge_record(number, label=number % 2, user=f"Record {number}: tidy up my inbox.")
        for number in range(1, count + 1)
    ]
    return SimpleUploadedFile("many.json", orjson.dumps(records))


def page_text(client: Client, batch: ImportBatch) -> str:
    url = reverse("curation:import_detail", args=[batch.project.slug, batch.pk])
    return client.get(url).content.decode()


@pytest.mark.django_db(transaction=True)
def test_an_import_and_its_indexing_survive_their_workers_being_killed(
    worker_stack: WorkerStack,
) -> None:
    manager = UserFactory()
    project = project_create(actor=manager, name="Killed import", slug="killed-import")
    client = Client()
    client.force_login(manager)
    first = worker_stack.start("first")
    batch = import_batch_create(
        actor=manager, project=project, upload=upload_of(RECORDS), default_category="Mail"
    )

    def records_read() -> int:
        published = progress_read(PROGRESS_KIND, batch.pk)
        return published[0] if published else 0

    worker_stack.wait_for(lambda: records_read() >= RECORDS // 5, "a fifth read", first)
    worker_stack.kill(first)
    killed_at = time.monotonic()
    assert records_read() < RECORDS
    assert project.records.count() == 0

    worker_stack.wait_for(
        lambda: job_liveness(IMPORT_TASK, batch.pk).stopped, "the lease to run out"
    )
    stopped_page = page_text(client, batch)
    assert "The worker running this import stopped; nothing it read was kept." in stopped_page
    assert "records read" not in stopped_page
    assert "<progress value=" not in stopped_page

    second = worker_stack.start("second")
    pages = []
    batch.refresh_from_db()
    while not batch.is_finished:
        assert second.poll() is None, worker_stack.log(second)
        assert time.monotonic() - killed_at < RECOVERY_SECONDS, worker_stack.log(second)
        pages.append(page_text(client, batch))
        time.sleep(0.2)
        batch.refresh_from_db()
    assert batch.state == ImportBatch.State.SUCCEEDED, batch.errors
    assert any("Resumed after a worker stopped:" in page for page in pages)
    assert batch.created_count == RECORDS
    external_ids = list(project.records.values_list("external_id", flat=True))
    assert sorted(external_ids, key=int) == [str(number) for number in range(1, RECORDS + 1)]

    # The worker goes on to index the new records for the text search: killed again midway.
    indexed = RecordSearchText.objects.filter(project=project)
    worker_stack.wait_for(indexed.exists, "the first records indexed", second)
    worker_stack.kill(second)
    killed_at = time.monotonic()
    assert 0 < indexed.count() < RECORDS
    batch.refresh_from_db()
    assert batch.searchable_at is None

    third = worker_stack.start("third")
    worker_stack.wait_for(
        lambda: ImportBatch.objects.filter(pk=batch.pk, searchable_at__isnull=False).exists(),
        "the records to be searchable",
        third,
    )
    assert time.monotonic() - killed_at < RECOVERY_SECONDS
    assert indexed.count() == RECORDS
    assert set(indexed.values_list("record_id", flat=True)) == set(
        project.records.values_list("id", flat=True)
    )
    assert project.records.count() == RECORDS
