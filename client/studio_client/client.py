"""The studio's REST API as methods: projects, records, imports, labels, judge runs, releases.

Every method calls the routes of the API's OpenAPI schema (/api/schema/, shown at /api/docs/);
a list is followed page after page as it is iterated; an error answer raises the exception of
its kind (studio_client.errors).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePath
from typing import Any, Self, cast
from urllib.parse import quote

import httpx

from studio_client import jobs
from studio_client.errors import DownloadCorrupted, StudioError
from studio_client.http import Http, path_of
from studio_client.jobs import ProgressCallback
from studio_client.types import (
    Adjudication,
    Annotation,
    Connection,
    Disagreement,
    ImportBatch,
    ImportFormat,
    Judge,
    JudgeVerdict,
    LabelBasis,
    LabelFilter,
    LabelsGiven,
    Lease,
    ParseStatus,
    PerPage,
    Project,
    Protocol,
    Record,
    RecordRow,
    RecordSort,
    Release,
    Run,
    Verdict,
    VerdictFilter,
)

DEFAULT_TIMEOUT = 30.0


class StudioClient:
    """A session with one studio, as the owner of an API token.

        with StudioClient("https://studio.example.org/", token=os.environ["TOKEN"]) as studio:
            for project in studio.projects(): ...

    `timeout` is the seconds any one request may take (connecting, or waiting for the next
    bytes); `read_retries` how often a read that got no answer is tried again (changes never
    are). `transport` is httpx's, for a proxy or tests.
    """

    def __init__(
        self,
        url: str,
        token: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        read_retries: int = 2,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.http = Http(
            url, token, timeout=timeout, read_retries=read_retries, transport=transport
        )

    @classmethod
    def from_env(cls, **options: Any) -> StudioClient:
        """A client of the studio at $STUDIO_URL with the token in $STUDIO_TOKEN."""
        return cls(os.environ["STUDIO_URL"], os.environ["STUDIO_TOKEN"], **options)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # Projects and records

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
        managers) and, unless `wait` is false, follow its import until it ends.

        `on_progress` is called with a Progress as the bytes are sent ("uploading"), then with
        each state of the import. Raises JobFailed if the import failed (its `job["errors"]`
        say where), WaitTimedOut after `timeout` seconds (the import goes on)."""
        with Path(file).open("rb") as opened:
            upload = jobs.UploadReader(opened, on_progress)
            response = self.http.send(
                "POST",
                path_of("projects", project, "imports"),
                data={"format": format, "default_category": default_category},
                files={"file": (Path(file).name, upload, "application/octet-stream")},
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

    # Labels and answers

    def claim(self, project: str) -> Lease | None:
        """A lease on the next record for you to label (annotators), or the one you hold;
        None when there is nothing left for you."""
        response = self.http.send("POST", path_of("projects", project, "annotation", "claim"))
        return None if response.status_code == 204 else cast(Lease, response.json())

    def submit_label(
        self,
        project: str,
        lease_id: int,
        verdict: Verdict,
        *,
        risk_types: Sequence[str] = (),
        risk_description: str = "",
        safety_score: int | None = None,
        helpfulness_score: int | None = None,
        evidence_turns: Sequence[int] = (),
    ) -> Annotation:
        """Label the leased record: safe, unsafe or unsure, with what the project asks
        (`lease["asked"]`). Raises Conflict if its places were all taken meanwhile."""
        body: dict[str, Any] = {
            "verdict": verdict,
            "risk_types": list(risk_types),
            "risk_description": risk_description,
            "evidence_turns": list(evidence_turns),
        }
        if safety_score is not None:
            body["safety_score"] = safety_score
        if helpfulness_score is not None:
            body["helpfulness_score"] = helpfulness_score
        path = path_of("projects", project, "annotation", "leases", lease_id, "submit")
        return cast(Annotation, self.http.send("POST", path, json=body).json())

    def skip(self, project: str, lease_id: int) -> None:
        self.http.send(
            "POST", path_of("projects", project, "annotation", "leases", lease_id, "skip")
        )

    def my_labels(self, project: str) -> Iterator[Annotation]:
        """Your own labels in the project (annotators)."""
        return self.http.pages(path_of("projects", project, "annotation", "mine"))

    def disagreements(
        self,
        project: str,
        *,
        kind: str | None = None,
        state: str | None = None,
        record: int | None = None,
    ) -> Iterator[Disagreement]:
        """Disagreements, each with who said what (`labels`): annotators, judges' runs and the
        gold label (reviewers and managers)."""
        params = {"kind": kind, "state": state, "record": record}
        return self.http.pages(path_of("projects", project, "disagreements"), params)

    def adjudications(self, project: str) -> Iterator[Adjudication]:
        """Reviewers' final labels, newest first."""
        return self.http.pages(path_of("projects", project, "adjudications"))

    def adjudicate(
        self, project: str, record_id: int, label: str, *, reason: str, risk_description: str = ""
    ) -> Adjudication:
        """Settle a record (reviewers): its final label, and why."""
        body = {
            "record": record_id,
            "label": label,
            "reason": reason,
            "risk_description": risk_description,
        }
        response = self.http.send("POST", path_of("projects", project, "adjudications"), json=body)
        return cast(Adjudication, response.json())

    # Judges and their runs

    def connections(self, project: str) -> Iterator[Connection]:
        """The model connections a judge may use, with their models."""
        return self.http.pages(path_of("projects", project, "judges", "connections"))

    def judges(self, project: str) -> Iterator[Judge]:
        return self.http.pages(path_of("projects", project, "judges"))

    def create_judge(
        self,
        project: str,
        *,
        name: str,
        protocol: Protocol,
        connection: int,
        model: str,
        **settings: Any,
    ) -> Judge:
        """A judge (managers): a protocol and a model of a connection; `settings` are the
        schema's other fields (parameters, concurrency, timeout_seconds, max_retries, ...)."""
        body = {"name": name, "protocol": protocol, "connection": connection, "model": model}
        response = self.http.send(
            "POST", path_of("projects", project, "judges"), json={**body, **settings}
        )
        return cast(Judge, response.json())

    def start_run(
        self,
        project: str,
        judge: int,
        *,
        name: str = "",
        categories: Sequence[str] = (),
        only_labelled: bool = False,
        sample: int | None = None,
        seed: int | None = None,
        budget: str | None = None,
    ) -> Run:
        """Start a run of the judge over the project's records (those of `categories`, the
        labelled ones, a sample) that workers judge in the background; sent once."""
        body: dict[str, Any] = {
            "judge": judge,
            "name": name,
            "categories": list(categories),
            "only_labelled": only_labelled,
            "sample": sample,
            "seed": seed,
            "budget": budget,
        }
        response = self.http.send("POST", path_of("projects", project, "runs"), json=body)
        return cast(Run, response.json())

    def run(self, project: str, run_id: int) -> Run:
        return cast(Run, self.http.get(path_of("projects", project, "runs", run_id)))

    def runs(self, project: str) -> Iterator[Run]:
        return self.http.pages(path_of("projects", project, "runs"))

    def cancel_run(self, project: str, run_id: int) -> Run:
        path = path_of("projects", project, "runs", run_id, "cancel")
        return cast(Run, self.http.send("POST", path).json())

    def watch_run(
        self, project: str, run_id: int, *, poll_interval: float = 1.0, timeout: float | None = None
    ) -> Iterator[Run]:
        """The run's state, read every `poll_interval` seconds, until it has ended."""
        return jobs.watch(
            jobs.RUN,
            lambda: self.run(project, run_id),
            poll_interval=poll_interval,
            timeout=timeout,
        )

    def wait_for_run(
        self,
        project: str,
        run_id: int,
        *,
        on_progress: ProgressCallback | None = None,
        poll_interval: float = 1.0,
        timeout: float | None = None,
    ) -> Run:
        """The run once it has ended: succeeded, cancelled or stopped at its budget (see its
        `outcome`); raises JobFailed if it failed."""
        return cast(
            Run,
            jobs.wait(
                jobs.RUN,
                lambda: self.run(project, run_id),
                on_progress=on_progress,
                poll_interval=poll_interval,
                timeout=timeout,
            ),
        )

    def verdicts(
        self, project: str, run_id: int, *, parse_status: ParseStatus | None = None
    ) -> Iterator[JudgeVerdict]:
        """The judge's answers of a run, one a record: label or score, analysis, raw output."""
        path = path_of("projects", project, "runs", run_id, "verdicts")
        return self.http.pages(path, {"parse_status": parse_status})

    # Releases

    def create_release(
        self,
        project: str,
        version: str,
        *,
        license: str = "",
        notes: str = "",
        label_basis: LabelBasis = "final",
        public: bool = False,
        **options: Any,
    ) -> Release:
        """Freeze the project's records and labels as a release (managers), which a worker
        then builds into files. `license` defaults to the project's (one of them must say);
        `options` are the schema's other fields (annotator_labels, verdicts, safety_scores,
        ...). Sent once."""
        body = {
            "version": version,
            "license": license,
            "notes": notes,
            "label_basis": label_basis,
            "public": public,
        }
        response = self.http.send(
            "POST", path_of("projects", project, "releases"), json={**body, **options}
        )
        return cast(Release, response.json())

    def release(self, project: str, release_id: int) -> Release:
        return cast(Release, self.http.get(path_of("projects", project, "releases", release_id)))

    def releases(self, project: str) -> Iterator[Release]:
        return self.http.pages(path_of("projects", project, "releases"))

    def publish_release(self, project: str, release_id: int, *, public: bool = True) -> Release:
        path = path_of("projects", project, "releases", release_id)
        return cast(Release, self.http.send("PATCH", path, json={"public": public}).json())

    def wait_for_release(
        self,
        project: str,
        release_id: int,
        *,
        on_progress: ProgressCallback | None = None,
        poll_interval: float = 1.0,
        timeout: float | None = None,
    ) -> Release:
        """The release once built; raises JobFailed if its build failed."""
        return cast(
            Release,
            jobs.wait(
                jobs.RELEASE,
                lambda: self.release(project, release_id),
                on_progress=on_progress,
                poll_interval=poll_interval,
                timeout=timeout,
            ),
        )

    def download_release(
        self, project: str, release_id: int, folder: str | os.PathLike[str]
    ) -> list[Path]:
        """Download a built release's files into `folder`, each checked against the size and
        SHA-256 its release lists; returns their paths. A file that does not match is not
        kept (DownloadCorrupted)."""
        release = self.release(project, release_id)
        if release["state"] != "built":
            raise StudioError(f"The release {release['version']} is {release['state']}, not built.")
        target = Path(folder)
        target.mkdir(parents=True, exist_ok=True)
        return [self._download(project, release_id, entry, target) for entry in release["files"]]

    def _download(self, project: str, release_id: int, entry: Any, folder: Path) -> Path:
        name = entry["name"]
        # The name becomes a file here: a plain name, never a path out of the folder.
        if PurePath(name).name != name or name in {".", ".."}:
            raise StudioError(f"The release lists a file named {name!r}, which is not a file name.")
        path = path_of("projects", project, "releases", release_id, "files") + quote(name, safe="")
        partial = folder / f".{name}.part"
        digest, size = hashlib.sha256(), 0
        response = self.http.stream_read(path)
        try:
            with partial.open("wb") as out:
                for chunk in response.iter_bytes():
                    out.write(chunk)
                    digest.update(chunk)
                    size += len(chunk)
        finally:
            response.close()
        expected = (entry.get("size", size), entry.get("sha256", digest.hexdigest()))
        if (size, digest.hexdigest()) != expected:
            partial.unlink()
            raise DownloadCorrupted(
                f"{name}: {size} bytes of SHA-256 {digest.hexdigest()}, but the release lists "
                f"{expected[0]} bytes of SHA-256 {expected[1]}"
            )
        return partial.replace(folder / name)
