"""What the tests of acting on every record that matches the record list's filters share."""

from __future__ import annotations

from curation.models import Project, Record
from review.models import Disagreement
from tests.annotation.annotators import make_records


def unlabelled_over_two_pages(project: Project) -> list[Record]:
    """30 records without a gold label, more than a page of 25, among 5 with one."""
    make_records(project, 5)
    return make_records(project, 30, gold_label="")


def open_requests() -> set[int]:
    """The records sent to adjudication and not yet settled."""
    return set(
        Disagreement.objects.filter(
            kind=Disagreement.Kind.REQUESTED, state=Disagreement.State.OPEN
        ).values_list("record_id", flat=True)
    )
