"""Jobs that survive their worker: the lease a job holds while it runs, and its recovery.

A worker running a long job (an import, a release build, the search indexing) holds the job's
lease: a key in Django's cache (Redis on the full stack, files in the embedded setup) that a
thread of the worker renews every few seconds and that expires JOB_STALE_SECONDS after the
last renewal. A worker killed at any moment thus lets go of its jobs within that time, whatever
its transaction holds. The lease is in the cache rather than on the job's row because an import
works in one transaction: a heartbeat written to its row would be seen by nobody before the
commit (and on SQLite, which lets one transaction write at a time, could not be written at all).

Every worker, when it starts and every few seconds after (config/celery.py), sends again the
jobs that should be running but whose lease nobody holds (`jobs_recover`); each kind of job
says which of its rows are unfinished (`job_kind_register`, in the app's tasks module). A job
sent twice runs once: the copy finds the lease taken, or the job finished, and ends; should the
cache forget a lease, or two processes take it at once (the embedded file cache's `add` reads,
then writes), the job's own guard (a locked row, a conditional update, one transaction) still
writes it once. Redis's visibility timeout, which hands a dead worker's message out again
only an hour later, is not what recovers a job; the copy it sends then finds the job finished.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from curation.jobs import job_send

logger = logging.getLogger(__name__)

# How long a job's count of starts is kept after a worker died in it, so that its page can say
# the job stopped, then that it was resumed; a worker that ends the job forgets it.
STARTS_TTL_SECONDS = 24 * 3600


def _lease_key(task: str, pk: int) -> str:
    return f"job:lease:{task}:{pk}"


def _starts_key(task: str, pk: int) -> str:
    return f"job:starts:{task}:{pk}"


def _sent_key(task: str, pk: int) -> str:
    return f"job:sent:{task}:{pk}"


@contextmanager
def job_lease(task: str, pk: int) -> Iterator[bool]:
    """Hold the lease of the job `task` runs for row `pk` while the block runs: True, or False
    (and nothing held) when another worker holds it, which the caller leaves the job to."""
    key = _lease_key(task, pk)
    token = secrets.token_hex(8)
    stale = settings.JOB_STALE_SECONDS
    if not cache.add(key, token, stale):
        yield False
        return
    if not cache.add(_starts_key(task, pk), 1, STARTS_TTL_SECONDS):
        cache.incr(_starts_key(task, pk))
    stop = threading.Event()
    heartbeat = threading.Thread(
        target=_renew, args=(key, token, stop), name=f"lease {key}", daemon=True
    )
    heartbeat.start()
    try:
        yield True
    finally:
        stop.set()
        heartbeat.join()
        if cache.get(key) == token:
            # Its starts too: they matter only while the job waits for a worker to resume it.
            cache.delete_many([key, _starts_key(task, pk)])


def _renew(key: str, token: str, stop: threading.Event) -> None:
    # Five renewals a lease's lifetime: a late one or two (a busy machine) lose nothing.
    stale = settings.JOB_STALE_SECONDS
    while not stop.wait(stale / 5):
        try:
            if cache.get(key) not in (token, None):
                # The lease ran out and another worker took the job over: it is theirs now.
                return
            cache.set(key, token, stale)
        except Exception:
            # The cache may come back before the lease runs out; the job goes on meanwhile.
            logger.exception("Could not renew the lease %s", key)


@dataclass(frozen=True)
class JobLiveness:
    """What the pages say of an unfinished job: whether a worker holds it now, and how many
    times a worker has started it."""

    held: bool
    starts: int

    @property
    def stopped(self) -> bool:
        """A worker started the job and holds it no longer: it died, and another will resume."""
        return not self.held and self.starts > 0

    @property
    def resumed(self) -> bool:
        """A worker holds the job that an earlier worker had started and stopped."""
        return self.held and self.starts > 1


def job_liveness(task: str, pk: int) -> JobLiveness:
    found = cache.get_many([_lease_key(task, pk), _starts_key(task, pk)])
    return JobLiveness(
        held=_lease_key(task, pk) in found, starts=found.get(_starts_key(task, pk), 0)
    )


@dataclass(frozen=True)
class JobKind:
    task: str
    # The ids of the rows whose job should be running or waiting for a worker, of those that
    # were sent before the given time.
    unfinished: Callable[[datetime], Iterable[int]]


_kinds: dict[str, JobKind] = {}


def job_kind_register(task: str, unfinished: Callable[[datetime], Iterable[int]]) -> None:
    """Have workers recover the jobs of `task` (a task taking one row's id) whose rows
    `unfinished` gives when no worker holds their lease."""
    _kinds[task] = JobKind(task, unfinished)


def jobs_recover() -> dict[str, list[int]]:
    """Send again every unfinished job that no worker holds and that was sent longer than
    JOB_STALE_SECONDS ago: its worker died, or its message was lost. Each is sent once every
    JOB_STALE_SECONDS at most, however many workers look. Returns the ids sent, by task."""
    stale = settings.JOB_STALE_SECONDS
    before = timezone.now() - timedelta(seconds=stale)
    sent: dict[str, list[int]] = {}
    for kind in list(_kinds.values()):
        for pk in kind.unfinished(before):
            if cache.get(_lease_key(kind.task, pk)) is not None:
                continue
            if not cache.add(_sent_key(kind.task, pk), True, stale):
                continue
            job_send(kind.task, pk)
            sent.setdefault(kind.task, []).append(pk)
    return sent
