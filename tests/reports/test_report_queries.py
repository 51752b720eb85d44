"""What the reports are asked: a run of another project, an unknown or malformed id, a score
run, an unknown scale are refused with 400, in pages and API alike, and reveal nothing."""

from __future__ import annotations

import pytest
from django.urls import reverse

from curation.services.projects import project_create
from tests.conftest import Cast
from tests.curation.api_clients import token_client
from tests.factories import RecordFactory, rjudge_record
from tests.review.opinions import judge_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def foreign_run(cast: Cast):
    other = project_create(actor=cast.manager, name="Other", slug="other")
    record = RecordFactory(project=other, source=rjudge_record(1), searchable=False)
    return judge_run(other, "someone else's judge", {record: "safe"})


@pytest.fixture
def own_run(cast: Cast):
    record = RecordFactory(project=cast.project, source=rjudge_record(1), searchable=False)
    return judge_run(cast.project, "our judge", {record: "unsafe"})


def test_the_quality_api_refuses_a_run_of_another_project(cast: Cast, own_run, foreign_run) -> None:
    url = reverse("reports_api:quality", args=[cast.project.slug])

    response = token_client(cast.reviewer).get(url, {"runs": [own_run.pk, foreign_run.pk]})

    assert response.status_code == 400
    assert response.json() == {
        "runs": [f"No run of safety labels in this project has the id {foreign_run.pk}."]
    }


@pytest.mark.parametrize("run", ["999999", "0", "-1", "x", "²", "1.5", str(2**64)])
def test_the_quality_api_refuses_unknown_and_malformed_run_ids(cast: Cast, run: str) -> None:
    url = reverse("reports_api:quality", args=[cast.project.slug])

    response = token_client(cast.reviewer).get(url, {"runs": run})

    assert response.status_code == 400
    assert "runs" in response.json()


def test_the_quality_api_refuses_a_score_run(cast: Cast) -> None:
    record = RecordFactory(project=cast.project, source=rjudge_record(1), searchable=False)
    run = judge_run(cast.project, "ToolEmu safety", {record: 2}, protocol="toolemu_safety")

    response = token_client(cast.reviewer).get(
        reverse("reports_api:quality", args=[cast.project.slug]), {"runs": run.pk}
    )

    assert response.status_code == 400
    assert "runs" in response.json()


def test_the_reports_refuse_an_unknown_reference_or_scale(cast: Cast) -> None:
    client = token_client(cast.reviewer)
    quality = reverse("reports_api:quality", args=[cast.project.slug])
    agreement = reverse("reports_api:agreement", args=[cast.project.slug])

    assert client.get(quality, {"reference": "oracle"}).status_code == 400
    assert client.get(agreement, {"scale": "mood"}).status_code == 400
    assert client.get(quality, {"reference": ""}).json()["reference"] == "gold"


@pytest.mark.parametrize("record", ["x", "²", "0", str(2**64)])
def test_the_disagreement_list_refuses_a_malformed_record_id(cast: Cast, record: str) -> None:
    url = reverse("review_api:disagreement_list", args=[cast.project.slug])

    response = token_client(cast.reviewer).get(url, {"record": record})

    assert response.status_code == 400
    assert "record" in response.json()


def test_the_quality_page_refuses_a_run_of_another_project(
    cast: Cast, own_run, foreign_run
) -> None:
    url = reverse("reports:quality", args=[cast.project.slug])

    response = cast.client_for("reviewer").get(url, {"runs": [own_run.pk, foreign_run.pk]})

    assert response.status_code == 400
    page = response.content.decode()
    assert "Select a valid choice" in page
    assert "someone else&#x27;s judge" not in page and "someone else's judge" not in page
    assert "confusion matrix" not in page


@pytest.mark.parametrize("query", [{"runs": "x"}, {"reference": "oracle"}])
def test_the_quality_page_refuses_a_malformed_query(cast: Cast, own_run, query: dict) -> None:
    url = reverse("reports:quality", args=[cast.project.slug])

    assert cast.client_for("reviewer").get(url, query).status_code == 400


def test_the_quality_page_takes_the_latest_runs_when_given_only_a_reference(
    cast: Cast, own_run
) -> None:
    url = reverse("reports:quality", args=[cast.project.slug])

    response = cast.client_for("reviewer").get(url, {"reference": "consensus"})

    assert response.status_code == 200
    assert "our judge: confusion matrix" in response.content.decode()


def test_the_agreement_page_refuses_an_unknown_scale(cast: Cast) -> None:
    url = reverse("reports:agreement", args=[cast.project.slug])

    response = cast.client_for("reviewer").get(url, {"scale": "mood"})

    assert response.status_code == 400
    assert "Select a valid choice" in response.content.decode()
