"""The import pages: a manager uploads, a real Celery worker imports, the page follows it."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from curation.models import ImportBatch
from curation.progress import progress_publish
from curation.services.imports import import_batch_create, import_batch_run, import_path
from tests.conftest import Cast
from tests.curation.import_files import rjudge_bytes, upload, write_file, zip_of_folder
from tests.factories import rjudge_record


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path: Path) -> None:
    # Uploads are stored: keep them out of the development media folder.
    settings.MEDIA_ROOT = tmp_path / "media"


def imports_url(cast: Cast) -> str:
    return reverse("curation:import_list", args=[cast.project.slug])


def detail_url(batch: ImportBatch) -> str:
    return reverse("curation:import_detail", args=[batch.project.slug, batch.pk])


def wait_for(client: Client, url: str, text: str, seconds: float = 60) -> str:
    deadline = time.monotonic() + seconds
    while True:
        page = client.get(url).content.decode()
        if text in page or time.monotonic() > deadline:
            return page
        time.sleep(0.2)


@pytest.mark.django_db(transaction=True)
def test_an_uploaded_zip_is_imported_by_a_worker(
    cast: Cast, rjudge_dir: Path, celery_worker: None
) -> None:
    client = cast.client_for("manager")

    response = client.post(
        imports_url(cast),
        {"file": upload("r-judge.zip", zip_of_folder(rjudge_dir)), "format": "auto"},
    )

    batch = cast.project.import_batches.get()
    stored = Path(batch.upload.path)
    assert response.status_code == 302
    assert response["Location"] == detail_url(batch)
    page = wait_for(client, detail_url(batch), "Imported")
    assert '<span class="badge import-succeeded">Imported</span>' in page
    assert "<dt>New</dt><dd>571</dd>" in page
    assert "<code>142</code>, <code>143</code>" in page
    assert 'hx-trigger="every 1s"' not in page
    assert cast.project.records.count() == 571
    # Its records hold all it said: the upload is gone.
    batch.refresh_from_db()
    assert not batch.upload
    assert not stored.exists()


def test_uploads_are_kept_as_many_days_as_the_operator_says(cast: Cast, settings) -> None:
    settings.IMPORT_UPLOADS_KEPT_DAYS = 7
    old, recent = (
        import_batch_create(
            actor=cast.manager, project=cast.project, upload=upload(name, rjudge_bytes([source]))
        )
        for name, source in (("old.json", rjudge_record(1)), ("recent.json", rjudge_record(2)))
    )
    import_batch_run(batch_id=old.pk)
    ImportBatch.objects.filter(pk=old.pk).update(finished_at=timezone.now() - timedelta(days=8))
    old_file = Path(old.upload.path)

    import_batch_run(batch_id=recent.pk)

    old.refresh_from_db()
    recent.refresh_from_db()
    assert (old.state, recent.state) == ("succeeded", "succeeded")
    assert not old.upload and not old_file.exists()
    assert Path(recent.upload.path).exists()


def test_a_waiting_import_polls_every_second(cast: Cast) -> None:
    batch = cast.project.import_batches.create(source_name="mail.json", created_by=cast.manager)

    response = cast.client_for("manager").get(detail_url(batch), headers={"HX-Request": "true"})

    assert response.status_code == 200
    content = response.content.decode()
    assert content.lstrip().startswith('<section id="import-report"')
    assert 'hx-trigger="every 1s"' in content
    assert "Waiting for a worker to start." in content
    assert "<progress" in content


def test_a_running_import_shows_its_progress(cast: Cast) -> None:
    batch = cast.project.import_batches.create(source_name="mail.json", created_by=cast.manager)
    progress_publish("import", batch.pk, (120, 3_000, 12_000))

    response = cast.client_for("manager").get(detail_url(batch), headers={"HX-Request": "true"})

    content = response.content.decode()
    assert '<progress value="3000" max="12000"' in content
    assert "25%" in content
    assert "120 records read." in content


def test_the_progress_partial_stops_polling_when_done(cast: Cast, tmp_path: Path) -> None:
    path = write_file(tmp_path / "mail.json", rjudge_bytes([rjudge_record(1)]))
    batch = import_path(actor=cast.manager, project=cast.project, path=path)

    response = cast.client_for("manager").get(detail_url(batch), headers={"HX-Request": "true"})

    assert response.status_code == 286
    content = response.content.decode()
    assert "hx-trigger" not in content
    assert "Imported" in content
    assert "<progress" not in content


def test_a_failed_import_lists_its_problems(cast: Cast, tmp_path: Path) -> None:
    hostile = {**rjudge_record(2), "contents": [[{"role": "<script>alert(1)</script>"}]]}
    path = write_file(tmp_path / "mail.json", rjudge_bytes([rjudge_record(1), hostile]))
    batch = import_path(actor=cast.manager, project=cast.project, path=path)

    page = cast.client_for("manager").get(detail_url(batch)).content.decode()

    assert "Failed, nothing was written" in page
    assert "<td><code>mail.json</code></td>" in page
    assert "<td>record 1</td>" in page
    assert "<td><code>contents[0][0].role</code></td>" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>alert" not in page


def test_a_failed_upload_leaves_no_file_behind(cast: Cast, settings) -> None:
    hostile = {**rjudge_record(2), "contents": "not a list"}
    cast.client_for("manager").post(
        imports_url(cast),
        {"file": upload("mail.json", rjudge_bytes([rjudge_record(1), hostile])), "format": "auto"},
    )
    batch = cast.project.import_batches.get()
    stored = Path(batch.upload.path)
    assert stored.is_file()

    import_batch_run(batch_id=batch.pk)

    batch.refresh_from_db()
    assert batch.state == ImportBatch.State.FAILED
    assert not stored.exists()
    assert not batch.upload
    page = cast.client_for("manager").get(detail_url(batch)).content.decode()
    assert "Failed, nothing was written" in page


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("records.csv", "Upload a .json, .jsonl, .eval or .zip file."),
        ("huge.json", "The file is larger than the limit of 10 bytes. A .zip of it goes through"),
    ],
)
def test_the_form_refuses_what_it_cannot_import(
    cast: Cast, settings, name: str, message: str
) -> None:
    settings.IMPORT_MAX_FILE_BYTES = 10

    response = cast.client_for("manager").post(
        imports_url(cast), {"file": upload(name, b"[1, 2, 3, 4, 5]"), "format": "auto"}
    )

    assert response.status_code == 200
    assert message in response.content.decode()
    assert not cast.project.import_batches.exists()


def test_the_list_shows_past_imports_and_the_export(cast: Cast, tmp_path: Path) -> None:
    path = write_file(tmp_path / "mail.json", rjudge_bytes([rjudge_record(1)]))
    batch = import_path(actor=cast.manager, project=cast.project, path=path)

    page = cast.client_for("manager").get(imports_url(cast)).content.decode()

    assert f'href="{detail_url(batch)}"' in page
    assert '<span class="badge import-succeeded">Imported</span>' in page
    assert reverse("curation:export_rjudge", args=[cast.project.slug]) in page
    assert 'enctype="multipart/form-data"' in page
