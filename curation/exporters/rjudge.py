"""Records back in the R-Judge layout: `<Category>/<scenario>.json`, byte for byte as imported.

Every record keeps its source text (`raw`) and its place (`source_path`, `source_position`), and
R-Judge writes each file as `json.dumps(records, indent=4, ensure_ascii=True)` without a trailing
newline, so re-serialising the records file by file gives back the source files.
"""

from __future__ import annotations

import itertools
import json
import zipfile
from collections.abc import Iterator
from operator import itemgetter
from pathlib import Path, PurePosixPath
from typing import BinaryIO

import orjson

from curation.importers.layout import path_part
from curation.models import Project, Record


def rjudge_files(project: Project) -> Iterator[tuple[str, bytes]]:
    """(relative path, file content) for each file of the project's records, one at a time."""
    rows = (
        Record.objects.filter(project=project)
        .order_by("source_path", "source_position", "id")
        .values_list("source_path", "raw")
        .iterator(chunk_size=2000)
    )
    for source_path, group in itertools.groupby(rows, key=itemgetter(0)):
        records = [orjson.loads(raw) for _, raw in group]
        content = json.dumps(records, indent=4, ensure_ascii=True).encode("ascii")
        yield _safe_path(source_path), content


def rjudge_export_folder(project: Project, folder: Path) -> list[str]:
    """Write the project's files under `folder`; return their relative paths."""
    written = []
    for relative, content in rjudge_files(project):
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        written.append(relative)
    return written


def rjudge_export_zip(project: Project, stream: BinaryIO) -> int:
    """Write the project's files into a zip on `stream`; return how many files it holds."""
    count = 0
    with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for relative, content in rjudge_files(project):
            archive.writestr(relative, content)
            count += 1
    return count


def _safe_path(source_path: str) -> str:
    # Imports store safe paths; this holds for rows written any other way too.
    return "/".join(path_part(part) for part in PurePosixPath(source_path).parts if part != "/")
