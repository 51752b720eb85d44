"""A label that arrives is checked against the record's other labels by a worker, within a
second or two, and no label goes unchecked: not when the broker is down as it commits, nor when
a check takes the record's mark while the label is being written."""

from __future__ import annotations

import threading
import time

from django.core.cache import cache
from django.db import connection, transaction

from annotation.services.labels import Label, annotation_submit, annotation_update
from annotation.services.queue import lease_next_record
from config.celery import app
from review.models import Disagreement, PendingCheck
from review.services.disagreements import detect_pending
from review.tasks import check_due_key
from tests.annotation.annotators import add_annotator, label_next, make_records
from tests.conftest import Cast

# How long the worker may take to look at a label.
WAIT_SECONDS = 20


def wait_for_disagreement(record, **fields) -> Disagreement:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        found = Disagreement.objects.filter(record=record, **fields).first()
        if found is not None:
            return found
        time.sleep(0.05)
    raise AssertionError(f"No disagreement {fields} on {record} after {WAIT_SECONDS} s")


def test_a_submitted_label_that_splits_the_annotators_opens_a_disagreement(
    cast: Cast, celery_worker: None
) -> None:
    (record,) = make_records(cast.project, 1)
    label_next(cast.project, cast.annotator, "unsafe", risk_description="Deletes the files.")
    label_next(cast.project, add_annotator(cast.project, "second"), "safe")

    found = wait_for_disagreement(record)

    assert found.kind == Disagreement.Kind.ANNOTATORS_SPLIT
    assert found.state == Disagreement.State.OPEN


def test_a_changed_label_that_ends_the_split_resolves_it(cast: Cast, celery_worker: None) -> None:
    (record,) = make_records(cast.project, 1)
    label_next(cast.project, cast.annotator, "unsafe", risk_description="Deletes the files.")
    second = label_next(cast.project, add_annotator(cast.project, "second"), "safe")
    wait_for_disagreement(record, state=Disagreement.State.OPEN)

    annotation_update(
        annotation=second,
        actor=second.annotator,
        label=Label("unsafe", risk_description="It does delete them."),
        version=second.version,
    )

    wait_for_disagreement(record, state=Disagreement.State.RESOLVED)

    # Checked: the record's mark is gone.
    assert not PendingCheck.objects.filter(record=record).exists()


def queued_tasks() -> int:
    """Tasks waiting in the broker's queue (Redis drops an empty queue's key: not found)."""
    with app.connection_or_acquire() as broker:
        try:
            return broker.default_channel.queue_declare("celery", passive=True).message_count
        except broker.channel_errors:
            return 0


def test_the_labels_of_a_moment_are_checked_by_one_task(cast: Cast, transactional_db: None) -> None:
    records = make_records(cast.project, 3)
    cache.delete(check_due_key(cast.project.pk))
    before = queued_tasks()

    for _ in records:
        label_next(cast.project, cast.annotator, "safe")

    assert queued_tasks() == before + 1
    assert PendingCheck.objects.filter(project=cast.project).count() == 3


def test_labels_whose_check_was_never_scheduled_are_checked_when_a_worker_starts(
    cast: Cast, transactional_db: None, start_worker
) -> None:
    (record,) = make_records(cast.project, 1)
    # A check is due whose task never reached the broker (it was down): labels meanwhile
    # schedule none of their own.
    cache.set(check_due_key(cast.project.pk), True)
    label_next(cast.project, cast.annotator, "unsafe", risk_description="Deletes the files.")
    label_next(cast.project, add_annotator(cast.project, "second"), "safe")
    assert queued_tasks() == 0

    start_worker("recovering")
    found = wait_for_disagreement(record)

    assert found.kind == Disagreement.Kind.ANNOTATORS_SPLIT


def check_then_close(project_id: int) -> None:
    try:
        detect_pending(project_id=project_id)
    finally:
        connection.close()


def test_a_label_written_while_a_check_takes_its_record_is_seen_by_that_check(
    cast: Cast, transactional_db: None
) -> None:
    (record,) = make_records(cast.project, 1)
    label_next(cast.project, cast.annotator, "unsafe", risk_description="Deletes the files.")
    second = add_annotator(cast.project, "second")
    lease = lease_next_record(project=cast.project, annotator=second)
    written, go_on = threading.Event(), threading.Event()

    def second_label_held_open() -> None:
        # The label is written, the record marked, the transaction still open.
        try:
            with transaction.atomic():
                annotation_submit(lease=lease, actor=second, label=Label("safe"))
                written.set()
                go_on.wait(10)
        finally:
            connection.close()

    labelling = threading.Thread(target=second_label_held_open)
    labelling.start()
    assert written.wait(10)
    checking = threading.Thread(target=check_then_close, args=(cast.project.pk,))
    checking.start()
    # The check has read the record's mark and now waits for the label to commit.
    checking.join(0.5)
    assert checking.is_alive()
    go_on.set()
    labelling.join(10)
    checking.join(10)

    found = Disagreement.objects.get(record=record)
    assert found.kind == Disagreement.Kind.ANNOTATORS_SPLIT
