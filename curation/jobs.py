"""Handing jobs to the Celery workers, by the name of the task that runs them.

A service that starts a job and the task that runs it would otherwise import each other: the
task calls the service, the service sends the task. Sent by name, the imports run one way
(tasks -> services); tests/test_jobs.py checks that every name sent is a task the workers know.
"""

from __future__ import annotations

from functools import partial

from celery import current_app
from django.db import transaction


def job_send(task: str, *args: int, countdown: float | None = None) -> None:
    """Hand the job to a worker now (`countdown` seconds from now, if given)."""
    current_app.send_task(task, args=args, countdown=countdown)


def job_send_after_commit(task: str, *args: int) -> None:
    """Hand the job to a worker once the current transaction commits, so that the worker sees
    the rows it is about; nothing is sent if the transaction rolls back."""
    transaction.on_commit(partial(job_send, task, *args))
