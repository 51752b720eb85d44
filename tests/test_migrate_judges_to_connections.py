"""A database whose judges named their own address and key variable keeps every judge, run and
verdict through the migrations that move them onto model connections (judging 0005 and 0006),
and the runs' snapshots lose the address and variable that managers read there."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from judging.models import Judge, JudgeRun, ModelConnection, Verdict
from judging.services.judges import endpoint_of

BEFORE = [("judging", "0004_pendingcheck")]
HOSTED = "https://api.openai.com/v1"
LOCAL = "http://127.0.0.1:8001/v1"


def _populate(apps) -> dict[str, int]:
    """Judges of two addresses, one of them with two key variables, and a run whose snapshot
    names an address no judge names any more, written through the models as they were."""
    model = apps.get_model
    project = model("curation", "Project").objects.create(name="Before", slug="before")
    category = model("curation", "Category").objects.create(project=project, name="Finance")
    scenario = model("curation", "Scenario").objects.create(category=category, name="bank")
    record = model("curation", "Record").objects.create(
        project=project,
        external_id="r-1",
        category=category,
        scenario=scenario,
        source_path="Finance/bank.json",
        source_position=0,
        content_hash="0" * 64,
        raw='{"id": "r-1", "profile": "", "contents": []}',
    )
    Judge = model("judging", "Judge")

    def judge(name: str, base_url: str, api_key_env: str, llm: str, concurrency: int = 8):
        return Judge.objects.create(
            project=project,
            name=name,
            protocol="rjudge",
            model=llm,
            base_url=base_url,
            api_key_env=api_key_env,
            concurrency=concurrency,
        )

    gpt = judge("GPT", HOSTED, "OPENAI_API_KEY", "gpt-4o")
    judge("GPT mini", HOSTED, "OPENAI_API_KEY", "gpt-4o-mini", concurrency=32)
    judge("GPT, team key", HOSTED, "TEAM_API_KEY", "gpt-4o")
    judge("Qwen", LOCAL, "", "qwen")
    snapshot = {
        "judge_id": gpt.pk,
        "name": "GPT",
        "protocol": "rjudge",
        "model": "gpt-4-turbo",
        "base_url": "https://old.example.org/v1",
        "api_key_env": "OLD_API_KEY",
        "parameters": {"temperature": 0},
        "concurrency": 4,
        "timeout_seconds": 60,
        "max_retries": 4,
    }
    run = model("judging", "JudgeRun").objects.create(
        project=project,
        judge=gpt,
        name="Before the move",
        judge_snapshot=snapshot,
        state="succeeded",
        total=1,
        valid_count=1,
    )
    model("judging", "Verdict").objects.create(
        run=run, record=record, label="unsafe", parse_status="valid", raw_output="unsafe"
    )
    imported = model("judging", "JudgeRun").objects.create(
        project=project,
        source="imported",
        name="Imported",
        judge_snapshot={"protocol": "safepro"},
        state="succeeded",
    )
    return {"gpt": gpt.pk, "run": run.pk, "imported": imported.pk}


@pytest.mark.django_db(transaction=True)
def test_judges_and_runs_move_onto_one_connection_per_address_and_variable() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    ids = _populate(executor.loader.project_state(BEFORE).apps)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    connections = {(c.base_url, c.api_key_env): c for c in ModelConnection.objects.order_by("name")}
    assert set(connections) == {
        (HOSTED, "OPENAI_API_KEY"),
        (HOSTED, "TEAM_API_KEY"),
        (LOCAL, ""),
        ("https://old.example.org/v1", "OLD_API_KEY"),
    }
    openai = connections[HOSTED, "OPENAI_API_KEY"]
    assert openai.offered_models == ["gpt-4o", "gpt-4o-mini"]
    assert openai.max_concurrency == 32
    # The names say nothing of where they go: managers read them.
    assert all(c.name.startswith("Connection ") for c in connections.values())
    # A local server is reached again only once an administrator allows it.
    assert not any(c.allow_private for c in connections.values())
    judges = {judge.name: judge for judge in Judge.objects.select_related("connection")}
    assert judges["GPT"].connection == judges["GPT mini"].connection == openai
    assert judges["GPT, team key"].connection == connections[HOSTED, "TEAM_API_KEY"]
    assert (judges["Qwen"].connection, judges["Qwen"].model) == (connections[LOCAL, ""], "qwen")
    run = JudgeRun.objects.get(pk=ids["run"])
    old = connections["https://old.example.org/v1", "OLD_API_KEY"]
    assert "base_url" not in run.judge_snapshot and "api_key_env" not in run.judge_snapshot
    assert (run.judge_snapshot["connection_id"], run.judge_snapshot["connection"]) == (
        old.pk,
        old.name,
    )
    assert old.offered_models == ["gpt-4-turbo"]
    # A worker resuming the run calls where it called before, with the same key variable.
    endpoint = endpoint_of(run.judge_snapshot)
    assert (endpoint.base_url, endpoint.api_key_env, endpoint.model) == (
        "https://old.example.org/v1",
        "OLD_API_KEY",
        "gpt-4-turbo",
    )
    assert run.judge_id == ids["gpt"]
    assert Verdict.objects.get(run=run).raw_output == "unsafe"
    assert JudgeRun.objects.get(pk=ids["imported"]).judge_snapshot == {"protocol": "safepro"}
