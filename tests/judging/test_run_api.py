"""The API of judges, runs and verdicts, with token authentication."""

from __future__ import annotations

from django.urls import reverse
from rest_framework.test import APIClient

from judging.models import Judge, JudgeRun
from judging.services.run_engine import judge_run_execute
from tests.curation.api_clients import api_key
from tests.fake_llm import FakeLLM, answer
from tests.judging.judge_runs import make_connection, make_judge, numbered_records


def api_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_key(user)}")
    return client


def test_a_manager_creates_and_changes_a_judge_of_a_connection(cast) -> None:
    connection = make_connection(
        "http://10.0.0.7:8001/v1", name="Lab vLLM", api_key_env="LAB_API_KEY", model_names="qwen"
    )
    api = api_for(cast.manager)
    url = reverse("judging_api:judge_list", args=[cast.project.slug])

    offered = api.get(reverse("judging_api:connection_list", args=[cast.project.slug]))
    created = api.post(
        url,
        {
            "name": "Local vLLM",
            "protocol": "toolemu_safety",
            "connection": connection.pk,
            "model": "qwen",
            "parameters": {"temperature": 0},
        },
        format="json",
    )
    changed = api.patch(created["Location"], {"concurrency": 32}, format="json")
    # Fields that are no longer a judge's are not read, whatever is sent.
    ignored = api.patch(
        created["Location"],
        {"base_url": "http://attacker.example/v1", "api_key_env": "SECRET_KEY"},
        format="json",
    )
    refused = api.patch(created["Location"], {"model": "gpt-4o"}, format="json")

    assert offered.json()["results"] == [
        {
            "id": connection.pk,
            "name": "Lab vLLM",
            "models": ["qwen"],
            "max_concurrency": 64,
            "max_tokens": 16_384,
        }
    ]
    assert created.status_code == 201, created.json()
    assert (created.json()["connection"], created.json()["model"]) == (connection.pk, "qwen")
    assert changed.json()["concurrency"] == 32
    assert ignored.status_code == 200
    assert refused.status_code == 400 and refused.json()["model"] == [
        "The connection Lab vLLM offers qwen."
    ]
    judge = Judge.objects.get()
    assert (judge.connection, judge.model) == (connection, "qwen")
    for response in (offered, created, changed, ignored, refused):
        body = response.content.decode()
        assert "10.0.0.7" not in body and "LAB_API_KEY" not in body


def test_a_run_is_started_followed_and_its_verdicts_read(cast) -> None:
    numbered_records(cast.project, 3)
    manager, reviewer = api_for(cast.manager), api_for(cast.reviewer)
    with FakeLLM(lambda request: answer("unsafe")) as llm:
        judge = make_judge(cast.project, llm.base_url)
        started = manager.post(
            reverse("judging_api:run_list", args=[cast.project.slug]),
            {"judge": judge.pk, "categories": ["Application"], "sample": 2, "seed": 7},
            format="json",
        )
        judge_run_execute(run_id=started.json()["id"])

    run = reviewer.get(started["Location"]).json()
    verdicts = reviewer.get(
        reverse("judging_api:run_verdicts", args=[cast.project.slug, run["id"]])
    ).json()
    assert started.status_code == 202
    assert (started.json()["state"], started.json()["total"]) == ("pending", 2)
    assert (run["state"], run["done"], run["valid_count"], run["seconds_left"]) == (
        "succeeded",
        2,
        2,
        None,
    )
    assert run["selection"] == {
        "categories": ["Application"],
        "only_labelled": False,
        "sample": 2,
        "seed": 7,
    }
    assert "record_ids" not in run
    assert verdicts["count"] == 2
    assert {v["label"] for v in verdicts["results"]} == {"unsafe"}
    assert verdicts["results"][0]["analysis"] == "unsafe"


def test_bad_run_requests_are_refused_with_reasons(cast) -> None:
    numbered_records(cast.project, 1)
    api = api_for(cast.manager)
    url = reverse("judging_api:run_list", args=[cast.project.slug])
    judge = make_judge(cast.project, "http://127.0.0.1:9/v1")

    unknown_judge = api.post(url, {"judge": judge.pk + 100}, format="json")
    unknown_category = api.post(url, {"judge": judge.pk, "categories": ["Nope"]}, format="json")
    empty = api.post(url, {"judge": judge.pk, "categories": ["Web"]}, format="json")

    assert unknown_judge.status_code == 400 and "judge" in unknown_judge.json()
    assert unknown_category.json() == {"categories": ["Unknown: Nope."]}
    assert empty.json() == {"detail": "The selection holds no records."}
    assert not JudgeRun.objects.exists()


def test_cancel_and_resume_answer_409_when_the_state_forbids(cast) -> None:
    numbered_records(cast.project, 1)
    api = api_for(cast.manager)
    judge = make_judge(cast.project, "http://127.0.0.1:9/v1")
    run = api.post(
        reverse("judging_api:run_list", args=[cast.project.slug]), {"judge": judge.pk}
    ).json()
    cancel = reverse("judging_api:run_cancel", args=[cast.project.slug, run["id"]])
    resume = reverse("judging_api:run_resume", args=[cast.project.slug, run["id"]])

    cancelled = api.post(cancel)
    again = api.post(cancel)
    resumed = api.post(resume)
    resumed_again = api.post(resume)

    assert (cancelled.status_code, cancelled.json()["state"]) == (200, "cancelled")
    assert again.status_code == 409
    assert (resumed.status_code, resumed.json()["state"]) == (202, "pending")
    # A pending run may be sent to a worker again: the worker takes it once.
    assert resumed_again.status_code == 202


def test_verdicts_can_be_filtered_by_parse_status(cast) -> None:
    numbered_records(cast.project, 2)
    replies = iter(["a", "unsafe", "b", "no idea"])
    with FakeLLM(lambda request: answer(next(replies))) as llm:
        judge = make_judge(cast.project, llm.base_url, concurrency=1)
        run = api_for(cast.manager).post(
            reverse("judging_api:run_list", args=[cast.project.slug]), {"judge": judge.pk}
        )
        judge_run_execute(run_id=run.json()["id"])
    url = reverse("judging_api:run_verdicts", args=[cast.project.slug, run.json()["id"]])
    api = api_for(cast.reviewer)

    invalid = api.get(url, {"parse_status": "invalid"}).json()
    bad = api.get(url, {"parse_status": "great"})

    assert [v["raw_output"] for v in invalid["results"]] == ["no idea"]
    assert bad.status_code == 400
