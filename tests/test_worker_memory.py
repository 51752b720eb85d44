"""A worker process gives back to the system the memory a job freed, once the job ends: Python
returns a job's objects to the C allocator, which would otherwise keep the pages for the rest
of the process's life."""

from __future__ import annotations

from pathlib import Path

import pytest
from celery import signals

import config.celery

PAGES = 4096


def resident_mb() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * PAGES / 2**20


@pytest.mark.skipif(config.celery._malloc_trim is None, reason="the C library keeps its own")
def test_the_memory_a_job_freed_is_given_back_when_it_ends() -> None:
    # 200 MB of objects the size of a record's fields, one in a hundred of which outlives
    # the job, as a job's results and the process's own objects lie among them on the heap:
    # freeing the rest leaves their pages in the allocator's hands.
    job_data = [bytes(1000) + bytes([n % 256]) for n in range(200_000)]
    kept = job_data[::100]
    grown = resident_mb()
    del job_data
    freed = resident_mb()

    signals.task_postrun.send(sender=None)

    assert freed > grown - 50
    assert resident_mb() < freed - 150
    assert len(kept) == 2000
