"""Imports: create a batch, run it (in a Celery worker or in the caller), read its progress."""

from __future__ import annotations

import logging
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, NamedTuple

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import DatabaseError, transaction
from django.utils import timezone

from curation.errors import DomainError
from curation.importers import (
    ImportFailed,
    ImportLimits,
    ImportReport,
    Problem,
    import_records,
)
from curation.importers.writers import index_kept_words
from curation.job_leases import JobLiveness, job_lease, job_liveness
from curation.jobs import job_send_after_commit
from curation.models import ImportBatch, ImportFormat, Project, Record
from curation.progress import ProgressPublisher, progress_clear, progress_read
from curation.services.audit import audit_log
from curation.services.import_lock import lock_project_for_import
from curation.services.record_changes import record_changes_hold
from curation.services.search import search_index_update, search_index_update_later
from curation.services.table_statistics import analyse_after_large_write
from curation.signals import evaluations_imported, sample_scores_imported

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)

UPLOAD_SUFFIXES = (".json", ".jsonl", ".zip", ".eval")
PROGRESS_KIND = "import"
# The task that runs an uploaded import, whose lease the import holds wherever it runs.
IMPORT_TASK = "curation.tasks.run_import_batch"


def import_batch_create(
    *,
    actor: User | None,
    project: Project,
    upload: UploadedFile | None = None,
    path: Path | str | None = None,
    format: str = ImportFormat.AUTO,
    default_category: str = "",
) -> ImportBatch:
    """Create a pending import of an upload or of a path on this machine.

    An upload is stored under MEDIA_ROOT and handed to a Celery worker once the batch is
    committed. A path is left to the caller to run (see import_path): a worker may run on
    another machine, which does not see the caller's files.
    """
    if (upload is None) == (path is None):
        raise ValueError("Give either an upload or a path.")
    if upload is not None:
        _check_upload(upload)
        source_name = PurePath(upload.name or "upload").name
    else:
        source_name = str(path)
    default_category = default_category.strip()
    with transaction.atomic():
        batch = ImportBatch(
            project=project,
            created_by=actor if actor is not None and actor.is_authenticated else None,
            source_name=source_name[-300:],
            format=format,
            default_category=default_category,
        )
        if upload is not None:
            batch.upload = upload
        batch.full_clean()
        batch.save()
        audit_log(
            actor=actor,
            action="curation.import.requested",
            project=project,
            obj=batch,
            after={"source": batch.source_name, "format": batch.format},
        )
        if upload is not None:
            job_send_after_commit("curation.tasks.run_import_batch", batch.pk)
    return batch


def import_batch_run(*, batch_id: int) -> ImportBatch:
    """Run a pending batch from its upload: the body of the Celery task.

    Safe to run twice and concurrently: the run holds the batch's lease (a second run leaves
    it be), the batch row is locked for the whole import, and a finished batch is skipped. If
    the worker dies, the transaction rolls back, the lease runs out, and a live worker sends
    the import again (curation/job_leases.py), which starts again from nothing.
    """
    return _run(batch_id, source=None, index_now=False)


def import_path(
    *,
    actor: User | None,
    project: Project,
    path: Path | str,
    format: str = ImportFormat.AUTO,
    default_category: str = "",
    index_now: bool = False,
) -> ImportBatch:
    """Import a file, folder or zip on this machine now, in the caller's process.

    With `index_now`, the caller indexes the new records for the text search too, before it
    returns, rather than leaving them to a worker's job (a command that should finish its own
    work): never both, which would index every record twice at once.
    """
    batch = import_batch_create(
        actor=actor, project=project, path=path, format=format, default_category=default_category
    )
    return _run(batch.pk, source=Path(path), index_now=index_now)


class ImportProgress(NamedTuple):
    """How far an import is: records read so far, and bytes read of all (None until known)."""

    records: int
    bytes_read: int
    bytes_total: int | None

    @property
    def started(self) -> bool:
        return self.bytes_total is not None


def import_progress(batch: ImportBatch) -> ImportProgress:
    if batch.state == ImportBatch.State.SUCCEEDED:
        return ImportProgress(batch.record_count, 1, 1)
    published = progress_read(PROGRESS_KIND, batch.pk)
    if batch.state == ImportBatch.State.FAILED or published is None:
        return ImportProgress(0, 0, None)
    if import_liveness(batch).stopped:
        # The figures of a worker that died: what it read is gone with its transaction.
        return ImportProgress(0, 0, None)
    return ImportProgress(*published)


def import_liveness(batch: ImportBatch) -> JobLiveness:
    """Whether a worker runs the import now, and whether an earlier one stopped."""
    return job_liveness(IMPORT_TASK, batch.pk)


def import_batches_unfinished(before: datetime) -> list[int]:
    """The uploaded imports requested before `before` that no run has finished: a worker runs
    them, or should (curation/job_leases.py). An import of a path is its caller's."""
    unfinished = ImportBatch.objects.filter(
        state__in=(ImportBatch.State.PENDING, ImportBatch.State.RUNNING), created_at__lt=before
    )
    return list(unfinished.exclude(upload="").values_list("pk", flat=True))


def _check_upload(upload: UploadedFile) -> None:
    name = (upload.name or "").lower()
    if not name.endswith(UPLOAD_SUFFIXES):
        raise DomainError("Upload a .json, .jsonl, .eval or .zip file.")
    if upload.size is not None and upload.size > settings.IMPORT_MAX_FILE_BYTES:
        raise DomainError(
            f"The file is larger than the limit of {settings.IMPORT_MAX_FILE_BYTES:,} bytes. "
            "A .zip of it goes through if the zip is within the limit: records compress about "
            f"tenfold, and a zip may hold {settings.IMPORT_MAX_UNPACKED_BYTES:,} bytes unpacked."
        )


def _run(batch_id: int, *, source: Path | None, index_now: bool) -> ImportBatch:
    with job_lease(IMPORT_TASK, batch_id) as held:
        if not held:
            # Another worker runs the batch (the job sent twice): leave it be.
            return ImportBatch.objects.get(pk=batch_id)
        # Figures a worker that stopped published are not this run's.
        progress_clear(PROGRESS_KIND, batch_id)
        return _run_held(batch_id, source=source, index_now=index_now)


def _run_held(batch_id: int, *, source: Path | None, index_now: bool) -> ImportBatch:
    with transaction.atomic():
        batch = ImportBatch.objects.select_for_update(skip_locked=True).filter(pk=batch_id).first()
        if batch is None:
            # Another worker holds the batch (a duplicate delivery of the task): leave it be.
            return ImportBatch.objects.get(pk=batch_id)
        if batch.is_finished:
            if _stored_but_not_searchable(batch):
                # A run that stopped between storing the records and indexing their words
                # (SQLite) took the words with it: the job indexes them from the records.
                search_index_update_later(project_id=batch.project_id)
            return batch
        lock_project_for_import(batch.project_id)
        batch.state = ImportBatch.State.RUNNING
        batch.attempts += 1
        batch.started_at = timezone.now()
        if source is None and not batch.upload:
            missing = Problem(batch.source_name, None, "", "this import has no uploaded file")
            _finish_failed(batch, [missing])
            return batch
        words_kept = False
        try:
            # A savepoint: on failure the records go, the lock on the batch stays.
            with transaction.atomic():
                report = import_records(
                    batch=batch,
                    path=source if source is not None else Path(batch.upload.path),
                    name=batch.source_name,
                    format=batch.format,
                    default_category=batch.default_category,
                    limits=ImportLimits.from_settings(),
                    progress=ProgressPublisher(PROGRESS_KIND, batch.pk),
                )
                if report.evaluations:
                    evaluations_imported.send(
                        ImportBatch, batch=batch, evaluations=report.evaluations
                    )
                if report.sample_scores:
                    sample_scores_imported.send(
                        ImportBatch, batch=batch, scores=report.sample_scores
                    )
        except ImportFailed as failure:
            _finish_failed(batch, failure.problems)
        except Exception:
            logger.exception("Import batch %s stopped on an unexpected error", batch.pk)
            problem = Problem(
                batch.source_name, None, "", "the import stopped on an unexpected error"
            )
            _finish_failed(batch, [problem])
        else:
            _finish_succeeded(batch, report)
            words_kept = report.words_kept
    progress_clear(PROGRESS_KIND, batch.pk)
    # After the commit, so that a worker that died before it finds its upload again.
    _remove_finished_uploads(batch)
    if batch.state == ImportBatch.State.SUCCEEDED:
        analyse_after_large_write(batch.created_count, Record)
    if _stored_but_not_searchable(batch):
        _index_new_records(batch, words_kept=words_kept, index_now=index_now)
    return batch


def _remove_finished_uploads(batch: ImportBatch) -> None:
    """The upload of a failed import, of which nothing was kept, and those of imports that
    succeeded IMPORT_UPLOADS_KEPT_DAYS ago or more (at once by default): their records hold
    everything the upload said, and uploads would otherwise fill MEDIA_ROOT."""
    if batch.state == ImportBatch.State.FAILED and batch.upload:
        batch.upload.delete(save=True)
    cutoff = timezone.now() - timedelta(days=settings.IMPORT_UPLOADS_KEPT_DAYS)
    done = ImportBatch.objects.filter(state=ImportBatch.State.SUCCEEDED, finished_at__lte=cutoff)
    for finished in done.exclude(upload="").only("upload"):
        finished.upload.delete(save=True)


def _stored_but_not_searchable(batch: ImportBatch) -> bool:
    return (
        batch.state == ImportBatch.State.SUCCEEDED
        and bool(batch.created_count)
        and batch.searchable_at is None
    )


def _index_new_records(batch: ImportBatch, *, words_kept: bool, index_now: bool) -> None:
    """Have the text search find the batch's new records: at once from the words the import
    kept (SQLite), or from the records in this process when asked to, else by a job. When
    indexing here fails, a job does it: the records are stored, and must become searchable."""
    if words_kept or index_now:
        try:
            if words_kept:
                index_kept_words(project_id=batch.project_id)
                batch.searchable_at = timezone.now()
                batch.save(update_fields=["searchable_at"])
            else:
                # Marks the project's batches searchable once their records are.
                search_index_update(project_id=batch.project_id)
                batch.refresh_from_db(fields=["searchable_at"])
        except DatabaseError:
            logger.exception("Import batch %s: its words were not indexed; a job will", batch.pk)
        else:
            return
    search_index_update_later(project_id=batch.project_id)


def _finish_succeeded(batch: ImportBatch, report: ImportReport) -> None:
    batch.state = ImportBatch.State.SUCCEEDED
    batch.finished_at = timezone.now()
    batch.record_count = report.record_count
    batch.created_count = report.created_count
    batch.existing_count = report.existing_count
    batch.changed_count = len(report.changed)
    batch.category_counts = report.category_counts
    batch.label_counts = report.label_counts
    batch.duplicate_groups = report.duplicate_groups
    batch.evaluation_counts = _evaluation_counts(report)
    batch.errors = []
    batch.save()
    record_changes_hold(batch, report.changed)
    audit_log(
        actor=batch.created_by,
        action="curation.import.succeeded",
        project=batch.project,
        obj=batch,
        after={
            "records": report.record_count,
            "created": report.created_count,
            "existing": report.existing_count,
            "changed": len(report.changed),
            "duplicate_groups": len(report.duplicate_groups),
            # ToolEmu toolkits replace what the project knew of them: the log says which.
            **({"toolkits": report.toolkits} if report.toolkits else {}),
        },
    )


def _evaluation_counts(report: ImportReport) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for scored in report.evaluations:
        counts[f"{scored.evaluator} {scored.metric}"] += len(scored.scored)
    for scores in report.sample_scores:
        counts[scores.name] += len(scores.scored)
    return dict(sorted(counts.items()))


def _finish_failed(batch: ImportBatch, problems: list[Problem]) -> None:
    batch.state = ImportBatch.State.FAILED
    batch.finished_at = timezone.now()
    batch.record_count = batch.created_count = batch.existing_count = 0
    batch.errors = [problem.as_dict() for problem in problems]
    batch.save()
    audit_log(
        actor=batch.created_by,
        action="curation.import.failed",
        project=batch.project,
        obj=batch,
        after={"problems": len(problems)},
    )
