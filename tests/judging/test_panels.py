"""Panels: ended runs combined into one verdict per record, by majority or unsafe-if-any, with
ties and members' invalid answers and errors decided by the documented rule; a panel is a run
wherever runs are read (quality, disagreements, releases)."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from curation.errors import DomainError
from judging.models import JudgeRun, Verdict
from judging.protocols.rjudge import DECIDE
from judging.selectors import quality_runs
from judging.services.panels import panel_compute, panel_create, panel_verdict
from judging.services.run_engine import judge_run_execute
from judging.services.runs import judge_run_create
from releases.services import release_build, release_create, release_options
from review.models import Disagreement
from review.services.adjudications import adjudication_create
from tests.curation.api_clients import api_key
from tests.fake_llm import ChatRequest, FakeLLM, answer
from tests.judging.judge_runs import make_judge, numbered_records, record_number

VALID, INVALID, ERROR = Verdict.Parse.VALID, Verdict.Parse.INVALID, Verdict.Parse.ERROR
SAFE, UNSAFE = (VALID, "safe"), (VALID, "unsafe")
NO_ANSWER, FAILED = (INVALID, ""), (ERROR, "")


@pytest.mark.parametrize(
    ("answers", "majority", "any_unsafe"),
    [
        ([UNSAFE, UNSAFE, SAFE], UNSAFE, UNSAFE),
        ([SAFE, SAFE, UNSAFE], SAFE, UNSAFE),
        ([SAFE, SAFE, SAFE], SAFE, SAFE),
        # A tie is no answer by majority.
        ([SAFE, UNSAFE], NO_ANSWER, UNSAFE),
        ([SAFE, UNSAFE, NO_ANSWER], NO_ANSWER, UNSAFE),
        # Members without an answer abstain.
        ([SAFE, NO_ANSWER, FAILED], SAFE, SAFE),
        ([UNSAFE, NO_ANSWER, NO_ANSWER], UNSAFE, UNSAFE),
        ([SAFE, SAFE, FAILED, UNSAFE], SAFE, UNSAFE),
        # No member answered: no answer, or an error when every member's was one.
        ([NO_ANSWER, FAILED], NO_ANSWER, NO_ANSWER),
        ([FAILED, FAILED, FAILED], FAILED, FAILED),
    ],
)
def test_a_panel_decides_by_its_rule_and_members_without_an_answer_abstain(
    answers, majority, any_unsafe
) -> None:
    assert panel_verdict(answers, "majority") == majority
    assert panel_verdict(answers, "any_unsafe") == any_unsafe


def labels_by_number(table: dict[int, str]):
    """A judge answering `table[n]` on record n: "safe", "unsafe" or "?" (no usable answer)."""

    def respond(request: ChatRequest):
        if DECIDE not in request.last_message:
            return answer("An analysis.")
        said = table[record_number(request)]
        return answer("I cannot say." if said == "?" else said)

    return respond


# Three judges on records 1-5: record 1 all unsafe, 2 split two to one for unsafe, 3 two to one
# for safe, 4 one safe, one unsafe and one no answer (a tie), 5 one safe and two no answers.
ANSWERS = {
    "A": {1: "unsafe", 2: "unsafe", 3: "safe", 4: "safe", 5: "safe"},
    "B": {1: "unsafe", 2: "unsafe", 3: "safe", 4: "unsafe", 5: "?"},
    "C": {1: "unsafe", 2: "safe", 3: "unsafe", 4: "?", 5: "?"},
}


def three_runs(cast) -> list[JudgeRun]:
    numbered_records(cast.project, 5)
    runs = []
    for name, table in ANSWERS.items():
        with FakeLLM(labels_by_number(table)) as llm:
            judge = make_judge(cast.project, llm.base_url, name=f"Judge {name}")
            run = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)
            judge_run_execute(run_id=run.pk)
        run.refresh_from_db()
        runs.append(run)
    return runs


def make_panel(cast, members: list[JudgeRun], rule: str, name: str = "") -> JudgeRun:
    """A panel as the page asks for it, combined by the worker's job."""
    run = panel_create(
        actor=cast.manager, project=cast.project, members=members, rule=rule, name=name
    )
    panel_compute(run_id=run.pk)
    run.refresh_from_db()
    return run


def labels_of(run: JudgeRun) -> dict[str, str]:
    return {
        v.record.external_id: v.label or v.parse_status
        for v in run.verdicts.select_related("record")
    }


def test_a_panel_of_three_runs_gives_one_verdict_per_record_by_either_rule(cast) -> None:
    runs = three_runs(cast)

    majority = make_panel(cast, runs, "majority")
    any_unsafe = make_panel(cast, runs, "any_unsafe")

    assert majority.source == JudgeRun.Source.PANEL and majority.state == JudgeRun.State.SUCCEEDED
    assert labels_of(majority) == {
        "1": "unsafe",
        "2": "unsafe",
        "3": "safe",
        "4": "invalid",
        "5": "safe",
    }
    assert labels_of(any_unsafe) == {
        "1": "unsafe",
        "2": "unsafe",
        "3": "unsafe",
        "4": "unsafe",
        "5": "safe",
    }
    assert (majority.total, majority.valid_count, majority.invalid_count) == (5, 4, 1)
    assert sorted(majority.panel.members.values_list("pk", flat=True)) == [r.pk for r in runs]
    tie = majority.verdicts.get(record__external_id="4")
    assert tie.analysis == "Members: 1 no answer (invalid), 1 safe, 1 unsafe"


def test_a_panel_covers_only_the_records_every_member_judged(cast) -> None:
    runs = three_runs(cast)
    later = numbered_records(cast.project, 2, start=6)
    with FakeLLM() as llm:
        judge = make_judge(cast.project, llm.base_url, name="Judge D")
        run = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)
        judge_run_execute(run_id=run.pk)

    panel = make_panel(cast, [runs[0], run], "majority")

    assert run.verdicts.count() == 7
    assert panel.total == 5
    assert not panel.verdicts.filter(record__in=later).exists()


def test_a_panel_refuses_runs_that_cannot_be_combined(cast) -> None:
    runs = three_runs(cast)
    numbered_records(cast.project, 1, start=6)
    pending = judge_run_create(actor=cast.manager, project=cast.project, judge=runs[0].judge)
    panel = panel_create(actor=cast.manager, project=cast.project, members=runs, rule="majority")

    for members, message in (
        ([runs[0]], "two runs or more"),
        ([runs[0], pending], "Wait for these runs to end"),
        ([runs[0], panel], "not other panels"),
    ):
        with pytest.raises(DomainError, match=message):
            panel_create(actor=cast.manager, project=cast.project, members=members, rule="majority")
    assert JudgeRun.objects.filter(source=JudgeRun.Source.PANEL).count() == 1


def test_a_panel_is_a_run_in_quality_disagreements_and_releases(cast) -> None:
    runs = three_runs(cast)
    records = {record.external_id: record for record in cast.project.records.all()}
    # Reviewers settled every record unsafe but the fifth.
    for external_id, record in records.items():
        label = "safe" if external_id == "5" else "unsafe"
        adjudication_create(
            actor=cast.reviewer, project=cast.project, record=record, label=label, reason="Settled."
        )

    panel = make_panel(cast, runs, "any_unsafe", name="Panel")

    # Quality: offered, and measured as a run (all five right).
    assert panel in quality_runs(cast.project)
    page = cast.client_for("reviewer").get(
        reverse("reports:quality", args=[cast.project.slug]),
        {"runs": [panel.pk, runs[2].pk], "reference": "adjudicated"},
    )
    [quality] = [row for row in page.context["report"].runs if row.run == panel]
    assert quality.overall.scores["f1"].value == 1.0 and quality.overall.n == 5
    assert "Panel" in page.content.decode()
    # Disagreements: the panel's verdicts are a judge's opinion like any run's.
    split = Disagreement.objects.get(record=records["3"], kind=Disagreement.Kind.JUDGE_VS_JUDGE)
    assert {"source": "judge", "name": "Panel", "run": panel.pk, "label": "unsafe"} in split.labels
    # Releases: the panel's quality is in the release's judge quality.
    release = release_create(
        actor=cast.manager,
        project=cast.project,
        version="1.0.0",
        license="CC BY 4.0",
        options=release_options(leave_out_in_annotation=False),
    )
    release_build(release.pk)
    release.refresh_from_db()
    judges = {judge["run"]: judge for judge in release.summary["judges"]}
    assert judges["Panel"]["records"] == 5 and judges["Panel"]["f1"] == 1.0


def test_a_manager_asks_for_a_panel_and_its_page_follows_the_worker_to_the_end(cast) -> None:
    runs = three_runs(cast)
    url = reverse("judging:panel_new", args=[cast.project.slug])
    client = cast.client_for("manager")

    offered = client.get(url).context["form"].fields["members"].queryset
    response = client.post(url, {"members": [r.pk for r in runs[:2]], "rule": "majority"})
    panel = JudgeRun.objects.get(source=JudgeRun.Source.PANEL)
    waiting = client.get(response["Location"]).content.decode()
    panel_compute(run_id=panel.pk)
    final = client.get(response["Location"], HTTP_HX_REQUEST="true")

    assert set(offered) == set(runs)
    assert response.status_code == 302 and response["Location"].endswith(f"/runs/{panel.pk}/")
    assert "Majority of the members" in waiting and "Judge A" in waiting
    assert "Waiting for a worker" in waiting and "0 of 5 records combined" in waiting
    assert f'hx-get="{response["Location"]}"' in waiting
    # The poll's last answer: the final figures, and htmx stops polling.
    assert final.status_code == 286
    assert "5 of 5 records combined" in final.content.decode()
    assert "hx-get" not in final.content.decode().split('id="run-verdicts"')[0]


def test_managers_ask_for_panels_through_the_api_and_reviewers_follow_them(cast) -> None:
    runs = three_runs(cast)
    url = reverse("judging_api:panel_list", args=[cast.project.slug])
    body = {"runs": [r.pk for r in runs], "rule": "any_unsafe", "name": "API panel"}

    refused = {
        persona: api_for(getattr(cast, persona)).post(url, body, format="json").status_code
        for persona in ("annotator", "author", "reviewer")
    }
    accepted = api_for(cast.manager).post(url, body, format="json")
    single = api_for(cast.manager).post(url, {**body, "runs": [runs[0].pk]}, format="json")
    panel_compute(run_id=accepted.json()["id"])
    followed = api_for(cast.reviewer).get(accepted["Location"])
    listed = api_for(cast.reviewer).get(url)

    assert refused == {"annotator": 403, "author": 403, "reviewer": 403}
    assert accepted.status_code == 202
    assert accepted.json()["rule"] == "any_unsafe"
    assert accepted.json()["members"] == [r.pk for r in runs]
    assert accepted.json()["source"] == "panel" and accepted.json()["state"] == "pending"
    assert (accepted.json()["total"], accepted.json()["done"]) == (5, 0)
    assert single.status_code == 400
    assert followed.json()["outcome"] == "finished" and followed.json()["valid_count"] == 5
    assert [panel["name"] for panel in listed.json()["results"]] == ["API panel"]


def api_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_key(user)}")
    return client
