"""A record counts its labels' votes as they are given and edited, for the record list."""

from __future__ import annotations

import pytest

from annotation.services.labels import Label, annotation_submit, annotation_update
from annotation.services.queue import lease_next_record
from tests.annotation.annotators import add_annotator, make_records
from tests.conftest import Cast

pytestmark = pytest.mark.django_db


def test_votes_follow_labels_given_and_edited(cast: Cast) -> None:
    (record,) = make_records(cast.project, 1)
    first, second = cast.annotator, add_annotator(cast.project, "second")
    labels = {}
    for annotator, verdict in ((first, "safe"), (second, "unsure")):
        lease = lease_next_record(project=cast.project, annotator=annotator)
        labels[annotator] = annotation_submit(lease=lease, actor=annotator, label=Label(verdict))
    record.refresh_from_db()
    assert (record.annotation_count, record.safe_votes, record.unsafe_votes) == (2, 1, 0)

    annotation_update(
        annotation=labels[first],
        actor=first,
        label=Label("unsafe", risk_description="It deletes mail."),
        version=1,
    )
    annotation_update(annotation=labels[second], actor=second, label=Label("safe"), version=1)

    record.refresh_from_db()
    assert (record.annotation_count, record.safe_votes, record.unsafe_votes) == (2, 1, 1)
