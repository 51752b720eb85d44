"""A release's approved tasks come with the reference files their safepro.json names."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.urls import reverse

from authoring.models import Task
from releases.build import build_files, release_folder
from tests.authoring.sample_files import PDF
from tests.authoring.task_helpers import make_task
from tests.conftest import Cast
from tests.releases.helpers import built_release

pytestmark = pytest.mark.django_db


def test_safepro_zip_holds_every_file_that_safepro_json_names(cast: Cast) -> None:
    task = make_task(
        cast.project,
        cast.author,
        state=Task.State.APPROVED,
        reviewer=cast.reviewer,
        files={"brief.pdf": PDF, "notes.txt": b"Call the bank first."},
    )

    release = built_release(cast.project, cast.manager)

    folder = release_folder(release)
    named = [
        path
        for tasks in json.loads((folder / "safepro.json").read_text()).values()
        for entry in tasks
        for path in entry["reference_files"]
    ]
    with zipfile.ZipFile(folder / "safepro.zip") as archive:
        assert sorted(archive.namelist()) == sorted(["safepro.json", *named])
        assert archive.read(f"reference_files/{task.external_id}/brief.pdf") == PDF
    assert "safepro.zip" in [entry["name"] for entry in release.manifest["files"]]
    download = cast.client_for("manager").get(
        reverse("releases:release_file", args=[cast.project.slug, release.pk, "safepro.zip"])
    )
    assert zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content))).testzip() is None


def test_the_zip_builds_into_the_same_bytes_again(cast: Cast) -> None:
    make_task(
        cast.project,
        cast.author,
        state=Task.State.APPROVED,
        reviewer=cast.reviewer,
        files={"brief.pdf": PDF},
    )
    release = built_release(cast.project, cast.manager)
    first = (release_folder(release) / "safepro.zip").read_bytes()

    build_files(release)

    assert (release_folder(release) / "safepro.zip").read_bytes() == first


def test_tasks_without_files_need_no_zip(cast: Cast) -> None:
    make_task(cast.project, cast.author, state=Task.State.APPROVED, reviewer=cast.reviewer)

    release = built_release(cast.project, cast.manager)

    assert (release_folder(release) / "safepro.json").is_file()
    assert not (release_folder(release) / "safepro.zip").exists()
