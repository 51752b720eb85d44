"""Heavy writing of a release's files in a thread of their own, beside the loop that reads the
records."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Self


class Background:
    """A thread of a file's own for its heavy writing (deflate, Arrow's parsing and Parquet
    encoding, which let go of the GIL) while the main loop reads and prints the next records.
    Jobs run in the order given, and at most one waits, so memory stays bounded."""

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(max_workers=1)
        self.pending: Future[None] | None = None

    def run(self, job: Callable[..., None], *args: Any) -> None:
        self._wait()
        self.pending = self.pool.submit(job, *args)

    def finish(self) -> None:
        try:
            self._wait()
        finally:
            self.pool.shutdown()

    def _wait(self) -> None:
        if self.pending is not None:
            pending, self.pending = self.pending, None
            # A job's error is raised here, in the main loop.
            pending.result()


class BackgroundSink:
    """A file written with the help of a Background thread, as a context manager. On a clean
    exit the part still in hand is written and awaited; after an error the file is abandoned
    (the build fails) and nothing more is written. Either way the thread is freed and the file
    closed."""

    background: Background

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc_info: object) -> None:
        try:
            if exc_type is None:
                self._write_rest()
        finally:
            try:
                self.background.finish()
            finally:
                self._close()

    def _write_rest(self) -> None:
        raise NotImplementedError

    def _close(self) -> None:
        raise NotImplementedError
