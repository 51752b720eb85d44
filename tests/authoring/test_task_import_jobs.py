"""SafePro files uploaded on the import page are imported by a worker: the page stores the file
and polls; the report says what came in or why nothing did; the upload goes either way."""

from __future__ import annotations

import io
import json
import time
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from authoring.models import Task, TaskImport
from authoring.services.import_jobs import task_import_run
from tests.authoring.sample_files import PDF
from tests.authoring.test_safepro_import import safepro_task
from tests.conftest import Cast

SLUG = "agent-safety"


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path) -> Path:
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def post(cast: Cast, name: str, data: bytes, state: str = "draft"):
    return cast.client_for("manager").post(
        reverse("authoring:task_import", args=[SLUG]),
        {"file": SimpleUploadedFile(name, data), "state": state},
    )


def zipped(document: object, files: dict[str, bytes]) -> bytes:
    stream = io.BytesIO()
    with zipfile.ZipFile(stream, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("safepro.json", json.dumps(document))
        for path, content in files.items():
            archive.writestr(path, content)
    return stream.getvalue()


def run_and_show(cast: Cast, response) -> str:
    """Do the worker's part, then read the page the manager was sent to."""
    job = TaskImport.objects.get()
    assert response.url == reverse("authoring:task_import_detail", args=[SLUG, job.pk])
    task_import_run(task_import_id=job.pk)
    return cast.client_for("manager").get(response.url).content.decode()


def test_the_page_stores_the_file_and_a_worker_imports_it(cast: Cast, media_root: Path) -> None:
    response = post(
        cast, "safepro.json", json.dumps({"F - A": [safepro_task()]}).encode(), "approved"
    )

    assert response.status_code == 302
    waiting = cast.client_for("manager").get(response.url).content.decode()
    assert "Waiting for a worker" in waiting and 'hx-trigger="every 1s"' in waiting
    assert not Task.objects.exists()
    page = run_and_show(cast, response)

    assert "Imported 1 task; 0 already present." in page
    assert 'hx-trigger="every 1s"' not in page
    assert Task.objects.get().state == Task.State.APPROVED
    assert not any((media_root / "task-imports").rglob("*.json"))


def test_problems_are_reported_and_nothing_is_written(cast: Cast, media_root: Path) -> None:
    response = post(
        cast, "safepro.json", json.dumps({"F - A": [safepro_task(prompt=None)]}).encode()
    )

    page = run_and_show(cast, response)

    assert "Nothing was imported: the file has 1 problem." in page
    assert "This field cannot be blank." in page
    assert not Task.objects.exists()
    assert TaskImport.objects.get().state == TaskImport.State.FAILED
    # A failed import leaves no upload behind.
    assert not any((media_root / "task-imports").rglob("*.json"))


def test_a_file_that_is_not_json_is_reported_with_where(cast: Cast) -> None:
    response = post(cast, "safepro.json", b'{"F - A": [\n  {"task_id": "t-1"\n]}')

    page = run_and_show(cast, response)

    assert "safepro.json is not valid JSON:" in page and "at line 3, column 1." in page
    assert not Task.objects.exists()


def test_a_json_upload_takes_no_file_from_the_uploads_folder(cast: Cast) -> None:
    first = post(cast, "other.json", json.dumps({"F - A": [safepro_task("t-1")]}).encode())
    stored = Path(TaskImport.objects.get().upload.path)
    task = safepro_task("t-2", reference_files=[stored.name])

    second = post(cast, "safepro.json", json.dumps({"F - A": [task]}).encode())

    job = TaskImport.objects.exclude(pk=TaskImport.objects.get(source_name="other.json").pk).get()
    task_import_run(task_import_id=job.pk)
    page = cast.client_for("manager").get(second.url).content.decode()
    assert f"“{stored.name}” is not in safepro.json." in page
    assert not Task.objects.filter(external_id="t-2").exists()
    assert first.status_code == 302


def test_a_zip_that_unpacks_past_the_limit_is_refused(cast: Cast, settings) -> None:
    settings.IMPORT_MAX_UNPACKED_BYTES = 100_000
    task = safepro_task(reference_files=["big.txt"])
    data = zipped({"F - A": [task]}, {"big.txt": b"a" * 200_000})

    page = run_and_show(cast, post(cast, "safepro.zip", data))

    assert "unpacks to more than the limit of 100,000 bytes" in page
    assert not Task.objects.exists()


def test_reference_files_are_read_one_at_a_time(cast: Cast, settings) -> None:
    # Thirty tasks, each with a file of 2 MB: the import holds a file or two at a time (and what
    # checking and storing one copies of it), never all 60 MB.
    size = 2 * 1024 * 1024
    tasks = [safepro_task(f"t-{n}", reference_files=[f"f{n}.txt"]) for n in range(30)]
    data = zipped({"F - A": tasks}, {f"f{n}.txt": b"a" * size for n in range(30)})
    response = post(cast, "safepro.zip", data)
    job = TaskImport.objects.get()

    tracemalloc.start()
    try:
        task_import_run(task_import_id=job.pk)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert Task.objects.count() == 30
    assert peak < 8 * size
    assert "Imported 30 tasks" in cast.client_for("manager").get(response.url).content.decode()


def test_running_an_import_twice_imports_once(cast: Cast) -> None:
    post(
        cast,
        "safepro.zip",
        zipped({"F - A": [safepro_task(reference_files=["a.pdf"])]}, {"a.pdf": PDF}),
    )
    job = TaskImport.objects.get()

    task_import_run(task_import_id=job.pk)
    again = task_import_run(task_import_id=job.pk)

    assert again.state == TaskImport.State.SUCCEEDED
    assert Task.objects.get().reference_files.get().name == "a.pdf"


@pytest.mark.usefixtures("celery_worker")
def test_a_worker_takes_the_upload_without_anyone_waiting(cast: Cast) -> None:
    response = post(cast, "safepro.json", json.dumps({"F - A": [safepro_task()]}).encode())

    deadline = time.monotonic() + 20
    while not TaskImport.objects.get().is_finished and time.monotonic() < deadline:
        time.sleep(0.1)

    assert TaskImport.objects.get().state == TaskImport.State.SUCCEEDED
    assert "Imported 1 task" in cast.client_for("manager").get(response.url).content.decode()
