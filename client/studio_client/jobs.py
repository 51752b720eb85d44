"""Following a job the studio runs in the background (an import, a judge run, a release build)
by reading its state until it ends, and telling the caller how far it has got."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any, Literal

from studio_client.errors import JobFailed, WaitTimedOut
from studio_client.types import Progress

ProgressCallback = Callable[[Progress], None]
Kind = Literal["import", "run", "release"]


def _import_progress(batch: Any) -> Progress:
    read = batch.get("progress") or {}
    done, total = read.get("bytes_read", 0), read.get("bytes_total")
    return Progress("import", batch["id"], batch["state"], done, total, "bytes")


def _run_progress(run: Any) -> Progress:
    return Progress("run", run["id"], run["state"], run["done"], run["total"], "records")


def _release_progress(release: Any) -> Progress:
    # While it builds, the step it is at ("Records", "Dataset card and manifest", ...).
    build = release.get("progress") or {}
    step = build.get("step") or release["state"]
    done, total = build.get("records") or 0, build.get("total")
    return Progress("release", release["id"], step, done, total, "records")


@dataclass(frozen=True)
class JobKind:
    name: Kind
    # The states in which the job is over, and of those the one that means it failed.
    ended: frozenset[str]
    failed: str
    progress: Callable[[Any], Progress]


IMPORT = JobKind("import", frozenset({"succeeded", "failed"}), "failed", _import_progress)
RUN = JobKind(
    "run",
    frozenset({"succeeded", "failed", "cancelled", "budget_reached"}),
    "failed",
    _run_progress,
)
RELEASE = JobKind("release", frozenset({"built", "failed"}), "failed", _release_progress)


def watch(
    kind: JobKind,
    read: Callable[[], Any],
    *,
    poll_interval: float,
    timeout: float | None,
) -> Iterator[Any]:
    """The job's state, read every `poll_interval` seconds, until it ends (the last state
    yielded is the one it ended in). Raises JobFailed if it failed, WaitTimedOut if it is still
    going after `timeout` seconds."""
    started = time.monotonic()
    while True:
        job = read()
        yield job
        if job["state"] in kind.ended:
            if job["state"] == kind.failed:
                raise JobFailed(kind.name, job)
            return
        if timeout is not None and time.monotonic() - started + poll_interval > timeout:
            raise WaitTimedOut(kind.name, job, timeout)
        time.sleep(poll_interval)


def wait(
    kind: JobKind,
    read: Callable[[], Any],
    *,
    on_progress: ProgressCallback | None,
    poll_interval: float,
    timeout: float | None,
) -> Any:
    """The job's state once it has ended, calling `on_progress` with each state read."""
    job = None
    for job in watch(kind, read, poll_interval=poll_interval, timeout=timeout):
        if on_progress is not None:
            on_progress(kind.progress(job))
    return job


class UploadReader:
    """A file being uploaded, telling `on_progress` how many of its bytes were sent.

    httpx reads the file in chunks as it sends them, and asks its size (by its descriptor, or
    by seeking) so as to send a Content-Length: both are passed through to the file."""

    def __init__(self, file: IO[bytes], on_progress: ProgressCallback | None) -> None:
        self.file = file
        self.on_progress = on_progress
        self.total = os.fstat(file.fileno()).st_size
        self.sent = 0

    def fileno(self) -> int:
        return self.file.fileno()

    def tell(self) -> int:
        return self.file.tell()

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        position = self.file.seek(offset, whence)
        self.sent = position
        return position

    def read(self, size: int = -1) -> bytes:
        chunk = self.file.read(size)
        self.sent += len(chunk)
        if self.on_progress is not None and chunk:
            self.on_progress(Progress("import", None, "uploading", self.sent, self.total, "bytes"))
        return chunk
