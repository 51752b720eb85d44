"""A real worker killed (kill -9) in the middle of a SafePro task import with reference files, on
both stacks: a fresh worker imports it within a minute, with every task and file once and no
file left of the dead worker's attempt; meanwhile the page says the worker stopped, then that
the import resumed."""

from __future__ import annotations

import io
import json
import time
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from authoring.models import ReferenceFile, Task, TaskImport
from authoring.services.import_jobs import TASK_IMPORT_TASK, task_import_create
from curation.job_leases import job_liveness
from curation.services.projects import project_create
from tests.authoring.test_safepro_import import safepro_task
from tests.factories import UserFactory
from tests.workers import WorkerStack

# Each task is checked, written with its revision and its file stored: a few seconds in all.
TASKS = 400
RECOVERY_SECONDS = 60


def upload_of(count: int) -> SimpleUploadedFile:
    tasks = [safepro_task(f"t-{n}", reference_files=[f"notes-{n}.txt"]) for n in range(count)]
    stream = io.BytesIO()
    with zipfile.ZipFile(stream, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("safepro.json", json.dumps({"Finance - Accountant": tasks}))
        for n in range(count):
            archive.writestr(f"notes-{n}.txt", f"Invoice notes {n}: pay within 30 days.\n")
    return SimpleUploadedFile("tasks.zip", stream.getvalue())


def stored_files(media: Path) -> set[str]:
    return {
        path.relative_to(media).as_posix()
        for path in (media / "tasks").rglob("*")
        if path.is_file()
    }


def page_text(client: Client, job: TaskImport) -> str:
    url = reverse("authoring:task_import_detail", args=[job.project.slug, job.pk])
    return client.get(url).content.decode()


@pytest.mark.django_db(transaction=True)
def test_a_task_import_survives_its_worker_being_killed(
    worker_stack: WorkerStack, settings
) -> None:
    manager = UserFactory()
    project = project_create(actor=manager, name="Killed tasks", slug="killed-tasks")
    media = Path(settings.MEDIA_ROOT)
    client = Client()
    client.force_login(manager)
    first = worker_stack.start("first")
    job = task_import_create(
        actor=manager, project=project, upload=upload_of(TASKS), state=Task.State.DRAFT
    )

    worker_stack.wait_for(lambda: len(stored_files(media)) >= 20, "files stored", first)
    worker_stack.kill(first)
    killed_at = time.monotonic()
    assert 0 < len(stored_files(media)) < TASKS
    assert not Task.objects.exists()

    worker_stack.wait_for(lambda: job_liveness(TASK_IMPORT_TASK, job.pk).stopped, "no lease")
    assert "The worker importing this file stopped" in page_text(client, job)

    second = worker_stack.start("second")
    pages = []
    while not job.is_finished:
        assert second.poll() is None, worker_stack.log(second)
        assert time.monotonic() - killed_at < RECOVERY_SECONDS, worker_stack.log(second)
        pages.append(page_text(client, job))
        time.sleep(0.2)
        job.refresh_from_db()
    assert job.state == TaskImport.State.SUCCEEDED, job.problems
    assert any("Resumed after a worker stopped." in page for page in pages)
    assert sorted(job.created) == sorted(f"t-{n}" for n in range(TASKS))
    assert project.tasks.count() == TASKS
    files = ReferenceFile.objects.filter(task__project=project)
    assert files.count() == TASKS
    assert stored_files(media) == set(files.values_list("file", flat=True))
