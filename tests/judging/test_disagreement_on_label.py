"""A label that arrives is checked against the record's other labels by a worker, at once."""

from __future__ import annotations

import time

from curation.services.annotations import Label, annotation_update
from judging.models import Disagreement
from tests.conftest import Cast
from tests.curation.annotators import add_annotator, label_next, make_records

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
