"""Celery tasks of the review app: thin, taking ids, safe to run twice."""

from __future__ import annotations

from celery import shared_task
from celery.signals import worker_ready
from django.core.cache import cache
from django.db import connection

from review.models import PendingCheck
from review.services.disagreements import detect_pending

# How long labels gather before a worker checks their records: one task for all the labels of
# a second, instead of a task per label (see docs/benchmarks.md, Annotation).
CHECK_DELAY_SECONDS = 1


# A check due that never ran (its publication failed after the mark) gives way after this, so
# that the next label schedules another.
CHECK_DUE_SECONDS = 300


def check_due_key(project_id: int) -> str:
    """The cache key that says a check of the project's pending records is due."""
    return f"review:check-due:{project_id}"


def check_pending_records_soon(project_id: int) -> None:
    """Have a worker check the project's pending records in a moment, unless a check is due
    already: that one takes every record marked before it starts."""
    key = check_due_key(project_id)
    if not cache.add(key, True, timeout=CHECK_DUE_SECONDS):
        return
    try:
        check_pending_records.apply_async((project_id,), countdown=CHECK_DELAY_SECONDS)
    except Exception:
        cache.delete(key)
        raise


@shared_task
def check_pending_records(project_id: int) -> None:
    """Look for disagreements on the project's records whose labels changed since the last
    check."""
    # First: a label that commits after this check has taken the marks then finds no check
    # due, and schedules the next one.
    cache.delete(check_due_key(project_id))
    detect_pending(project_id=project_id)


@worker_ready.connect
def recover(**kwargs: object) -> None:
    """A worker that starts checks the records left unchecked while no check could be
    scheduled (the broker down, say)."""
    for project_id in PendingCheck.objects.values_list("project_id", flat=True).distinct():
        check_pending_records.delay(project_id)
    # This runs in the worker's parent process: pool processes it forks later must not share
    # its database connection.
    connection.close()
