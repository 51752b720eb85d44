"""Celery tasks of the curation app: thin, taking ids, safe to run twice."""

from __future__ import annotations

import logging

from celery import shared_task

from curation.models import ImportBatch
from curation.services.imports import import_batch_run
from curation.services.search import search_index_update

logger = logging.getLogger(__name__)


@shared_task
def run_import_batch(batch_id: int) -> None:
    try:
        import_batch_run(batch_id=batch_id)
    except ImportBatch.DoesNotExist:
        logger.warning("Import batch %s no longer exists; nothing to do", batch_id)


@shared_task
def update_search_index(project_id: int) -> None:
    search_index_update(project_id=project_id)
