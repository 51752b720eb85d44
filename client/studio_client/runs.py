"""Judges, their runs, and the verdicts the runs gave."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, cast

from studio_client import jobs
from studio_client.http import Http, path_of
from studio_client.jobs import ProgressCallback
from studio_client.types import Connection, Judge, JudgeVerdict, ParseStatus, Protocol, Run


class RunsApi:
    http: Http

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
