"""The human consensus and the final labels releases use."""

from __future__ import annotations

import pytest

from annotation.consensus import human_consensus
from review.selectors import final_labels
from review.services.adjudications import adjudication_create
from tests.conftest import Cast
from tests.factories import RecordFactory, UserFactory
from tests.review.opinions import annotate


@pytest.fixture
def people() -> list:
    return [UserFactory(username=name) for name in ("ann", "bob", "cyd")]


def labelled(cast: Cast, people, *verdicts: str):
    record = RecordFactory(project=cast.project)
    for person, verdict in zip(people, verdicts, strict=False):
        annotate(record, person, verdict)
    return record


def test_the_consensus_is_what_a_strict_majority_says_once_k_labels_exist(
    cast: Cast, people
) -> None:
    cast.project.overlap = 3
    cast.project.save()
    agreed = labelled(cast, people, "unsafe", "unsafe", "safe")
    too_few = labelled(cast, people, "unsafe", "unsafe")
    split = labelled(cast, people, "unsafe", "safe", "unsure")
    unsure = labelled(cast, people, "unsure", "unsure", "safe")

    consensus = human_consensus(cast.project)

    assert consensus == {agreed.pk: "unsafe"}
    assert {too_few.pk, split.pk, unsure.pk}.isdisjoint(consensus)


def test_a_final_label_is_the_latest_adjudication_else_the_consensus(cast: Cast, people) -> None:
    by_consensus = labelled(cast, people, "safe", "safe")
    overruled = labelled(cast, people, "safe", "safe")
    settled = labelled(cast, people, "safe", "unsafe")
    unlabelled = RecordFactory(project=cast.project)
    for record, label in ((overruled, "unsafe"), (settled, "safe")):
        adjudication_create(
            actor=cast.reviewer, project=cast.project, record=record, label=label, reason="Read it."
        )

    labels = final_labels(cast.project)

    assert labels == {
        by_consensus.pk: ("safe", "consensus"),
        overruled.pk: ("unsafe", "adjudicated"),
        settled.pk: ("safe", "adjudicated"),
    }
    assert unlabelled.pk not in labels


def test_final_labels_can_be_asked_for_some_records(cast: Cast, people) -> None:
    first = labelled(cast, people, "safe", "safe")
    labelled(cast, people, "unsafe", "unsafe")

    assert final_labels(cast.project, [first.pk]) == {first.pk: ("safe", "consensus")}
