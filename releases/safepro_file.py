"""The approved tasks of a release in the SafePro layout, from the revisions that were approved.

The layout is the project export's (authoring/exporters/safepro.py); the content is the frozen
revision, so a task edited after the release does not change it. safepro.json names each task's
reference files by path; safepro.zip holds it with those files, as the project's zip export does.
"""

from __future__ import annotations

import json
import zipfile
from typing import IO

from authoring.exporters.safepro import reference_file_path, safepro_entry
from authoring.importers.safepro import group_key
from authoring.models import ReferenceFile
from curation.errors import DomainError
from releases.models import Release
from releases.record_files import ZIP_LEVEL, ZIP_TIMESTAMP

SAFEPRO_JSON = "safepro.json"
SAFEPRO_ZIP = "safepro.zip"


def write_safepro(release: Release, stream: IO[bytes]) -> None:
    stream.write(_document(release))


def has_reference_files(release: Release) -> bool:
    return any(content["reference_files"] for _, _, content in _frozen_tasks(release))


def write_safepro_zip(release: Release, stream: IO[bytes]) -> None:
    """safepro.json and the reference files it names. Entries carry a fixed time, so that the
    same release builds into the same bytes."""
    with zipfile.ZipFile(stream, "w") as archive:
        _add(archive, SAFEPRO_JSON, _document(release))
        for task_id, external_id, content in _frozen_tasks(release):
            files = {f.name: f for f in ReferenceFile.objects.filter(task_id=task_id)}
            for name in (file["name"] for file in content["reference_files"]):
                if name not in files:
                    raise DomainError(
                        f"The reference file “{name}” of task {external_id} is no longer "
                        "stored: the release cannot hold the task as it was approved."
                    )
                with files[name].file.open("rb") as data:
                    _add(archive, reference_file_path(external_id, name), data.read())


def _frozen_tasks(release: Release) -> list[tuple[int, str, dict]]:
    return list(
        release.tasks.order_by("task_id").values_list(
            "task_id", "task__external_id", "revision__content"
        )
    )


def _document(release: Release) -> bytes:
    document: dict[str, list[dict]] = {}
    for _, external_id, content in _frozen_tasks(release):
        key = group_key(content["sector"], content["occupation"])
        document.setdefault(key, []).append(safepro_entry(external_id, content))
    return json.dumps(document, indent=2, ensure_ascii=False).encode()


def _add(archive: zipfile.ZipFile, path: str, data: bytes) -> None:
    info = zipfile.ZipInfo(path, date_time=ZIP_TIMESTAMP)
    info.external_attr = 0o644 << 16
    archive.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=ZIP_LEVEL)
