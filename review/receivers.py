"""What the review app does when other apps signal something: look for disagreements when a
label or a verdict is written."""

from __future__ import annotations

from functools import partial
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from annotation.models import Annotation
from review.models import PendingCheck
from review.services.disagreements import detect_disagreements
from review.tasks import check_pending_records_soon


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
            f"INSERT INTO {PendingCheck._meta.db_table} (record_id, project_id, marked_at) "  # noqa: S608 (a model's table)
            "VALUES (%s, %s, %s) "
            "ON CONFLICT (record_id) DO UPDATE SET marked_at = excluded.marked_at",
            [
                annotation.record_id,
                annotation.project_id,
                connection.ops.adapt_datetimefield_value(timezone.now()),
            ],
        )
    transaction.on_commit(partial(check_pending_records_soon, annotation.project_id), robust=True)


def detect_on_verdicts(
    sender: object, *, project_id: int, record_ids: list[int], **kwargs: Any
) -> None:
    """Verdicts are being written: look for disagreements on their records now, in their
    transaction, as a run's chunk, a panel or an import commits them."""
    detect_disagreements(project_id=project_id, record_ids=record_ids)
