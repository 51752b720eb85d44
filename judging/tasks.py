"""Celery tasks of the judging app: thin, taking ids, safe to run twice."""

from __future__ import annotations

import logging

from celery import Task, shared_task
from celery.signals import worker_ready
from django.conf import settings
from django.db import connection

from curation.job_leases import job_kind_register
from curation.jobs import job_send
from judging.models import JudgeRun
from judging.services.judges import connection_check_execute, connection_checks_unfinished
from judging.services.panels import panel_compute
from judging.services.run_engine import judge_run_execute
from judging.services.runs import judge_runs_recover

logger = logging.getLogger(__name__)


@shared_task(bind=True)
def run_judge(self: Task, run_id: int) -> None:
    try:
        judge_run_execute(run_id=run_id, worker=self.request.hostname or "")
    except JudgeRun.DoesNotExist:
        logger.warning("Judge run %s no longer exists; nothing to do", run_id)


@shared_task
def compute_panel(run_id: int) -> None:
    if not panel_compute(run_id=run_id):
        # Another worker holds the panel: look again once its heartbeat would be stale, to
        # take the panel over if that worker died.
        job_send(
            "judging.tasks.compute_panel", run_id, countdown=settings.JUDGE_RUN_STALE_SECONDS + 1
        )


@shared_task
def check_connection(check_id: int) -> None:
    connection_check_execute(check_id=check_id)


# A connection test whose worker died is made again (curation/job_leases.py).
job_kind_register("judging.tasks.check_connection", connection_checks_unfinished)


@worker_ready.connect
def recover(**kwargs: object) -> None:
    """A worker that starts takes up the runs a dead worker left (see judge_runs_recover)."""
    recovered = judge_runs_recover()
    if recovered:
        logger.info("Checking that judge runs %s still have a live worker", recovered)
    # This runs in the worker's parent process: pool processes it forks later must not share
    # its database connection.
    connection.close()
