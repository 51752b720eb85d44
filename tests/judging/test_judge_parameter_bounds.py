"""A judge's sampling parameters stay within their documented ranges, and its max_tokens within
what its connection allows: refused on the page and in the API when saved, and when a run of a
judge saved before would start."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from judging.models import Judge, JudgeRun
from judging.services.run_engine import judge_run_execute
from judging.services.runs import judge_run_create
from tests.fake_llm import FakeLLM
from tests.judging.judge_runs import make_connection, make_judge, numbered_records
from tests.judging.test_run_api import api_for

OUT_OF_BOUNDS = [
    ({"temperature": 2.5}, "temperature must be from 0 to 2."),
    ({"temperature": "hot"}, "temperature must be a number from 0 to 2."),
    ({"top_p": -0.1}, "top_p must be from 0 to 1."),
    ({"presence_penalty": 3}, "presence_penalty must be from -2 to 2."),
    ({"frequency_penalty": -2.01}, "frequency_penalty must be from -2 to 2."),
    ({"seed": 2**64}, "seed must be a 64-bit whole number."),
    ({"seed": 1.5}, "seed must be a whole number."),
    ({"stop": ["a", "b", "c", "d", "e"]}, "stop must be a text or a list of 1 to 4 texts"),
    ({"max_tokens": 0}, "max_tokens must be a whole number of at least 1."),
    ({"max_tokens": True}, "max_tokens must be a whole number of at least 1."),
    ({"max_tokens": 1_000_000_000}, "max_tokens must be at most 4,096"),
]


@pytest.fixture
def capped(db):
    return make_connection("http://127.0.0.1:9/v1", name="Capped", max_tokens=4096)


def judge_fields(connection, parameters: dict) -> dict:
    return {
        "name": "Bounded",
        "protocol": "rjudge",
        "connection": connection.pk,
        "model": "fake-judge-1",
        "parameters": parameters,
    }


@pytest.mark.parametrize(("parameters", "message"), OUT_OF_BOUNDS)
def test_the_api_refuses_parameters_out_of_their_range(cast, capped, parameters, message) -> None:
    url = reverse("judging_api:judge_list", args=[cast.project.slug])

    response = api_for(cast.manager).post(url, judge_fields(capped, parameters), format="json")

    assert response.status_code == 400
    assert message in response.json()["parameters"][0]
    assert not Judge.objects.exists()


def test_the_page_refuses_a_max_tokens_past_the_connection_and_names_the_bound(
    cast, capped
) -> None:
    fields = judge_fields(capped, {"temperature": 0, "max_tokens": 1_000_000_000})
    fields |= {"parameters": json.dumps(fields["parameters"]), "concurrency": 8}
    fields |= {"timeout_seconds": 60, "max_retries": 4}

    response = cast.client_for("manager").post(
        reverse("judging:judge_new", args=[cast.project.slug]), fields
    )

    assert response.status_code == 200
    assert "max_tokens must be at most 4,096: the most its connection allows." in (
        response.content.decode()
    )
    assert not Judge.objects.exists()


def test_parameters_at_their_bounds_are_taken(cast, capped) -> None:
    parameters = {
        "temperature": 2,
        "top_p": 0,
        "presence_penalty": -2,
        "frequency_penalty": 2,
        "seed": 2**63 - 1,
        "stop": ["\n\n", "END"],
        "max_tokens": 4096,
    }
    url = reverse("judging_api:judge_list", args=[cast.project.slug])

    response = api_for(cast.manager).post(url, judge_fields(capped, parameters), format="json")

    assert response.status_code == 201, response.json()
    assert Judge.objects.get().parameters == parameters


def test_a_patch_cannot_raise_max_tokens_past_the_connection(cast, capped) -> None:
    judge = make_judge(cast.project, "", connection=capped, parameters={"max_tokens": 100})
    url = reverse("judging_api:judge_detail", args=[cast.project.slug, judge.pk])

    response = api_for(cast.manager).patch(url, {"parameters": {"max_tokens": 4097}}, format="json")

    assert response.status_code == 400
    judge.refresh_from_db()
    assert judge.parameters == {"max_tokens": 100}


def test_managers_see_the_largest_max_tokens_a_connection_allows(cast, capped) -> None:
    response = api_for(cast.manager).get(
        reverse("judging_api:connection_list", args=[cast.project.slug])
    )

    assert response.json()["results"][0]["max_tokens"] == 4096


def test_a_run_of_a_judge_saved_with_absurd_parameters_fails_at_once_without_a_call(
    cast,
) -> None:
    numbered_records(cast.project, 3)
    with FakeLLM() as llm:
        connection = make_connection(llm.base_url, max_tokens=4096, tokens_per_minute=60_000)
        judge = make_judge(cast.project, "", connection=connection)
        # Saved before parameters were bounded.
        Judge.objects.filter(pk=judge.pk).update(
            parameters={"max_tokens": 1_000_000_000, "temperature": 50}
        )
        judge.refresh_from_db()
        run = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)

        judge_run_execute(run_id=run.pk)

    run.refresh_from_db()
    assert run.state == JudgeRun.State.FAILED
    assert "max_tokens must be at most 4,096" in run.error
    assert "temperature must be from 0 to 2." in run.error
    assert llm.request_count == 0


def test_a_connection_may_not_allow_answers_longer_than_its_tokens_per_minute(db) -> None:
    connection = make_connection(
        "http://127.0.0.1:9/v1", tokens_per_minute=10_000, max_tokens=20_000
    )

    with pytest.raises(ValidationError) as refused:
        connection.full_clean()

    assert "At most the tokens per minute" in str(refused.value.message_dict["max_tokens"])
