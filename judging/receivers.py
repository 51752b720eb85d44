"""What the judging app does when other apps signal something."""

from __future__ import annotations

from functools import partial
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from annotation.models import Annotation
from curation.models import ImportBatch
from judging.services.evaluator_runs import evaluator_runs_import
from judging.tasks import check_pending_records_soon


def detect_on_label(sender: object, *, annotation: Annotation, **kwargs: Any) -> None:
    """A label is being submitted or changed: have a worker look again at its record, soon.

    Not here, in the annotator's request: the check takes the project's detection lock and
    reads every opinion on the record, which doubled the time of a label and made a project's
    annotators take turns. Nor in a task per label, which cost the worker more than the label
    cost the request (see docs/benchmarks.md, Annotation). The record is marked in the label's
    transaction, and a worker checks the marked records of the last second together.
    """
    # A mark already there is written again rather than left: a check that is taking it
    # meanwhile then waits for this label's commit, or this label waits for the check and marks
    # the record anew; either way, the label is seen. Plain SQL (PostgreSQL and SQLite), as the
    # rest of a submit: the ORM's bulk_create took three times as long.
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO judging_pendingcheck (record_id, project_id, marked_at) "
            "VALUES (%s, %s, %s) "
            "ON CONFLICT (record_id) DO UPDATE SET marked_at = excluded.marked_at",
            [
                annotation.record_id,
                annotation.project_id,
                connection.ops.adapt_datetimefield_value(timezone.now()),
            ],
        )
    transaction.on_commit(partial(check_pending_records_soon, annotation.project_id), robust=True)


def keep_evaluations(
    sender: object, *, batch: ImportBatch, evaluations: list[Any], **kwargs: Any
) -> None:
    """A record import held ToolEmu evaluator files: they become runs, in its transaction."""
    evaluator_runs_import(batch=batch, evaluations=evaluations)
