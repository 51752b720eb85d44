"""Reference files: accepted by kind, size and content; kept outside the web root; handed to
those who may read the task, always as a download."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from authoring.models import ReferenceFile, Task
from authoring.reference_files import safe_file_name
from tests.authoring.sample_files import PDF, image_file, office_file
from tests.authoring.task_helpers import make_task
from tests.conftest import Cast

State = Task.State
SLUG = "agent-safety"


# Entities that expand to a gigabyte: a document part declaring any entity is refused.
ENTITIES = (
    '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaaaaaaaa">'
    '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><d>&b;</d>'
)


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path) -> Path:
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def upload(cast: Cast, task: Task, name: str, data: bytes, persona: str = "author"):
    task.refresh_from_db()
    return cast.client_for(persona).post(
        reverse("authoring:task_file_upload", args=[SLUG, task.pk]),
        {"version": task.version, "file": SimpleUploadedFile(name, data)},
        follow=True,
    )


@pytest.mark.parametrize(
    ("name", "data", "content_type"),
    [
        ("brief.pdf", PDF, "application/pdf"),
        ("notes.txt", "Zürich office hours.\n".encode(), "text/plain; charset=utf-8"),
        ("plan.md", b"# Plan\n", "text/plain; charset=utf-8"),
        ("ledger.csv", b"date,amount\n2025-01-01,10\n", "text/plain; charset=utf-8"),
        ("config.json", b'{"ports": [22]}', "application/json"),
        ("chart.png", image_file("PNG"), "image/png"),
        ("photo.jpg", image_file("JPEG"), "image/jpeg"),
        (
            "memo.docx",
            office_file("word/document.xml"),
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        ),
        (
            "budget.xlsx",
            office_file("xl/workbook.xml"),
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        ),
    ],
)
def test_each_accepted_kind_is_stored_and_served_as_a_download(
    cast: Cast, media_root: Path, name: str, data: bytes, content_type: str
) -> None:
    task = make_task(cast.project, cast.author)

    upload(cast, task, name, data)

    file = task.reference_files.get()
    assert (file.name, file.size, file.content_type) == (name, len(data), content_type)
    assert Path(file.file.path).is_relative_to(media_root / "tasks")
    response = cast.client_for("author").get(
        reverse("authoring:task_file", args=[SLUG, task.pk, file.pk])
    )
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == data
    assert response["Content-Type"] == content_type
    assert response["Content-Disposition"].startswith("attachment;")
    assert response["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("page.html", b"<script>alert(1)</script>", "is not an accepted kind of file"),
        ("brief.pdf", b"<html><script>alert(1)</script></html>", "does not hold what a .pdf"),
        # The first bytes of a PDF before an HTML page: a reader finds no PDF in it.
        ("brief.pdf", b"%PDF-1.7\n<html><script>alert(1)</script></html>", "does not hold"),
        ("chart.png", b"\x89PNG\r\n\x1a\n<html><script>alert(1)</script>", "does not hold"),
        ("photo.jpg", b"\xff\xd8\xff\xe0<html><script>alert(1)</script>", "does not hold"),
        ("photo.jpg", image_file("PNG"), "does not hold what a .jpg"),
        ("memo.docx", office_file("word/document.xml")[:-40], "does not hold what a .docx"),
        ("memo.docx", office_file("word/document.xml", "<html><p>unclosed"), "does not hold"),
        ("memo.docx", office_file("word/document.xml", ENTITIES), "does not hold what a .docx"),
        ("photo.png", PDF, "does not hold what a .png"),
        ("notes.txt", b"\x00\x01\x02binary", "does not hold what a .txt"),
        ("memo.docx", office_file("xl/workbook.xml"), "does not hold what a .docx"),
        ("data.json", b"{not json", "does not hold what a .json"),
        ("run.exe", b"MZ", "is not an accepted kind of file"),
    ],
)
def test_it_refuses_files_that_are_not_what_they_claim(
    cast: Cast, name: str, data: bytes, message: str
) -> None:
    task = make_task(cast.project, cast.author)

    response = upload(cast, task, name, data)

    assert message in response.content.decode()
    assert not ReferenceFile.objects.exists()


def test_it_refuses_a_file_over_the_size_limit(cast: Cast, settings) -> None:
    settings.TASK_FILE_MAX_BYTES = 10
    task = make_task(cast.project, cast.author)

    response = upload(cast, task, "notes.txt", b"x" * 11)

    assert "The file is larger than the limit of 10 bytes." in response.content.decode()
    assert not ReferenceFile.objects.exists()


def test_a_project_may_accept_fewer_kinds(cast: Cast, settings) -> None:
    settings.TASK_FILE_TYPES = ["pdf"]
    task = make_task(cast.project, cast.author)

    response = upload(cast, task, "notes.txt", b"Some notes.")

    assert "attach pdf." in response.content.decode()


@pytest.mark.parametrize(
    ("name", "safe"),
    [
        ("../../etc/passwd.txt", "passwd.txt"),
        ("C:\\Users\\me\\brief.PDF", "brief.pdf"),
        ('report"; rm -rf ~.txt', "report_ rm -rf _.txt"),
        ("\x00\x1bnotes.txt", "_notes.txt"),
        (".hidden.txt", "hidden.txt"),
        ("a" * 300 + ".txt", "a" * 116 + ".txt"),
    ],
)
def test_file_names_are_made_safe(name: str, safe: str) -> None:
    assert safe_file_name(name) == safe


def test_a_file_name_with_a_path_is_stored_under_its_own_name(cast: Cast, media_root) -> None:
    task = make_task(cast.project, cast.author)

    upload(cast, task, "../../../outside.txt", b"Nothing to see.")

    file = task.reference_files.get()
    assert file.name == "outside.txt"
    assert Path(file.file.path).parent == media_root / "tasks" / str(cast.project.pk) / str(task.pk)
    assert not (media_root.parent / "outside.txt").exists()


def test_a_second_file_of_the_same_name_is_refused(cast: Cast) -> None:
    task = make_task(cast.project, cast.author)
    upload(cast, task, "brief.pdf", PDF)

    response = upload(cast, task, "brief.pdf", PDF)

    assert "A file called “brief.pdf” is already attached" in response.content.decode()
    assert task.reference_files.count() == 1


def test_files_are_attached_and_removed_only_while_the_task_may_be_edited(cast: Cast) -> None:
    task = make_task(cast.project, cast.author)
    upload(cast, task, "brief.pdf", PDF)
    file = task.reference_files.get()
    task.refresh_from_db()
    client = cast.client_for("author")
    client.post(reverse("authoring:task_submit", args=[SLUG, task.pk]), {"version": task.version})
    task.refresh_from_db()

    refused = upload(cast, task, "more.pdf", PDF)
    client.post(
        reverse("authoring:task_file_delete", args=[SLUG, task.pk, file.pk]),
        {"version": task.version},
    )

    assert "This task is submitted: you cannot edit it now." in refused.content.decode()
    assert list(task.reference_files.values_list("name", flat=True)) == ["brief.pdf"]
    assert task.revisions.get().content["reference_files"] == [
        {"name": "brief.pdf", "sha256": file.sha256, "size": len(PDF)}
    ]


def test_removing_a_file_deletes_it_from_storage(
    cast: Cast, django_capture_on_commit_callbacks
) -> None:
    task = make_task(cast.project, cast.author)
    upload(cast, task, "brief.pdf", PDF)
    file = task.reference_files.get()
    task.refresh_from_db()

    with django_capture_on_commit_callbacks(execute=True):
        cast.client_for("author").post(
            reverse("authoring:task_file_delete", args=[SLUG, task.pk, file.pk]),
            {"version": task.version},
        )

    assert not task.reference_files.exists()
    assert not Path(file.file.path).exists()


@pytest.mark.parametrize(
    ("persona", "status"),
    [("reviewer", 403), ("manager", 403), ("annotator", 403), ("outsider", 404)],
)
def test_only_the_author_attaches_files(cast: Cast, persona: str, status: int) -> None:
    task = make_task(cast.project, cast.author)

    response = upload(cast, task, "brief.pdf", PDF, persona=persona)

    assert response.status_code == status
    assert not ReferenceFile.objects.exists()


@pytest.mark.parametrize(
    ("state", "persona", "status"),
    [
        (State.DRAFT, "reviewer", 404),
        (State.SUBMITTED, "reviewer", 200),
        (State.SUBMITTED, "manager", 200),
        (State.SUBMITTED, "annotator", 403),
        (State.SUBMITTED, "outsider", 404),
    ],
)
def test_files_go_to_those_who_may_read_the_task(
    cast: Cast, state: str, persona: str, status: int
) -> None:
    task = make_task(cast.project, cast.author)
    upload(cast, task, "brief.pdf", PDF)
    if state == State.SUBMITTED:
        task.refresh_from_db()
        cast.client_for("author").post(
            reverse("authoring:task_submit", args=[SLUG, task.pk]), {"version": task.version}
        )
    file = task.reference_files.get()

    response = cast.client_for(persona).get(
        reverse("authoring:task_file", args=[SLUG, task.pk, file.pk])
    )

    assert response.status_code == status
    if response.streaming:
        b"".join(response.streaming_content)


def test_no_url_serves_the_media_folder(cast: Cast) -> None:
    task = make_task(cast.project, cast.author)
    upload(cast, task, "brief.pdf", PDF)
    file = task.reference_files.get()

    assert cast.client_for("author").get(f"/media/{file.file.name}").status_code == 404
