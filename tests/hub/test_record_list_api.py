"""The API's record list offers what the record list page offers: labels (n of k), consensus,
final label, open disagreements and the runs' verdicts, the same filters, sort and page size,
and the same bulk actions, for the same people. Annotators get none of it."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from curation.choices import ConsensusRule
from curation.models import AuditEvent
from judging.models import JudgeRun
from review.models import Disagreement
from tests.annotation.annotators import make_records
from tests.conftest import Cast
from tests.curation.api_clients import token_client
from tests.factories import ProjectFactory
from tests.judging.judge_runs import make_connection
from tests.review.opinions import judge_run
from tests.review.test_one_consensus_rule import mixed_votes

pytestmark = pytest.mark.django_db


def api_list(cast: Cast, persona: str = "reviewer", **query):
    return token_client(getattr(cast, persona)).get(
        reverse("hub_api:record_list", args=[cast.project.slug]), query
    )


def page_rows(cast: Cast, **query) -> list[dict]:
    response = cast.client_for("reviewer").get(
        reverse("hub:record_list", args=[cast.project.slug]), query
    )
    return response.context["records"]


@pytest.fixture
def opinions(cast: Cast):
    """Mixed votes under the majority rule, a run with a verdict, an error and a score, and an
    open disagreement."""
    project, records = mixed_votes(cast, ConsensusRule.MAJORITY)
    run = judge_run(project, "Strict", {records[2]: "unsafe", records[3]: "error", records[4]: 2})
    Disagreement.objects.create(
        project=project, record=records[2], kind=Disagreement.Kind.JUDGE_VS_HUMANS
    )
    return records, run


def test_each_record_carries_the_columns_of_the_page(cast: Cast, opinions) -> None:
    records, run = opinions

    results = {row["id"]: row for row in api_list(cast).json()["results"]}

    two, three, four, seven, nine = (results[records[n].pk] for n in (2, 3, 4, 7, 9))
    assert (two["labels_given"], two["labels_needed"]) == (3, 3)
    assert (seven["labels_given"], seven["labels_needed"]) == (2, 3)
    assert (two["consensus"], two["final_label"], two["final_label_settled"]) == (
        "safe",
        "safe",
        False,
    )
    assert (nine["consensus"], nine["final_label"], nine["final_label_settled"]) == (
        None,
        "unsafe",
        True,
    )
    assert two["open_disagreements"] == ["judge_vs_humans"]
    assert three["open_disagreements"] == []

    def verdict(label=None, score=None, parse_status=None) -> list[dict]:
        said = {"label": label, "score": score, "parse_status": parse_status}
        return [{"run": run.pk, "run_name": "Strict", **said}]

    assert two["verdicts"] == verdict("unsafe", parse_status="valid")
    assert three["verdicts"] == verdict(parse_status="error")
    assert four["verdicts"] == verdict(score=2, parse_status="valid")
    assert seven["verdicts"] == verdict()


def test_the_api_and_the_page_agree_on_every_record(cast: Cast, opinions) -> None:
    shown = {
        row["id"]: (
            row["annotation_count"],
            row["labels_needed"],
            row["consensus"],
            row["final"],
            row["adjudicated"],
            len(row["disputes"]),
        )
        for row in page_rows(cast)
    }

    answered = {
        row["id"]: (
            row["labels_given"],
            row["labels_needed"],
            row["consensus"] or "",
            row["final_label"] or "",
            row["final_label_settled"],
            len(row["open_disagreements"]),
        )
        for row in api_list(cast).json()["results"]
    }

    assert answered == shown


@pytest.mark.parametrize(
    "query",
    [
        {"consensus": "safe"},
        {"consensus": "none"},
        {"final": "unsafe"},
        {"final": "none"},
        {"labels": "some"},
        {"labels": "none"},
        {"disputed": "yes"},
        {"disputed": "no"},
        {"verdict": "error"},
        {"verdict": "missing"},
        {"consensus": "unsafe", "sort": "-id"},
        {"sort": "labels", "per_page": 25},
        {"sort": "-external_id"},
    ],
)
def test_a_filter_or_order_lists_what_the_page_lists(cast: Cast, opinions, query: dict) -> None:
    _, run = opinions
    if "verdict" in query:
        query = {**query, "run": run.pk}

    response = api_list(cast, **query)

    listed = [row["id"] for row in page_rows(cast, **query)]
    assert listed
    assert response.status_code == 200
    assert [row["id"] for row in response.json()["results"]] == listed


def test_it_pages_by_the_size_asked(cast: Cast) -> None:
    make_records(cast.project, 30)

    first = api_list(cast, per_page=25, sort="-id").json()
    second = token_client(cast.reviewer).get(first["next"]).json()

    assert first["count"] == 30
    assert len(first["results"]) == 25 and len(second["results"]) == 5
    ids = [row["id"] for row in first["results"] + second["results"]]
    assert ids == sorted(ids, reverse=True)
    assert "per_page=25" in first["next"] and "sort=-id" in first["next"]


def test_it_refuses_a_page_size_or_filter_the_page_does_not_offer(cast: Cast) -> None:
    response = api_list(cast, per_page=7, verdict="safe", consensus="maybe")

    assert response.status_code == 400
    assert response.json() == {
        "consensus": ["Select a valid choice. maybe is not one of the available choices."],
        "verdict": ["Choose the judge run whose verdicts to filter by."],
        "per_page": ["Select a valid choice. 7 is not one of the available choices."],
    }


def test_a_run_filtered_by_adds_its_column_beside_the_latest_three(cast: Cast, opinions) -> None:
    records, oldest = opinions
    for name in ("Second", "Third", "Fourth"):
        judge_run(cast.project, name, {records[1]: "safe"})

    latest = api_list(cast).json()["results"][0]["verdicts"]
    with_oldest = api_list(cast, run=oldest.pk).json()["results"][0]["verdicts"]

    assert [v["run_name"] for v in latest] == ["Fourth", "Third", "Second"]
    assert [v["run_name"] for v in with_oldest] == ["Fourth", "Third", "Second", "Strict"]


def test_a_page_costs_the_same_queries_whatever_its_size(cast: Cast, opinions) -> None:
    api_list(cast, per_page=25)

    with CaptureQueriesContext(connection) as few:
        api_list(cast, per_page=25, sort="labels", consensus="safe")
    make_records(cast.project, 40)
    with CaptureQueriesContext(connection) as many:
        response = api_list(cast, per_page=50, sort="labels")

    assert len(response.json()["results"]) == 49
    assert len(many) == len(few)


@pytest.mark.parametrize("persona", ["annotator", "author"])
def test_an_annotator_gets_no_labels_verdicts_or_gold_labels(
    cast: Cast, opinions, persona: str
) -> None:
    for query in ({}, {"consensus": "safe"}, {"final": "unsafe"}, {"disputed": "yes"}):
        response = api_list(cast, persona, **query)

        assert response.status_code == 403
        body = response.content.decode()
        assert "safe" not in body and "Strict" not in body and "results" not in body


def test_another_projects_member_finds_no_project(cast: Cast, opinions) -> None:
    ProjectFactory().memberships.create(user=cast.outsider, role="manager")

    assert api_list(cast, "outsider").status_code == 404


# The bulk action.


def bulk(cast: Cast, persona: str, body: dict, query: str = ""):
    url = reverse("hub_api:record_bulk", args=[cast.project.slug])
    return token_client(getattr(cast, persona)).post(
        f"{url}?{query}", json.dumps(body), content_type="application/json"
    )


def test_a_manager_sends_records_chosen_by_id_to_adjudication(cast: Cast) -> None:
    records = make_records(cast.project, 3)

    response = bulk(cast, "manager", {"action": "adjudicate", "records": [records[0].pk]})

    assert response.status_code == 200
    assert response.json() == {
        "action": "adjudicate",
        "records": 1,
        "run": None,
        "more": None,
        "matched": None,
    }
    assert AuditEvent.objects.filter(action="judging.record.sent_to_adjudication").count() == 1


def test_a_manager_starts_a_run_on_every_record_the_query_matches(cast: Cast) -> None:
    make_records(cast.project, 3)
    unlabelled = make_records(cast.project, 4, gold_label="")
    judge = cast.project.judges.create(
        name="Strict",
        protocol="rjudge",
        connection=make_connection("http://127.0.0.1:9/v1", model_names="m"),
        model="m",
    )

    response = bulk(
        cast,
        "manager",
        {"action": "judge", "judge": judge.pk, "all_matching": True},
        "gold_label=none",
    )

    run = JudgeRun.objects.get(project=cast.project)
    assert response.status_code == 200
    assert response.json() == {
        "action": "judge",
        "records": 4,
        "run": run.pk,
        "more": None,
        "matched": 4,
    }
    assert run.record_ids == [r.pk for r in unlabelled]
    event = AuditEvent.objects.get(action="judging.records.matching_acted_on")
    assert event.after["filters"] == {"gold_label": "none"}


def test_more_labels_for_every_match(cast: Cast) -> None:
    records = make_records(cast.project, 2)

    response = bulk(cast, "manager", {"action": "more_labels", "more": 2, "all_matching": True})

    assert response.json() == {
        "action": "more_labels",
        "records": 2,
        "run": None,
        "more": 2,
        "matched": 2,
    }
    assert {r.extra_labels for r in type(records[0]).objects.filter(project=cast.project)} == {2}


@pytest.mark.parametrize(
    ("body", "query", "error"),
    [
        ({"action": "adjudicate"}, "", "Give either `records` or `all_matching`"),
        ({"action": "adjudicate", "records": [1], "all_matching": True}, "", "not both"),
        ({"action": "judge", "all_matching": True}, "", "Choose the judge to run."),
        ({"action": "judge", "judge": 999999, "records": [1]}, "", "No such judge"),
        ({"action": "adjudicate", "all_matching": True}, "verdict=safe", "Choose the judge run"),
        ({"action": "adjudicate", "all_matching": True}, "gold_label=safe", "No records match"),
    ],
)
def test_a_bulk_action_is_refused_in_words(cast: Cast, body: dict, query: str, error: str) -> None:
    make_records(cast.project, 2)

    response = bulk(cast, "manager", body, query)

    assert response.status_code == 400
    assert error in response.content.decode()
    assert not Disagreement.objects.exists() and not JudgeRun.objects.exists()


@pytest.mark.parametrize("persona", ["reviewer", "annotator", "author"])
def test_only_managers_act_on_records_through_the_api(cast: Cast, persona: str) -> None:
    make_records(cast.project, 2)

    response = bulk(cast, persona, {"action": "adjudicate", "all_matching": True})

    assert response.status_code == 403
    assert not Disagreement.objects.exists()
