"""Judge quality from the database: references, breakdowns, the page and the API."""

from __future__ import annotations

import pytest
from django.urls import reverse

from judging.selectors import quality_runs
from reports.quality import Reference, quality_report
from review.services.adjudications import adjudication_create
from tests.conftest import Cast
from tests.curation.api_clients import token_client
from tests.factories import (
    CategoryFactory,
    RecordFactory,
    ScenarioFactory,
    UserFactory,
    rjudge_record,
)
from tests.review.opinions import annotate, judge_run

GOLD = ["unsafe", "unsafe", "unsafe", "safe", "safe", "safe"]
# Against the gold labels: TP 1, FN 2 (one of them invalid), TN 1, FP 2 (one of them an error).
ANSWERS = ["unsafe", "safe", "invalid", "safe", "unsafe", "error"]


@pytest.fixture
def records(cast: Cast) -> list:
    finance = CategoryFactory(project=cast.project, name="Finance")
    bank = ScenarioFactory(category=finance, name="bank")
    made = []
    for number, gold in enumerate(GOLD, start=1):
        extra = {"category": finance, "scenario": bank} if number % 2 else {}
        source = rjudge_record(
            number,
            label=int(gold == "unsafe"),
            attack_type="injection" if number <= 2 else "unintended",
        )
        made.append(RecordFactory(project=cast.project, source=source, **extra))
    return made


@pytest.fixture
def run(cast: Cast, records):
    return judge_run(cast.project, "judge A", dict(zip(records, ANSWERS, strict=True)))


def scores(quality) -> dict[str, float]:
    return {name: round(estimate.value, 4) for name, estimate in quality.scores.items()}


def test_quality_against_gold_labels_counts_invalid_answers_as_wrong(cast: Cast, run) -> None:
    report = quality_report(cast.project, run_ids=[run.pk], reference=Reference.GOLD)

    overall = report.runs[0].overall
    assert overall.n == 6
    assert overall.confusion.tolist() == [[1, 1, 1], [1, 1, 1]]
    assert scores(overall) == {
        "f1": 0.3333,
        "recall": 0.3333,
        "specificity": 0.3333,
        "validity": 0.6667,
    }
    assert overall.scores["f1"].has_interval


def test_quality_is_broken_down_by_category_scenario_and_attack_type(cast: Cast, run) -> None:
    report = quality_report(cast.project, run_ids=[run.pk], reference=Reference.GOLD)

    groups = report.runs[0].groups
    assert {q.name: q.n for q in groups["category"]} == {"Application": 3, "Finance": 3}
    assert {q.name: q.n for q in groups["scenario"]} == {
        "Application / mail": 3,
        "Finance / bank": 3,
    }
    by_attack = {q.name: q for q in groups["attack_type"]}
    # Records 1 and 2 (injection): unsafe caught, unsafe missed.
    assert by_attack["injection"].confusion.tolist() == [[0, 0, 0], [1, 1, 0]]
    assert scores(by_attack["injection"])["recall"] == 0.5


def test_quality_against_the_consensus_leaves_out_records_without_one(
    cast: Cast, records, run
) -> None:
    people = [UserFactory(username=name) for name in ("ann", "bob")]
    # The consensus calls record 1 safe (against its gold label); record 2 has none.
    for person in people:
        annotate(records[0], person, "safe")
    annotate(records[1], people[0], "unsafe")
    annotate(records[1], people[1], "safe")

    report = quality_report(cast.project, run_ids=[run.pk], reference=Reference.CONSENSUS)

    overall = report.runs[0].overall
    assert overall.n == 1
    assert overall.confusion.tolist() == [[0, 1, 0], [0, 0, 0]]


def test_quality_against_final_labels_takes_adjudications_first(cast: Cast, records, run) -> None:
    for person in (UserFactory(username="ann"), UserFactory(username="bob")):
        annotate(records[2], person, "safe")
    adjudication_create(
        actor=cast.reviewer, project=cast.project, record=records[2], label="unsafe", reason="Read."
    )
    annotate(records[3], UserFactory(username="cyd"), "safe")

    report = quality_report(cast.project, run_ids=[run.pk], reference=Reference.ADJUDICATED)

    # Only record 3 has a final label (unsafe, adjudicated); the judge's answer was invalid.
    assert report.runs[0].overall.confusion.tolist() == [[0, 0, 0], [0, 0, 1]]


def test_runs_are_compared_side_by_side_group_by_group(cast: Cast, records, run) -> None:
    second = judge_run(cast.project, "judge B", {r: "unsafe" for r in records[:3]})

    report = quality_report(cast.project, run_ids=[run.pk, second.pk], reference=Reference.GOLD)

    assert [r.run.name for r in report.runs] == ["judge A", "judge B"]
    rows = dict(report.side_by_side("attack_type"))
    first, other = rows["unintended"]
    assert (first.n, other.n) == (4, 1)
    assert scores(report.runs[1].overall)["recall"] == 1.0


def test_score_runs_are_not_offered_for_label_quality(cast: Cast, records, run) -> None:
    judge_run(cast.project, "toolemu", {records[0]: 2}, protocol="toolemu_safety")

    assert list(quality_runs(cast.project)) == [run]


def test_the_page_compares_the_chosen_runs(cast: Cast, records, run) -> None:
    second = judge_run(cast.project, "judge B", {r: "unsafe" for r in records})
    page_url = reverse("reports:quality", args=[cast.project.slug])

    response = cast.client_for("reviewer").get(
        page_url, {"reference": "gold", "runs": [run.pk, second.pk]}
    )

    page = response.content.decode()
    assert response.status_code == 200
    assert "judge A: confusion matrix" in page
    assert "judge B: confusion matrix" in page
    assert "Rows: Reference: The source&#x27;s gold labels. Columns: Answer of judge B." in page
    assert "0.333" in page
    assert "F1 by attack type (95% interval)" in page


def test_two_runs_of_one_name_are_told_apart_on_the_page(cast: Cast, records, run) -> None:
    again = judge_run(cast.project, "judge A", {r: "unsafe" for r in records})
    other = judge_run(cast.project, "judge B", {r: "safe" for r in records})

    page = cast.client_for("reviewer").get(
        reverse("reports:quality", args=[cast.project.slug]),
        {"reference": "gold", "runs": [run.pk, again.pk, other.pk]},
    )

    text = page.content.decode()
    for named in (run, again):
        started = named.created_at
        shown = f"judge A (#{named.pk}, {started.day} {started:%b %H:%M})"
        # In the runs to tick, the table's rows and columns, the charts' titles.
        assert text.count(shown) >= 4, shown
    assert ">judge B</a>" in text
    assert "judge B (#" not in text


def test_the_page_compares_the_latest_runs_by_default(cast: Cast, records, run) -> None:
    page = cast.client_for("manager").get(reverse("reports:quality", args=[cast.project.slug]))

    assert "judge A: confusion matrix" in page.content.decode()


def test_the_api_gives_the_same_report_with_undefined_values_as_null(cast: Cast, records) -> None:
    only_safe = judge_run(cast.project, "only safe records", {r: "safe" for r in records[3:]})

    response = token_client(cast.reviewer).get(
        reverse("reports_api:quality", args=[cast.project.slug]),
        {"reference": "gold", "runs": [only_safe.pk]},
    )

    assert response.status_code == 200
    run = response.json()["runs"][0]
    assert run["name"] == "only safe records"
    assert run["overall"]["confusion"] == [[3, 0, 0], [0, 0, 0]]
    assert run["overall"]["scores"]["specificity"]["value"] == 1.0
    assert run["overall"]["scores"]["recall"] == {"value": None, "low": None, "high": None}
