"""Verdicts answer as the served schema says, an error's and an invalid answer's empty label
included."""

from __future__ import annotations

from typing import Any

import pytest

from judging.models import JudgeRun, Verdict
from tests.api_schema import CHECKS, served_schema, token
from tests.conftest import Cast
from tests.factories import RecordFactory

pytestmark = pytest.mark.django_db(transaction=True)

VERDICTS = "/api/projects/{slug}/runs/{run_id}/verdicts/"


def test_verdicts_without_a_label_answer_within_the_schema(cast: Cast, live_server: Any) -> None:
    run = JudgeRun.objects.create(
        project=cast.project, source=JudgeRun.Source.IMPORTED, name="a run with every outcome"
    )
    outcomes = [
        {"parse_status": Verdict.Parse.VALID, "label": "unsafe"},
        {"parse_status": Verdict.Parse.INVALID, "raw_output": "I cannot say."},
        {"parse_status": Verdict.Parse.ERROR, "error": "The endpoint answered 500."},
    ]
    for outcome in outcomes:
        Verdict.objects.create(run=run, record=RecordFactory(project=cast.project), **outcome)
    schema = served_schema(live_server.url, cast.manager)
    case = schema[VERDICTS]["GET"].Case(
        path_parameters={"slug": cast.project.slug, "run_id": run.pk}
    )

    response = case.call_and_validate(headers=token(cast.manager), checks=CHECKS)

    labels = [verdict["label"] for verdict in response.json()["results"]]
    assert sorted(labels) == ["", "", "unsafe"]


@pytest.mark.parametrize(
    ("persona", "status"), [("anonymous", 401), ("annotator", 403), ("outsider", 404)]
)
def test_refusals_answer_with_a_status_and_body_the_schema_documents(
    cast: Cast, live_server: Any, persona: str, status: int
) -> None:
    run = JudgeRun.objects.create(project=cast.project, source=JudgeRun.Source.IMPORTED, name="r")
    schema = served_schema(live_server.url, cast.manager)
    case = schema[VERDICTS]["GET"].Case(
        path_parameters={"slug": cast.project.slug, "run_id": run.pk}
    )
    headers = {} if persona == "anonymous" else token(getattr(cast, persona))

    response = case.call_and_validate(headers=headers, checks=CHECKS)

    assert response.status_code == status
    assert response.json()["detail"]
