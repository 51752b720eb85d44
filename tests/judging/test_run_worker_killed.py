"""A real Celery worker killed in the middle of a run (SIGKILL), and another started: the run
completes, with exactly one verdict per record."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from curation.services.projects import project_create
from judging.models import JudgeRun, Verdict
from judging.services.runs import judge_run_create
from tests.factories import UserFactory
from tests.fake_llm import ChatRequest, FakeLLM, Reply, default_reply
from tests.judging.judge_runs import make_judge, numbered_records

RECORDS = 200
KEY_VARIABLE = "STUDIO_WORKER_TEST_API_KEY"
KEY = "sk-worker-test-0a1b2c3d4e5f-never-logged"
TIMEOUT = 120
WORKER_ENV = {
    # A killed worker's run is taken up two seconds after its last heartbeat.
    "JUDGE_RUN_STALE_SECONDS": "2",
    KEY_VARIABLE: KEY,
}


def wait_for(condition: Callable[[], bool], what: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert process.poll() is None, f"The worker stopped while waiting for {what}."
        assert time.monotonic() < deadline, f"Timed out waiting for {what}."
        time.sleep(0.2)


def keyed_reply(request: ChatRequest) -> Reply:
    """Answers only requests that carry the key, as a hosted endpoint would."""
    if request.headers.get("authorization") != f"Bearer {KEY}":
        return Reply(status=401, body=b'{"error": {"message": "Invalid API key"}}')
    return default_reply(request)


@pytest.mark.django_db(transaction=True)
def test_a_run_survives_its_worker_being_killed(start_worker, tmp_path: Path) -> None:
    manager = UserFactory()
    project = project_create(actor=manager, name="Killed", slug="killed")
    numbered_records(project, RECORDS)
    with FakeLLM(keyed_reply, latency=0.05) as llm:
        judge = make_judge(
            project,
            llm.base_url,
            api_key_env=KEY_VARIABLE,
            concurrency=4,
            timeout_seconds=10,
        )
        first = start_worker("first", env=WORKER_ENV)
        run = judge_run_create(actor=manager, project=project, judge=judge)
        verdicts = Verdict.objects.filter(run=run)

        wait_for(lambda: verdicts.count() >= 40, "the first verdicts", first)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=20)
        judged_before = verdicts.count()
        run.refresh_from_db()
        assert run.state == JudgeRun.State.RUNNING
        assert judged_before < RECORDS

        second = start_worker("second", env=WORKER_ENV)
        wait_for(
            lambda: JudgeRun.objects.get(pk=run.pk).state == JudgeRun.State.SUCCEEDED,
            "the run to finish",
            second,
        )

    run.refresh_from_db()
    record_ids = list(verdicts.values_list("record_id", flat=True))
    assert len(record_ids) == len(set(record_ids)) == RECORDS == run.total
    assert set(record_ids) == set(run.record_ids)
    assert run.valid_count == verdicts.filter(parse_status="valid").count() == RECORDS
    assert run.valid_count + run.invalid_count + run.error_count == run.total
    # Every record was asked about, some twice: those in flight when the worker died.
    assert llm.request_count >= 2 * RECORDS
    logs = (tmp_path / "first.log").read_text() + (tmp_path / "second.log").read_text()
    assert "judging.tasks.run_judge" in (tmp_path / "second.log").read_text()
    assert KEY not in logs
