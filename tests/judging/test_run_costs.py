"""What a run costs: the connection's prices kept on the run, tokens and cost so far, an
estimate before it starts, a budget that stops it, and the costs on the Judges page."""

from __future__ import annotations

import json
from decimal import Decimal

from django.urls import reverse

from judging.models import JudgeRun, ModelConnection
from judging.services.run_engine import judge_run_execute
from judging.services.runs import judge_run_create, judge_run_plan, judge_run_resume
from tests.fake_llm import ChatRequest, FakeLLM, Reply, default_reply
from tests.judging.judge_runs import make_connection, make_judge, numbered_records

State = JudgeRun.State


def priced(base_url: str, **fields: object) -> ModelConnection:
    # 2 a million tokens in, 8 a million out.
    return make_connection(
        base_url, price_in_per_million=Decimal("2"), price_out_per_million=Decimal("8"), **fields
    )


def costly(request: ChatRequest) -> Reply:
    """Every call takes 100,000 tokens in and 1,000 out."""
    reply = default_reply(request)
    return Reply(content=reply.content, prompt_tokens=100_000, completion_tokens=1_000)


def test_a_run_costs_its_tokens_at_the_prices_it_started_with(cast) -> None:
    numbered_records(cast.project, 3)
    with FakeLLM(costly) as llm:
        connection = priced(llm.base_url)
        judge = make_judge(cast.project, "", connection=connection)
        run = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)
        ModelConnection.objects.filter(pk=connection.pk).update(price_in_per_million=100)

        judge_run_execute(run_id=run.pk)

    run.refresh_from_db()
    # Three records, two calls each: 600,000 tokens in at 2, 6,000 out at 8.
    assert (run.tokens_in, run.tokens_out) == (600_000, 6_000)
    assert run.cost == Decimal("1.248")
    page = cast.client_for("manager").get(
        reverse("judging:run_detail", args=[cast.project.slug, run.pk])
    )
    assert "1.2480" in page.content.decode()
    api = cast.client_for("manager").get(
        reverse("judging_api:run_detail", args=[cast.project.slug, run.pk])
    )
    assert Decimal(api.json()["cost"]) == Decimal("1.248")


def test_a_run_of_a_connection_without_prices_tells_no_cost(cast) -> None:
    numbered_records(cast.project, 2)
    with FakeLLM() as llm:
        run = judge_run_create(
            actor=cast.manager, project=cast.project, judge=make_judge(cast.project, llm.base_url)
        )
        judge_run_execute(run_id=run.pk)

    run.refresh_from_db()
    assert run.tokens_in > 0
    assert run.cost is None and run.estimate["cost"] is None


def test_a_run_stops_cleanly_when_its_cost_reaches_its_budget(cast) -> None:
    numbered_records(cast.project, 60)
    with FakeLLM(costly, latency=0.1) as llm:
        judge = make_judge(
            cast.project, "", connection=priced(llm.base_url), concurrency=2, timeout_seconds=5
        )
        # A record costs 0.416: the budget holds two.
        run = judge_run_create(
            actor=cast.manager, project=cast.project, judge=judge, budget=Decimal("1")
        )

        judge_run_execute(run_id=run.pk)
        run.refresh_from_db()
        stopped = (run.state, run.done_count, run.cost, run.verdicts.count())

        judge_run_resume(actor=cast.manager, run=run)
        judge_run_execute(run_id=run.pk)

    state, done, cost, verdicts = stopped
    assert state == State.BUDGET_REACHED
    assert cost >= Decimal("1")
    # It stops at the first commit past the budget (within a second of calls), long before
    # the end; the counts are those of its verdicts.
    assert done == verdicts < 60
    run.refresh_from_db()
    assert (run.state, run.budget, run.valid_count) == (State.SUCCEEDED, None, 60)


def test_the_estimate_before_a_run_follows_the_size_of_its_prompts(cast) -> None:
    numbered_records(cast.project, 40)
    with FakeLLM() as llm:
        judge = make_judge(cast.project, "", connection=priced(llm.base_url))
        run = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)
        judge_run_execute(run_id=run.pk)
        characters = sum(
            len(message["content"]) for request in llm.requests for message in request.messages
        )

    # Four characters a token of what was sent, give or take what the answers added.
    assert abs(run.estimate["tokens_in"] - characters / 4) <= 0.2 * characters / 4
    expected_cost = (
        run.estimate["tokens_in"] * Decimal(2) + run.estimate["tokens_out"] * Decimal(8)
    ) / 1_000_000
    assert Decimal(run.estimate["cost"]) == round(expected_cost, 4)


def test_the_new_run_page_estimates_the_cost_without_starting_the_run(cast) -> None:
    numbered_records(cast.project, 5)
    judge = make_judge(cast.project, "", connection=priced("http://127.0.0.1:9/v1"))
    plan = judge_run_plan(project=cast.project, judge=judge)

    response = cast.client_for("manager").post(
        reverse("judging:run_new", args=[cast.project.slug]),
        {"judge": judge.pk, "estimate": "1"},
    )

    assert response.status_code == 200
    page = response.content.decode()
    assert f"about {plan.estimate['tokens_in']} tokens in" in page
    assert f"costing about {plan.estimate['cost']}" in page
    assert not JudgeRun.objects.exists()


def test_the_judges_page_charts_the_costs_of_each_judge_by_week(cast) -> None:
    numbered_records(cast.project, 2)
    with FakeLLM(costly) as llm:
        connection = priced(llm.base_url)
        for name in ("Strict judge", "Lenient judge"):
            judge = make_judge(cast.project, "", connection=connection, name=name)
            run = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)
            judge_run_execute(run_id=run.pk)
        unpriced = make_judge(cast.project, llm.base_url, name="Unpriced judge")
        judge_run_execute(
            run_id=judge_run_create(actor=cast.manager, project=cast.project, judge=unpriced).pk
        )

    page = cast.client_for("manager").get(reverse("judging:judge_list", args=[cast.project.slug]))

    text = page.content.decode()
    assert "Cost of each judge&#x27;s runs, by week" in text
    # Each judge's two records cost 0.832; the project's week, both: 1.66.
    assert text.count(">0.83<") >= 2
    assert ">1.66<" in text
    assert "Unpriced judge," not in text


def test_a_project_without_priced_runs_says_so_on_the_judges_page(cast) -> None:
    page = cast.client_for("manager").get(reverse("judging:judge_list", args=[cast.project.slug]))

    assert "No priced runs in the last twelve weeks." in page.content.decode()


def test_the_api_takes_a_budget_and_tells_the_estimate(cast) -> None:
    numbered_records(cast.project, 3)
    judge = make_judge(cast.project, "", connection=priced("http://127.0.0.1:9/v1"))

    response = cast.client_for("manager").post(
        reverse("judging_api:run_list", args=[cast.project.slug]),
        json.dumps({"judge": judge.pk, "budget": "2.5"}),
        content_type="application/json",
    )

    assert response.status_code == 202, response.content
    body = response.json()
    assert Decimal(body["budget"]) == Decimal("2.5")
    assert body["estimate"]["tokens_in"] > 0 and Decimal(body["estimate"]["cost"]) > 0
