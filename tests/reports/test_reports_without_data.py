"""Judge quality and agreement, pages and API, on projects with nothing to measure yet: no runs,
no labels, only 0-3 score runs, runs over records without a reference. Each answers an empty,
well-formed report."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.conftest import Cast
from tests.curation.api_clients import token_client
from tests.factories import RecordFactory, UserFactory, rjudge_record
from tests.review.opinions import annotate, judge_run

pytestmark = pytest.mark.django_db

REFERENCES = ("gold", "consensus", "adjudicated")
SCALES = ("verdict", "safety", "helpfulness")
UNDEFINED = {"value": None, "low": None, "high": None}


def quality_api(cast: Cast, **query: object) -> dict:
    url = reverse("reports_api:quality", args=[cast.project.slug])
    response = token_client(cast.reviewer).get(url, query)
    assert response.status_code == 200, response.content
    return response.json()


def agreement_api(cast: Cast, scale: str) -> dict:
    url = reverse("reports_api:agreement", args=[cast.project.slug])
    response = token_client(cast.reviewer).get(url, {"scale": scale})
    assert response.status_code == 200, response.content
    return response.json()


def page(cast: Cast, name: str, **query: object) -> str:
    response = cast.client_for("reviewer").get(
        reverse(f"reports:{name}", args=[cast.project.slug]), query
    )
    assert response.status_code == 200, response.content
    return response.content.decode()


def score_run_only(cast: Cast) -> None:
    record = RecordFactory(project=cast.project, source=rjudge_record(1), searchable=False)
    judge_run(cast.project, "ToolEmu safety", {record: 2}, protocol="toolemu_safety")


@pytest.mark.parametrize("reference", REFERENCES)
def test_quality_of_a_project_without_runs_is_an_empty_report(cast: Cast, reference: str) -> None:
    assert quality_api(cast, reference=reference) == {
        "reference": reference,
        "runs": [],
        "left_out": [],
    }
    assert "No run with safety labels yet." in page(cast, "quality", reference=reference)


@pytest.mark.parametrize("reference", REFERENCES)
def test_quality_of_a_project_with_only_score_runs_is_an_empty_report(
    cast: Cast, reference: str
) -> None:
    score_run_only(cast)

    assert quality_api(cast, reference=reference) == {
        "reference": reference,
        "runs": [],
        "left_out": [],
    }
    assert "No run with safety labels yet." in page(cast, "quality", reference=reference)
    assert "ToolEmu safety" not in page(cast, "quality")


@pytest.mark.parametrize("reference", REFERENCES)
def test_a_run_over_records_without_a_reference_measures_nothing(
    cast: Cast, reference: str
) -> None:
    record = RecordFactory(
        project=cast.project, source=rjudge_record(1, label=None), searchable=False
    )
    run = judge_run(cast.project, "judge A", {record: "unsafe"})

    report = quality_api(cast, reference=reference, runs=[run.pk])

    (measured,) = report["runs"]
    assert measured["overall"]["n"] == 0
    assert measured["overall"]["confusion"] == [[0, 0, 0], [0, 0, 0]]
    assert measured["overall"]["scores"]["f1"] == UNDEFINED
    assert measured["groups"] == {"category": [], "scenario": [], "attack_type": []}
    assert "judge A: confusion matrix" in page(cast, "quality", reference=reference)


@pytest.mark.parametrize("scale", SCALES)
def test_agreement_of_a_project_without_labels_is_an_empty_report(cast: Cast, scale: str) -> None:
    report = agreement_api(cast, scale)

    assert (report["items"], report["annotators"]) == (0, 0)
    assert report["overall"] == dict.fromkeys(
        ("percent", "fleiss", "krippendorff", "gwet"), UNDEFINED
    )
    assert (report["pairs"], report["with_consensus"]) == ([], [])
    assert "0 records with two labels or more, from 0 annotators." in page(
        cast, "agreement", scale=scale
    )


@pytest.mark.parametrize("scale", SCALES)
def test_agreement_over_a_single_label_is_an_empty_report(cast: Cast, scale: str) -> None:
    score_run_only(cast)
    record = RecordFactory(project=cast.project, source=rjudge_record(2), searchable=False)
    annotate(record, UserFactory(username="ann"), "safe")

    report = agreement_api(cast, scale)

    assert report["items"] == 0
    assert report["overall"]["fleiss"] == UNDEFINED
    assert (report["pairs"], report["with_consensus"]) == ([], [])
    assert "No two annotators have labelled the same record yet." in page(
        cast, "agreement", scale=scale
    )


def score_api(cast: Cast, name: str, **query: object) -> dict:
    url = reverse(f"reports_api:{name}", args=[cast.project.slug])
    response = token_client(cast.reviewer).get(url, query)
    assert response.status_code == 200, response.content
    return response.json()


EMPTY_GROUPS = {"case": [], "toolkit": [], "source": []}


def label_run_only(cast: Cast) -> None:
    record = RecordFactory(project=cast.project, source=rjudge_record(1), searchable=False)
    judge_run(cast.project, "judge A", {record: "unsafe"})


@pytest.mark.parametrize("setup", [None, label_run_only], ids=["nothing", "label runs only"])
@pytest.mark.parametrize("scale", ("safety", "helpfulness"))
def test_evaluators_of_a_project_without_scores_are_an_empty_report(
    cast: Cast, setup, scale: str
) -> None:
    if setup:
        setup(cast)

    report = score_api(cast, "evaluators", scale=scale)

    consensus = {"key": "consensus", "name": "Human consensus"}
    assert (report["first"], report["second"]) == (consensus, consensus)
    assert report["overall"]["n"] == 0
    assert report["overall"]["table"] == [[0] * 4] * 4
    assert report["overall"]["statistics"]["kappa"] == UNDEFINED
    assert report["groups"] == EMPTY_GROUPS
    assert "0 records scored for" in page(cast, "evaluators", scale=scale)


@pytest.mark.parametrize("setup", [None, label_run_only], ids=["nothing", "label runs only"])
def test_the_source_models_of_a_project_without_scores_are_an_empty_view(cast: Cast, setup) -> None:
    if setup:
        setup(cast)

    view = score_api(cast, "source_models")

    assert view["models"] == []
    assert view["toolkit"] == ""
    assert "has scores from these sources yet." in page(cast, "source_models")


def test_score_reports_over_one_score_run_answer_what_it_alone_can_say(cast: Cast) -> None:
    score_run_only(cast)

    compared = score_api(cast, "evaluators", scale="safety")
    view = score_api(cast, "source_models")

    assert compared["first"]["name"] == "ToolEmu safety"
    assert compared["second"]["name"] == "Human consensus"
    assert compared["overall"]["n"] == 0
    (model,) = view["models"]
    assert (model["name"], model["safety_n"], model["helpfulness_n"]) == ("(none)", 1, 0)
    assert model["helpfulness"] == UNDEFINED
    # Without a helpfulness mean it cannot be placed, hence on no frontier.
    assert model["pareto"] is False
    assert "ToolEmu safety" in page(cast, "source_models")
