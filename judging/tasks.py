"""Celery tasks of the judging app: thin, taking ids, safe to run twice."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready
from django.db import connection

from judging.models import JudgeRun
from judging.services.disagreements import detect_disagreements
from judging.services.run_engine import judge_run_execute
from judging.services.runs import judge_runs_recover

logger = logging.getLogger(__name__)


@shared_task
def run_judge(run_id: int) -> None:
    try:
        judge_run_execute(run_id=run_id)
    except JudgeRun.DoesNotExist:
        logger.warning("Judge run %s no longer exists; nothing to do", run_id)


@shared_task
def detect_record_disagreements(project_id: int, record_id: int) -> None:
    """A label of the record was submitted or changed: look for disagreements on it again."""
    detect_disagreements(project_id=project_id, record_ids=[record_id])


@worker_ready.connect
def recover_judge_runs(**kwargs: object) -> None:
    """A worker that starts takes up the runs a dead worker left (see judge_runs_recover)."""
    recovered = judge_runs_recover()
    if recovered:
        logger.info("Checking that judge runs %s still have a live worker", recovered)
    # This runs in the worker's parent process: pool processes it forks later must not share
    # its database connection.
    connection.close()
