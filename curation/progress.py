"""Progress of long jobs, published where the pages can read it while the job runs.

A job that works in one transaction cannot show progress through its own rows: nobody sees them
before it commits. So progress goes through Django's cache (Redis on the full stack, files in the
embedded setup), which every web process and worker shares; the final state stays on the row.
"""

from __future__ import annotations

import time

from django.core.cache import cache

# Long enough for any job; short enough that a job whose worker died leaves no lasting trace.
PROGRESS_TTL_SECONDS = 6 * 3600


def _key(kind: str, pk: int) -> str:
    return f"progress:{kind}:{pk}"


def progress_publish(kind: str, pk: int, figures: tuple[int, ...]) -> None:
    cache.set(_key(kind, pk), figures, PROGRESS_TTL_SECONDS)


def progress_read(kind: str, pk: int) -> tuple[int, ...] | None:
    """The figures the job published last, or None when it has published nothing (yet)."""
    value = cache.get(_key(kind, pk))
    return tuple(value) if value is not None else None


def progress_clear(kind: str, pk: int) -> None:
    cache.delete(_key(kind, pk))


class ProgressPublisher:
    """Publishes a job's figures at most every `interval` seconds, and always its first ones,
    so that a fast loop does not spend its time talking to the cache."""

    def __init__(self, kind: str, pk: int, interval: float = 0.5) -> None:
        self.kind = kind
        self.pk = pk
        self.interval = interval
        self.last: float | None = None

    def __call__(self, *figures: int) -> None:
        now = time.monotonic()
        if self.last is None or now - self.last >= self.interval:
            self.last = now
            progress_publish(self.kind, self.pk, figures)
