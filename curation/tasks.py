"""Celery tasks of the curation app: thin, taking ids, safe to run twice."""

from __future__ import annotations

import logging

from celery import shared_task

from curation.job_leases import job_kind_register
from curation.models import ImportBatch
from curation.services.imports import import_batch_run, import_batches_unfinished
from curation.services.search import projects_not_searchable, search_index_update_held

logger = logging.getLogger(__name__)


@shared_task
def run_import_batch(batch_id: int) -> None:
    try:
        import_batch_run(batch_id=batch_id)
    except ImportBatch.DoesNotExist:
        logger.warning("Import batch %s no longer exists; nothing to do", batch_id)


@shared_task
def update_search_index(project_id: int) -> None:
    search_index_update_held(project_id=project_id)


# Jobs a worker that died leaves are sent again (curation/job_leases.py).
job_kind_register("curation.tasks.run_import_batch", import_batches_unfinished)
job_kind_register("curation.tasks.update_search_index", projects_not_searchable)
