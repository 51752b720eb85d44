"""A judge's versions through the API: managers make versions (by hand or picked automatically)
and start evaluations, reviewers read them and the comparison, through the services the pages
call; nobody else does."""

from __future__ import annotations

import pytest
from django.urls import reverse

from alignment.services import judge_version_create
from curation.models import AuditEvent
from judging.models import JudgeEvaluation
from judging.services.run_engine import judge_run_execute
from tests.alignment.test_judge_alignment import (
    answers_by_number,
    quoted_numbers,
    scores,
    settled_project,
)
from tests.fake_llm import FakeLLM
from tests.judging.judge_runs import make_judge
from tests.judging.test_panels import api_for

OTHERS = ("annotator", "author")


def urls(cast, judge) -> dict[str, str]:
    slug = cast.project.slug
    return {
        "versions": reverse("alignment_api:judge_versions", args=[slug, judge.pk]),
        "evaluations": reverse("alignment_api:judge_evaluations", args=[slug, judge.pk]),
    }


def test_a_manager_makes_versions_by_hand_and_automatically_and_reviewers_list_them(cast) -> None:
    records = settled_project(cast)
    judge = make_judge(cast.project, "http://127.0.0.1:9/v1")
    url = urls(cast, judge)["versions"]
    by_hand = {"picked": "by_hand", "records": [records[5].pk, records[1].pk], "note": "Two"}

    refused = {
        persona: api_for(getattr(cast, persona)).post(url, by_hand, format="json").status_code
        for persona in ("reviewer", *OTHERS)
    }
    made = api_for(cast.manager).post(url, by_hand, format="json")
    automatic = api_for(cast.manager).post(url, {"count": 2}, format="json")
    listed = api_for(cast.reviewer).get(url)
    one = api_for(cast.reviewer).get(made["Location"])
    hidden = {persona: api_for(getattr(cast, persona)).get(url).status_code for persona in OTHERS}

    assert refused == {"reviewer": 403, "annotator": 403, "author": 403}
    assert made.status_code == 201 and automatic.status_code == 201
    assert made["Location"].endswith(f"/judges/{judge.pk}/versions/2/")
    assert [e["record_id"] for e in made.json()["examples"]] == [records[5].pk, records[1].pk]
    assert made.json()["picked"] == "by_hand" and made.json()["note"] == "Two"
    assert automatic.json()["number"] == 3 and automatic.json()["picked"] == "automatic"
    assert len(automatic.json()["examples"]) == 2
    # Version 1, the prompt as written, first; runs start with it.
    versions = listed.json()["results"]
    assert [(v["number"], v["active"], len(v["examples"])) for v in versions] == [
        (1, True, 0),
        (2, False, 2),
        (3, False, 2),
    ]
    assert one.json()["number"] == 2 and one.json()["created_by"] == "manager"
    assert hidden == {"annotator": 403, "author": 403}
    assert AuditEvent.objects.filter(action="judging.judge.version_created").count() == 2


def test_the_api_refuses_versions_the_pages_refuse(cast) -> None:
    records = settled_project(cast)
    unsettled = make_judge(cast.project, "http://127.0.0.1:9/v1")
    url = urls(cast, unsettled)["versions"]
    manager = api_for(cast.manager)
    record_ids = [records[1].pk]

    nothing_ticked = manager.post(url, {"picked": "by_hand"}, format="json")
    not_settled = manager.post(url, {"picked": "by_hand", "records": [10**9]}, format="json")
    missing = manager.get(url.replace("/versions/", "/versions/7/"))
    other = make_judge(cast.project, "http://127.0.0.1:9/v1", name="Other")
    version = judge_version_create(actor=cast.manager, judge=other, record_ids=record_ids)
    itself = manager.post(
        urls(cast, other)["evaluations"], {"candidate": 2, "baseline": 2}, format="json"
    )
    no_such = manager.post(urls(cast, other)["evaluations"], {"candidate": 3}, format="json")

    assert nothing_ticked.status_code == 400 and "records" in nothing_ticked.json()
    assert not_settled.status_code == 400
    assert not_settled.json()["detail"] == "Only settled records can be worked examples."
    assert missing.status_code == 404
    assert itself.status_code == 400
    assert itself.json()["detail"] == "A version is compared with another one."
    assert no_such.status_code == 404
    assert not unsettled.versions.exists() and version.number == 2
    assert not JudgeEvaluation.objects.exists()


def test_a_manager_starts_an_evaluation_and_reviewers_read_its_comparison(cast) -> None:
    records = settled_project(cast)
    held_out = (2, 3, 4, 6, 7, 8, 9)
    baseline_right, candidate_right, candidate_invalid = {2, 3, 4}, {2, 3, 6, 7, 9}, {8}
    baseline = answers_by_number(baseline_right, set())
    candidate = answers_by_number(candidate_right, candidate_invalid)
    with FakeLLM(lambda r: candidate(r) if quoted_numbers(r) else baseline(r)) as llm:
        judge = make_judge(cast.project, llm.base_url)
        judge_version_create(
            actor=cast.manager, judge=judge, record_ids=[records[1].pk, records[5].pk]
        )
        url = urls(cast, judge)["evaluations"]
        refused = {
            persona: api_for(getattr(cast, persona))
            .post(url, {"candidate": 2}, format="json")
            .status_code
            for persona in ("reviewer", *OTHERS)
        }
        started = api_for(cast.manager).post(url, {"candidate": 2}, format="json")
        evaluation = JudgeEvaluation.objects.get()
        running = api_for(cast.reviewer).get(started["Location"])
        judge_run_execute(run_id=evaluation.baseline_run_id)
        judge_run_execute(run_id=evaluation.candidate_run_id)
    done = api_for(cast.reviewer).get(started["Location"])
    listed = api_for(cast.reviewer).get(url)

    assert refused == {"reviewer": 403, "annotator": 403, "author": 403}
    assert started.status_code == 202
    assert started["Location"].endswith(f"/judges/{judge.pk}/evaluations/{evaluation.pk}/")
    assert (started.json()["candidate"], started.json()["baseline"]) == (2, 1)
    assert started.json()["records"] == len(held_out)
    assert running.json()["finished"] is False and running.json()["comparison"]["n"] == 0
    body = done.json()
    assert body["finished"] is True and body["comparison"]["n"] == len(held_out)
    figures = body["comparison"]
    said_by_candidate = {
        n: "invalid"
        if n in candidate_invalid
        else ("unsafe" if n % 2 else "safe")
        if n in candidate_right
        else ("safe" if n % 2 else "unsafe")
        for n in held_out
    }
    for metric, value in scores(said_by_candidate).items():
        assert figures["candidate"]["scores"][metric]["value"] == pytest.approx(value), metric
    assert {d["external_id"] for d in figures["candidate_better"]} == {
        records[n].external_id for n in candidate_right - baseline_right
    }
    assert figures["baseline_better_count"] == 1
    assert [e["id"] for e in listed.json()["results"]] == [evaluation.pk]
