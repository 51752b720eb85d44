"""SafePro files imported by a worker: the upload is stored, a worker imports it, the page polls.

An upload may be large (a zip of reference files), and reading and checking every file takes
longer than a web request should wait, so the web server only stores it. The worker imports it
with safepro_import, which checks everything before it writes anything; then the upload goes,
whichever way the import ended: what it held is in the tasks now, or it was refused.
"""

from __future__ import annotations

import logging
from datetime import datetime
from pathlib import PurePath
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

from authoring.importers.safepro import TaskProblem
from authoring.importers.safepro_source import SafeProSource
from authoring.models import Task, TaskImport, task_files_folder
from authoring.services.imports import IMPORT_STATES, safepro_import
from authoring.workflow import project_roles
from curation.errors import DomainError, NotAllowed
from curation.job_leases import JobLiveness, job_lease, job_liveness
from curation.jobs import job_send_after_commit
from curation.models import Project, Role
from curation.services.audit import audit_log
from curation.services.import_lock import lock_project_for_import

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)

# The task that runs a task import, whose lease the import holds (curation/job_leases.py).
TASK_IMPORT_TASK = "authoring.tasks.run_task_import"


def task_import_create(
    *, actor: User, project: Project, upload: UploadedFile, state: str
) -> TaskImport:
    """Store an uploaded SafePro file (.json, or .zip with its reference files) and hand it to
    a worker once the import is committed."""
    if Role.MANAGER not in project_roles(actor, project.pk):
        raise NotAllowed("Only managers import tasks.")
    if state not in IMPORT_STATES:
        raise DomainError("Imported tasks start as drafts or as approved tasks.")
    name = PurePath(upload.name or "upload").name
    if not name.lower().endswith((".json", ".zip")):
        raise DomainError("Upload a SafePro .json file, or a .zip of it with its files.")
    if upload.size is not None and upload.size > settings.IMPORT_MAX_FILE_BYTES:
        raise DomainError(
            f"The file is larger than the limit of {settings.IMPORT_MAX_FILE_BYTES:,} bytes."
        )
    with transaction.atomic():
        job = TaskImport(
            project=project, created_by=actor, source_name=name[-300:], task_state=state
        )
        job.upload = upload
        job.full_clean()
        job.save()
        audit_log(
            actor=actor,
            action="curation.task_import.requested",
            project=project,
            obj=job,
            after={"source": job.source_name, "state": state},
        )
        job_send_after_commit("authoring.tasks.run_task_import", job.pk)
    return job


def task_import_run(*, task_import_id: int) -> TaskImport:
    """Import a stored upload: the body of the Celery task.

    Safe to run twice and concurrently: the run holds the import's lease (a second run leaves
    it be), the row is locked for the whole import, and a finished one is skipped. If the worker
    dies, the transaction rolls back, the lease runs out, and a live worker sends the import
    again (curation/job_leases.py), which starts again from nothing.
    """
    with job_lease(TASK_IMPORT_TASK, task_import_id) as held:
        if not held:
            return TaskImport.objects.get(pk=task_import_id)
        return _run_held(task_import_id)


def task_imports_unfinished(before: datetime) -> list[int]:
    """Task imports requested before `before` that no run has finished."""
    unfinished = TaskImport.objects.filter(
        state__in=(TaskImport.State.PENDING, TaskImport.State.RUNNING), created_at__lt=before
    )
    return list(unfinished.exclude(upload="").values_list("pk", flat=True))


def task_import_liveness(job: TaskImport) -> JobLiveness:
    """Whether a worker runs the import now, and whether an earlier one stopped."""
    return job_liveness(TASK_IMPORT_TASK, job.pk)


def _run_held(task_import_id: int) -> TaskImport:
    with transaction.atomic():
        job = (
            TaskImport.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(pk=task_import_id)
            .select_related("project", "created_by")
            .first()
        )
        if job is None:
            return TaskImport.objects.get(pk=task_import_id)
        if job.is_finished:
            return job
        if task_import_liveness(job).resumed:
            _remove_files_of_dead_runs(job.project_id)
        job.state = TaskImport.State.RUNNING
        job.attempts += 1
        problems = _import(job)
        job.state = TaskImport.State.FAILED if problems else TaskImport.State.SUCCEEDED
        job.problems = [problem.as_dict() for problem in problems]
        job.finished_at = timezone.now()
        job.save()
        audit_log(
            actor=job.created_by,
            action=f"curation.task_import.{job.state}",
            project=job.project,
            obj=job,
            after={
                "created": len(job.created),
                "existing": len(job.existing),
                "problems": len(problems),
            },
        )
    # After the commit: a worker that died before it would find its upload again.
    if job.upload:
        job.upload.delete(save=True)
    return job


def _remove_files_of_dead_runs(project_id: int) -> None:
    """Remove the reference files that a worker which died stored for tasks its transaction
    never committed: the folders of tasks the project does not have. Under the project's import
    lock, which every import storing files holds, so that no import in flight loses its own; a
    file uploaded on a task's page belongs to a task that exists."""
    lock_project_for_import(project_id)
    root = task_files_folder(project_id)
    try:
        folders, _ = default_storage.listdir(root)
    except FileNotFoundError:
        return
    tasks = {
        str(pk) for pk in Task.objects.filter(project_id=project_id).values_list("pk", flat=True)
    }
    for folder in set(folders) - tasks:
        _, names = default_storage.listdir(f"{root}/{folder}")
        for name in names:
            default_storage.delete(f"{root}/{folder}/{name}")
        logger.info("Removed %s files a dead worker stored in %s/%s", len(names), root, folder)


def _import(job: TaskImport) -> list[TaskProblem]:
    """Run the import in a savepoint; the problems that kept it from writing anything."""
    if job.created_by is None or not job.upload:
        return [_problem("the upload, or the manager who made it, is gone")]
    try:
        # Read as the upload it was: a .json alone has no reference files (none may be taken
        # from the folder uploads are kept in).
        with job.upload.open("rb") as stream:
            source = SafeProSource.from_upload(job.source_name, stream)
            # A savepoint: on failure the tasks go, the lock on the import's row stays.
            with transaction.atomic():
                report = safepro_import(
                    actor=job.created_by, project=job.project, source=source, state=job.task_state
                )
    except DomainError as error:
        return [_problem(error.message)]
    except Exception:
        logger.exception("Task import %s stopped on an unexpected error", job.pk)
        return [_problem("the import stopped on an unexpected error")]
    job.created, job.existing = report.created, report.existing
    return report.problems


def _problem(message: str) -> TaskProblem:
    return TaskProblem(key="", index=None, field="", message=message)
