"""The R-Judge export as a download: a zip of the source files."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

from django.urls import reverse

from curation.services.imports import import_path
from tests.conftest import Cast
from tests.curation.import_files import sha256sums


def test_the_download_is_a_zip_of_the_source_files(cast: Cast, rjudge_dir: Path) -> None:
    import_path(actor=cast.manager, project=cast.project, path=rjudge_dir)

    response = cast.client_for("manager").get(
        reverse("curation:export_rjudge", args=[cast.project.slug])
    )

    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"] == 'attachment; filename="agent-safety-rjudge.zip"'
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    digests = {name: hashlib.sha256(archive.read(name)).hexdigest() for name in archive.namelist()}
    assert digests == sha256sums(rjudge_dir)


def test_an_empty_project_downloads_an_empty_zip(cast: Cast) -> None:
    response = cast.client_for("superuser").get(
        reverse("curation:export_rjudge", args=[cast.project.slug])
    )

    assert zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))).namelist() == []
