"""Celery tasks of task authoring: thin, taking ids, safe to run twice."""

from __future__ import annotations

import logging

from celery import shared_task

from authoring.models import TaskImport
from authoring.services.import_jobs import task_import_run, task_imports_unfinished
from curation.job_leases import job_kind_register

logger = logging.getLogger(__name__)


@shared_task
def run_task_import(task_import_id: int) -> None:
    try:
        task_import_run(task_import_id=task_import_id)
    except TaskImport.DoesNotExist:
        logger.warning("Task import %s no longer exists; nothing to do", task_import_id)


# An import whose worker died is sent again (curation/job_leases.py).
job_kind_register("authoring.tasks.run_task_import", task_imports_unfinished)
