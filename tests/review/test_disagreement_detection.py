"""Detecting disagreements on a chunk of records, as judge runs and labels arrive."""

from __future__ import annotations

import pytest

from review.models import Disagreement
from review.services.disagreements import detect_disagreements
from tests.conftest import Cast
from tests.factories import RecordFactory, UserFactory, rjudge_record
from tests.review.opinions import annotate, judge_run

Kind = Disagreement.Kind


@pytest.fixture
def people(cast: Cast) -> list:
    return [UserFactory(username=name) for name in ("ann", "bob", "cyd")]


def detect(cast: Cast, *records) -> dict[tuple[int, str], Disagreement]:
    detect_disagreements(project_id=cast.project.pk, record_ids=[r.pk for r in records])
    return {(d.record_id, d.kind): d for d in Disagreement.objects.filter(project=cast.project)}


def unsafe_record(cast: Cast, number: int = 1):
    return RecordFactory(project=cast.project, source=rjudge_record(number, label=1))


def test_annotators_who_split_are_flagged_with_who_said_what(cast: Cast, people) -> None:
    record = unsafe_record(cast)
    annotate(record, people[0], "unsafe")
    annotate(record, people[1], "safe")

    found = detect(cast, record)

    split = found[record.pk, Kind.ANNOTATORS_SPLIT]
    assert split.state == Disagreement.State.OPEN
    assert split.labels == [
        {"source": "annotator", "name": "ann", "label": "unsafe"},
        {"source": "annotator", "name": "bob", "label": "safe"},
    ]
    assert split.weight == 2


def test_unanimous_annotators_raise_nothing(cast: Cast, people) -> None:
    record = unsafe_record(cast)
    for person in people:
        annotate(record, person, "unsafe")

    assert detect(cast, record) == {}


def test_an_unsure_annotator_splits_the_annotators(cast: Cast, people) -> None:
    record = unsafe_record(cast)
    annotate(record, people[0], "unsafe")
    annotate(record, people[1], "unsure")

    assert (record.pk, Kind.ANNOTATORS_SPLIT) in detect(cast, record)


def test_a_judge_against_the_human_consensus_is_flagged(cast: Cast, people) -> None:
    record = unsafe_record(cast)
    annotate(record, people[0], "unsafe")
    annotate(record, people[1], "unsafe")
    run = judge_run(cast.project, "gpt run", {record: "safe"})

    found = detect(cast, record)

    assert set(found) == {(record.pk, Kind.JUDGE_VS_HUMANS)}
    assert found[record.pk, Kind.JUDGE_VS_HUMANS].labels[-1] == {
        "source": "judge",
        "name": "gpt run",
        "run": run.pk,
        "label": "safe",
    }


def test_a_judge_is_not_held_against_humans_before_k_labels_exist(cast: Cast, people) -> None:
    cast.project.overlap = 3
    cast.project.save()
    record = unsafe_record(cast)
    annotate(record, people[0], "unsafe")
    annotate(record, people[1], "unsafe")
    judge_run(cast.project, "gpt run", {record: "safe"})

    assert detect(cast, record) == {}


def test_without_a_strict_majority_there_is_no_consensus_to_disagree_with(
    cast: Cast, people
) -> None:
    record = unsafe_record(cast)
    annotate(record, people[0], "unsafe")
    annotate(record, people[1], "unsure")
    judge_run(cast.project, "gpt run", {record: "safe"})

    assert set(detect(cast, record)) == {(record.pk, Kind.ANNOTATORS_SPLIT)}


def test_invalid_outputs_and_errors_disagree_with_nobody(cast: Cast, people) -> None:
    record = unsafe_record(cast)
    annotate(record, people[0], "unsafe")
    annotate(record, people[1], "unsafe")
    judge_run(cast.project, "first", {record: "invalid"})
    judge_run(cast.project, "second", {record: "error"})
    judge_run(cast.project, "third", {record: "unsafe"})

    assert detect(cast, record) == {}


def test_two_runs_with_different_labels_are_flagged(cast: Cast) -> None:
    record = unsafe_record(cast)
    judge_run(cast.project, "first", {record: "unsafe"})
    judge_run(cast.project, "second", {record: "safe"})

    found = detect(cast, record)

    assert set(found) == {(record.pk, Kind.JUDGE_VS_JUDGE)}
    assert [e["name"] for e in found[record.pk, Kind.JUDGE_VS_JUDGE].labels] == ["first", "second"]


def test_a_consensus_against_the_gold_label_is_flagged(cast: Cast, people) -> None:
    record = unsafe_record(cast)
    annotate(record, people[0], "safe")
    annotate(record, people[1], "safe")

    found = detect(cast, record)

    assert set(found) == {(record.pk, Kind.HUMANS_VS_GOLD)}
    assert found[record.pk, Kind.HUMANS_VS_GOLD].labels[-1] == {
        "source": "gold",
        "name": "gold label",
        "label": "unsafe",
    }


def test_scores_two_apart_on_one_scale_are_flagged(cast: Cast, people) -> None:
    gap, close, across = (unsafe_record(cast, n) for n in (1, 2, 3))
    annotate(gap, people[0], "unsafe", safety=3)
    annotate(gap, people[1], "unsafe", safety=1)
    annotate(close, people[0], "unsafe", safety=3, helpfulness=1)
    annotate(close, people[1], "unsafe", safety=2, helpfulness=2)
    # A safety score of 3 and a helpfulness score of 0 are on different scales.
    annotate(across, people[0], "unsafe", safety=3)
    judge_run(cast.project, "helpful", {across: 0}, protocol="toolemu_helpfulness")

    found = detect(cast, gap, close, across)

    assert set(found) == {(gap.pk, Kind.SCORE_GAP)}
    assert found[gap.pk, Kind.SCORE_GAP].labels == [
        {"source": "annotator", "name": "ann", "scale": "safety", "score": 3},
        {"source": "annotator", "name": "bob", "scale": "safety", "score": 1},
    ]


def test_a_judges_score_counts_against_an_annotators(cast: Cast, people) -> None:
    record = unsafe_record(cast)
    annotate(record, people[0], "unsafe", safety=0)
    judge_run(cast.project, "toolemu", {record: 2}, protocol="toolemu_safety")

    assert set(detect(cast, record)) == {(record.pk, Kind.SCORE_GAP)}


def test_a_disagreement_that_no_longer_holds_is_resolved(cast: Cast, people) -> None:
    record = unsafe_record(cast)
    annotate(record, people[0], "unsafe")
    annotate(record, people[1], "safe")
    detect(cast, record)

    annotate(record, people[1], "unsafe")
    split = detect(cast, record)[record.pk, Kind.ANNOTATORS_SPLIT]

    assert split.state == Disagreement.State.RESOLVED
    assert split.resolved_at is not None


def test_a_disagreement_that_comes_back_opens_again(cast: Cast, people) -> None:
    record = unsafe_record(cast)
    annotate(record, people[0], "unsafe")
    annotate(record, people[1], "safe")
    detect(cast, record)
    annotate(record, people[1], "unsafe")
    detect(cast, record)

    annotate(record, people[1], "safe")
    split = detect(cast, record)[record.pk, Kind.ANNOTATORS_SPLIT]

    assert split.state == Disagreement.State.OPEN
    assert split.resolved_at is None
    assert Disagreement.objects.filter(record=record).count() == 1


def test_detecting_again_changes_nothing_when_no_opinion_changed(cast: Cast, people) -> None:
    record = unsafe_record(cast)
    annotate(record, people[0], "unsafe")
    annotate(record, people[1], "safe")
    before = detect(cast, record)[record.pk, Kind.ANNOTATORS_SPLIT]

    after = detect(cast, record)[record.pk, Kind.ANNOTATORS_SPLIT]

    assert after.updated_at == before.updated_at


def test_more_sources_weigh_more(cast: Cast, people) -> None:
    record = unsafe_record(cast)
    for person, verdict in zip(people, ("unsafe", "unsafe", "safe"), strict=True):
        annotate(record, person, verdict)
    judge_run(cast.project, "first", {record: "safe"})
    judge_run(cast.project, "second", {record: "unsafe"})

    found = detect(cast, record)

    assert found[record.pk, Kind.ANNOTATORS_SPLIT].weight == 3
    assert found[record.pk, Kind.JUDGE_VS_HUMANS].weight == 5
    assert found[record.pk, Kind.JUDGE_VS_JUDGE].weight == 2


def test_only_the_named_records_are_looked_at(cast: Cast, people) -> None:
    named, other = unsafe_record(cast, 1), unsafe_record(cast, 2)
    for record in (named, other):
        annotate(record, people[0], "unsafe")
        annotate(record, people[1], "safe")

    assert {record for record, _ in detect(cast, named)} == {named.pk}


def test_records_of_another_project_are_ignored(cast: Cast, people) -> None:
    elsewhere = RecordFactory()
    annotate(elsewhere, people[0], "unsafe")
    annotate(elsewhere, people[1], "safe")

    assert detect(cast, elsewhere) == {}
    assert not Disagreement.objects.exists()


def test_names_with_quotes_backslashes_and_tabs_are_kept_as_written(cast: Cast) -> None:
    record = unsafe_record(cast)
    odd = 'run "β" \\ with\ta tab\nand a line'
    judge_run(cast.project, odd, {record: "unsafe"})
    judge_run(cast.project, "plain", {record: "safe"})

    labels = detect(cast, record)[record.pk, Kind.JUDGE_VS_JUDGE].labels

    assert labels[0]["name"] == odd


def test_a_deleted_record_takes_its_disagreements_along(cast: Cast, people) -> None:
    # Their keys are not database constraints (detection writes too many rows to have each
    # checked): Django's cascade is what removes them.
    gone, kept = unsafe_record(cast, 1), unsafe_record(cast, 2)
    for record in (gone, kept):
        annotate(record, people[0], "unsafe")
        annotate(record, people[1], "safe")
    detect(cast, gone, kept)

    gone.delete()

    assert list(Disagreement.objects.values_list("record_id", flat=True)) == [kept.pk]
