"""Inspect eval logs in an import: each copied out of its folder or archive within the import's
limits, for Inspect's reader, which reads files by their path; and their scores, gathered by
task and scorer for the run each makes."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from curation.formats.inspect_log import (
    LogSample,
    SampleScore,
    UnreadableLog,
    log_format,
    read_log,
)
from curation.importers.problems import FileRejected, Problem
from curation.importers.sources import ImportLimits, SourceFile, UnpackedBytes, read_chunks


@dataclass
class ScorerScores:
    """A scorer's scores of a task's samples, each with the external id of its record and the
    log it came from."""

    task: str
    scorer: str
    scored: list[tuple[str, str, SampleScore]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.task} {self.scorer}"


def log_samples(
    file: SourceFile, unpacked: UnpackedBytes, limits: ImportLimits
) -> Iterator[LogSample]:
    """The samples of the log `file`; raises FileRejected when it is no log Inspect reads."""
    with tempfile.TemporaryDirectory(prefix="studio-inspect-") as folder:
        path = Path(folder, "log")
        with path.open("wb") as copy:
            for chunk in read_chunks(file, unpacked, limits):
                copy.write(chunk)
        # Named as Inspect names its logs, for the parts of its reader that go by the name.
        path = path.rename(path.with_suffix(f".{log_format(path)}"))
        try:
            yield from read_log(
                path,
                max_entries=limits.max_zip_entries,
                max_unpacked_bytes=limits.max_unpacked_bytes,
            )
        except UnreadableLog as error:
            message = f"not an Inspect eval log that Inspect reads: {error}"
            if file.name.lower().endswith(".json"):
                # A JSON object: taken for a log, though an R-Judge file was perhaps meant.
                message = f"an R-Judge file must hold a JSON list of records, and this is {message}"
            raise FileRejected(Problem(file.path, None, "", message)) from None
