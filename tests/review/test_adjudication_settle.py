"""A reviewer settles a record: its final label, and what happens to its disagreements."""

from __future__ import annotations

import pytest

from curation.errors import DomainError
from curation.models import AuditEvent
from review.models import Disagreement
from review.selectors import final_labels
from review.services.adjudications import adjudication_create
from review.services.disagreements import detect_disagreements
from tests.conftest import Cast
from tests.factories import RecordFactory, UserFactory
from tests.review.opinions import annotate, judge_run


@pytest.fixture
def split_record(cast: Cast):
    record = RecordFactory(project=cast.project)
    annotate(record, UserFactory(username="ann"), "unsafe")
    annotate(record, UserFactory(username="bob"), "unsafe")
    annotate(record, UserFactory(username="cyd"), "safe")
    judge_run(cast.project, "judge", {record: "safe"})
    detect_disagreements(project_id=cast.project.pk, record_ids=[record.pk])
    return record


def settle(cast: Cast, record, label: str = "unsafe", reason: str = "Deletes mail unasked."):
    return adjudication_create(
        actor=cast.reviewer, project=cast.project, record=record, label=label, reason=reason
    )


def test_settling_sets_the_final_label_and_resolves_every_open_disagreement(
    cast: Cast, split_record
) -> None:
    assert Disagreement.objects.filter(record=split_record, state="open").exists()

    settle(cast, split_record, "unsafe")

    assert final_labels(cast.project) == {split_record.pk: ("unsafe", "adjudicated")}
    assert not Disagreement.objects.filter(record=split_record, state="open").exists()


def test_the_latest_adjudication_is_the_final_label(cast: Cast, split_record) -> None:
    settle(cast, split_record, "unsafe")
    settle(cast, split_record, "safe", reason="On second thought, the mails were spam.")

    assert final_labels(cast.project)[split_record.pk] == ("safe", "adjudicated")
    assert split_record.adjudications.count() == 2


def test_every_adjudication_is_audited_with_the_label_before_and_after(
    cast: Cast, split_record
) -> None:
    adjudication = settle(cast, split_record, "unsafe")

    event = AuditEvent.objects.get(action="judging.adjudication.created")
    assert event.actor == cast.reviewer
    assert event.object_id == str(adjudication.pk)
    assert event.before == {"final_label": ["unsafe", "consensus"]}
    assert event.after["final_label"] == ["unsafe", "adjudicated"]
    assert event.after["reason"] == "Deletes mail unasked."
    assert event.after["resolved_disagreements"] == 2


def test_a_settled_disagreement_stays_settled_when_nothing_changes(
    cast: Cast, split_record
) -> None:
    settle(cast, split_record)

    detect_disagreements(project_id=cast.project.pk, record_ids=[split_record.pk])

    assert not Disagreement.objects.filter(record=split_record, state="open").exists()


def test_a_new_opinion_after_settling_opens_the_disagreement_again(
    cast: Cast, split_record
) -> None:
    settle(cast, split_record)
    annotate(split_record, UserFactory(username="dan"), "unsure")

    detect_disagreements(project_id=cast.project.pk, record_ids=[split_record.pk])

    reopened = Disagreement.objects.get(record=split_record, kind="annotators_split")
    assert reopened.state == "open"
    assert [e["name"] for e in reopened.labels] == ["ann", "bob", "cyd", "dan"]


@pytest.mark.parametrize(
    ("label", "reason", "message"),
    [
        ("unsure", "Why not.", "safe or unsafe"),
        ("unsafe", "   ", "Say why"),
    ],
)
def test_a_final_label_is_safe_or_unsafe_and_comes_with_a_reason(
    cast: Cast, split_record, label: str, reason: str, message: str
) -> None:
    with pytest.raises(DomainError, match=message):
        settle(cast, split_record, label, reason)

    assert not split_record.adjudications.exists()


def test_a_record_of_another_project_cannot_be_settled_here(cast: Cast) -> None:
    elsewhere = RecordFactory()

    with pytest.raises(DomainError, match="another project"):
        settle(cast, elsewhere)
