"""Projects, their records as the record list shows them, and imports of records."""

from __future__ import annotations

import os
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, cast

from studio_client import jobs
from studio_client.http import Http, path_of
from studio_client.jobs import ProgressCallback
from studio_client.types import (
    ImportBatch,
    ImportFormat,
    LabelFilter,
    LabelsGiven,
    PerPage,
    Project,
    Record,
    RecordRow,
    RecordSort,
    VerdictFilter,
)


class RecordsApi:
    http: Http

    def projects(self) -> Iterator[Project]:
        """The projects you are a member of (all of them for a site administrator)."""
        return self.http.pages(path_of("projects"))

    def project(self, slug: str) -> Project:
        return cast(Project, self.http.get(path_of("projects", slug)))

    def records(
        self,
        project: str,
        *,
        q: str | None = None,
        category: str | None = None,
        scenario: str | None = None,
        agent: str | None = None,
        attack_type: str | None = None,
        gold_label: LabelFilter | None = None,
        labels: LabelsGiven | None = None,
        consensus: LabelFilter | None = None,
        final: LabelFilter | None = None,
        disputed: bool | None = None,
        run: int | None = None,
        verdict: VerdictFilter | None = None,
        sort: RecordSort | None = None,
        per_page: PerPage = 200,
    ) -> Iterator[RecordRow]:
        """The project's records as the record list shows them (reviewers and managers), with
        its filters: words in the interaction (`q`, the search box's syntax), category,
        scenario, agent, attack type, gold label, how far labelling is (`labels`), the human
        consensus, the final label, open disagreements (`disputed`), and what run `run` said
        (`verdict`). Every page is read in turn as the records are iterated."""
        params = {
            "q": q,
            "category": category,
            "scenario": scenario,
            "agent": agent,
            "attack_type": attack_type,
            "gold_label": gold_label,
            "labels": labels,
            "consensus": consensus,
            "final": final,
            "disputed": None if disputed is None else ("yes" if disputed else "no"),
            "run": run,
            "verdict": verdict,
            "sort": sort,
            "per_page": per_page,
        }
        return self.http.pages(path_of("projects", project, "records"), params)

    def record(self, project: str, record_id: int) -> Record:
        """A record whole, with its turns and its source as imported."""
        return cast(Record, self.http.get(path_of("projects", project, "records", record_id)))

    # Imports

    def import_file(
        self,
        project: str,
        file: str | os.PathLike[str],
        *,
        format: ImportFormat = "auto",
        default_category: str = "",
        on_progress: ProgressCallback | None = None,
        wait: bool = True,
        poll_interval: float = 1.0,
        timeout: float | None = None,
    ) -> ImportBatch:
        """Upload a file of records (an R-Judge scenario file, a zip of a data folder, JSONL:
        managers) and, unless `wait` is false, follow its import until it ends. A folder is
        zipped first, as one would by hand (the API takes one file).

        `on_progress` is called with a Progress as the bytes are sent ("uploading"), then with
        each state of the import. Raises JobFailed if the import failed (its `job["errors"]`
        say where), WaitTimedOut after `timeout` seconds (the import goes on)."""
        with _upload_of(Path(file)) as (name, opened):
            upload = jobs.UploadReader(opened, on_progress)
            response = self.http.send(
                "POST",
                path_of("projects", project, "imports"),
                data={"format": format, "default_category": default_category},
                files={"file": (name, upload, "application/octet-stream")},
            )
        batch = cast(ImportBatch, response.json())
        if not wait:
            return batch
        return self.wait_for_import(
            project,
            batch["id"],
            on_progress=on_progress,
            poll_interval=poll_interval,
            timeout=timeout,
        )

    def import_batch(self, project: str, batch_id: int) -> ImportBatch:
        return cast(ImportBatch, self.http.get(path_of("projects", project, "imports", batch_id)))

    def imports(self, project: str) -> Iterator[dict[str, Any]]:
        return self.http.pages(path_of("projects", project, "imports"))

    def watch_import(
        self,
        project: str,
        batch_id: int,
        *,
        poll_interval: float = 1.0,
        timeout: float | None = None,
    ) -> Iterator[ImportBatch]:
        """The import's state, read every `poll_interval` seconds, until it has ended."""
        return jobs.watch(
            jobs.IMPORT,
            lambda: self.import_batch(project, batch_id),
            poll_interval=poll_interval,
            timeout=timeout,
        )

    def wait_for_import(
        self,
        project: str,
        batch_id: int,
        *,
        on_progress: ProgressCallback | None = None,
        poll_interval: float = 1.0,
        timeout: float | None = None,
    ) -> ImportBatch:
        return cast(
            ImportBatch,
            jobs.wait(
                jobs.IMPORT,
                lambda: self.import_batch(project, batch_id),
                on_progress=on_progress,
                poll_interval=poll_interval,
                timeout=timeout,
            ),
        )


@contextmanager
def _upload_of(path: Path) -> Iterator[tuple[str, IO[bytes]]]:
    """The file to upload and its name: the file itself, or a zip of a folder (its files under
    the folder's name, so that an R-Judge data folder's category folders stay categories)."""
    if not path.is_dir():
        with path.open("rb") as opened:
            yield path.name, opened
        return
    with tempfile.TemporaryFile() as packed:
        with zipfile.ZipFile(packed, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for member in sorted(p for p in path.rglob("*") if p.is_file()):
                archive.write(member, (Path(path.name) / member.relative_to(path)).as_posix())
        packed.seek(0)
        yield f"{path.name}.zip", packed
