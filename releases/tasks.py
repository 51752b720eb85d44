"""Celery tasks of the releases app: thin, taking ids, safe to run twice."""

from __future__ import annotations

import logging

from celery import shared_task

from curation.job_leases import job_kind_register
from releases.models import Release
from releases.services import release_build, releases_unbuilt

logger = logging.getLogger(__name__)


@shared_task
def build_release(release_id: int) -> None:
    try:
        release_build(release_id)
    except Release.DoesNotExist:
        logger.warning("Release %s no longer exists; nothing to build", release_id)


# A build whose worker died is sent again (curation/job_leases.py).
job_kind_register("releases.tasks.build_release", releases_unbuilt)
