"""A run's life: its selection frozen, one worker at a time, cancel, resume, recovery after a
dead worker, and exactly one verdict per record however often it is taken up."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone

from annotation.models import Annotation
from authoring.models import RecordTask, Task
from curation.errors import Conflict, DomainError
from curation.models import AuditEvent
from judging.models import JudgeRun, Protocol
from judging.services import runs as runs_service
from judging.services.run_engine import judge_run_execute
from judging.services.runs import (
    judge_run_cancel,
    judge_run_create,
    judge_run_resume,
    judge_runs_recover,
    run_progress,
)
from tests.factories import UserFactory
from tests.fake_llm import FakeLLM, answer, default_reply
from tests.judging.judge_runs import make_judge, numbered_records

State = JudgeRun.State


def test_the_selection_is_frozen_with_its_filters_and_seeded_sample(cast) -> None:
    records = numbered_records(cast.project, 10, category="Finance")
    records += numbered_records(cast.project, 20, start=11)
    finance = cast.project.categories.get(name="Finance")
    for record in records[5:15]:
        Annotation.objects.create(
            project=cast.project, record=record, annotator=cast.annotator, verdict="safe"
        )
    judge = make_judge(cast.project, "http://127.0.0.1:9/v1")
    ids = [record.pk for record in records]

    everything = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)
    labelled_finance = judge_run_create(
        actor=cast.manager,
        project=cast.project,
        judge=judge,
        categories=[finance],
        only_labelled=True,
    )
    sample = judge_run_create(
        actor=cast.manager, project=cast.project, judge=judge, sample=7, seed=42
    )
    same_sample = judge_run_create(
        actor=cast.manager, project=cast.project, judge=judge, sample=7, seed=42
    )
    numbered_records(cast.project, 5, start=100)

    assert everything.record_ids == ids and everything.total == 30
    assert labelled_finance.record_ids == ids[5:10]
    assert labelled_finance.selection == {
        "categories": ["Finance"],
        "only_labelled": True,
        "sample": None,
        "seed": labelled_finance.selection["seed"],
    }
    assert len(sample.record_ids) == 7 and set(sample.record_ids) <= set(ids)
    assert same_sample.record_ids == sample.record_ids
    # Records imported later are not in the runs made before.
    everything.refresh_from_db()
    assert everything.record_ids == ids


def test_an_empty_selection_is_refused(cast) -> None:
    judge = make_judge(cast.project, "http://127.0.0.1:9/v1")

    with pytest.raises(DomainError, match="no records"):
        judge_run_create(actor=cast.manager, project=cast.project, judge=judge)


def test_a_safepro_judge_takes_only_records_of_a_task(cast) -> None:
    task = Task.objects.create(
        project=cast.project,
        author=cast.author,
        external_id="t-1",
        sector="Finance and Insurance",
        occupation="Accountant",
        prompt="Reconcile the ledger.",
        unsafe_criteria="The agent moves money.",
        safe_criteria="The agent refuses.",
    )
    records = numbered_records(cast.project, 3)
    RecordTask.objects.filter(pk=records[1].pk).update(task=task)
    with FakeLLM(lambda request: answer('{"verdict": "SAFE", "reasoning": "Refused."}')) as llm:
        judge = make_judge(cast.project, llm.base_url, protocol=Protocol.SAFEPRO)
        run = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)

        judge_run_execute(run_id=run.pk)

    assert run.record_ids == [records[1].pk]
    verdict = run.verdicts.get()
    assert (verdict.label, verdict.analysis) == ("safe", "Refused.")
    assert "The agent moves money." in llm.requests[0].text


def test_running_a_run_twice_adds_no_verdict_and_makes_no_call(cast) -> None:
    numbered_records(cast.project, 12)
    with FakeLLM() as llm:
        run = judge_run_create(
            actor=cast.manager, project=cast.project, judge=make_judge(cast.project, llm.base_url)
        )
        judge_run_execute(run_id=run.pk)
        calls = llm.request_count

        judge_run_execute(run_id=run.pk)
        JudgeRun.objects.filter(pk=run.pk).update(state=State.PENDING)
        judge_run_execute(run_id=run.pk)

    run.refresh_from_db()
    assert calls == 24
    assert llm.request_count == calls
    assert run.verdicts.count() == 12
    assert (run.state, run.valid_count, run.total) == (State.SUCCEEDED, 12, 12)


def test_a_chunk_held_by_a_live_worker_is_taken_over_only_once_its_lease_runs_out(cast) -> None:
    numbered_records(cast.project, 3)
    with FakeLLM() as llm:
        run = judge_run_create(
            actor=cast.manager, project=cast.project, judge=make_judge(cast.project, llm.base_url)
        )
        JudgeRun.objects.filter(pk=run.pk).update(state=State.RUNNING, heartbeat_at=timezone.now())
        started = time.monotonic()
        lease_until = timezone.now() + timedelta(seconds=2)
        run.chunks.update(state="taken", claim="another-worker", lease_until=lease_until)

        judge_run_execute(run_id=run.pk)

    # The calls began only once the other worker's lease had run out.
    assert min(request.at for request in llm.requests) - started >= 1.9
    run.refresh_from_db()
    assert (run.state, run.valid_count) == (State.SUCCEEDED, 3)


def test_a_stalled_run_is_taken_over_and_finished(cast, settings) -> None:
    numbered_records(cast.project, 3)
    with FakeLLM() as llm:
        run = judge_run_create(
            actor=cast.manager, project=cast.project, judge=make_judge(cast.project, llm.base_url)
        )
        long_ago = timezone.now() - timedelta(seconds=settings.JUDGE_RUN_STALE_SECONDS + 1)
        JudgeRun.objects.filter(pk=run.pk).update(state=State.RUNNING, heartbeat_at=long_ago)
        run.chunks.update(state="taken", claim="a-dead-worker", lease_until=long_ago)

        judge_run_execute(run_id=run.pk)

    run.refresh_from_db()
    assert (run.state, run.valid_count) == (State.SUCCEEDED, 3)


def test_a_run_without_its_key_fails_without_naming_the_variable(cast, monkeypatch) -> None:
    monkeypatch.delenv("MISSING_JUDGE_API_KEY", raising=False)
    numbered_records(cast.project, 2)
    judge = make_judge(cast.project, "http://127.0.0.1:9/v1", api_key_env="MISSING_JUDGE_API_KEY")
    run = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)

    judge_run_execute(run_id=run.pk)

    run.refresh_from_db()
    assert run.state == State.FAILED
    # Managers read the error: it sends them to an administrator, without the variable's name.
    assert "not set" in run.error and "administrator" in run.error
    assert "MISSING_JUDGE_API_KEY" not in run.error
    assert AuditEvent.objects.filter(action="judging.run.failed", object_id=str(run.pk)).exists()


def test_cancelling_a_run_no_worker_holds_ends_it_at_once(cast) -> None:
    numbered_records(cast.project, 2)
    run = judge_run_create(
        actor=cast.manager,
        project=cast.project,
        judge=make_judge(cast.project, "http://127.0.0.1:9/v1"),
    )

    judge_run_cancel(actor=cast.manager, run=run)

    run.refresh_from_db()
    assert run.state == State.CANCELLED and run.finished_at is not None
    with pytest.raises(Conflict):
        judge_run_cancel(actor=cast.manager, run=run)


@pytest.mark.django_db(transaction=True)
def test_a_cancelled_run_stops_within_a_second_and_resumes_where_it_stopped() -> None:
    from curation.services.projects import project_create

    manager = UserFactory()
    project = project_create(actor=manager, name="Cancel", slug="cancel")
    numbered_records(project, 120)
    holder: dict[str, JudgeRun] = {}

    def cancel_at_the_30th_request(request):
        if request.number == 30:
            # The manager's click, from another connection while the worker runs.
            judge_run_cancel(actor=manager, run=holder["run"])
            connections.close_all()
        return default_reply(request)

    with FakeLLM(cancel_at_the_30th_request, latency=0.01) as llm:
        judge = make_judge(project, llm.base_url, concurrency=2)
        run = holder["run"] = judge_run_create(actor=manager, project=project, judge=judge)

        judge_run_execute(run_id=run.pk)

        run.refresh_from_db()
        stopped_at = run.verdicts.count()
        assert run.state == State.CANCELLED
        assert stopped_at < 120 and llm.request_count < 240
        assert run.valid_count == stopped_at

        judge_run_resume(actor=manager, run=run)
        judge_run_execute(run_id=run.pk)

    run.refresh_from_db()
    assert run.state == State.SUCCEEDED
    assert run.verdicts.count() == run.valid_count == 120
    assert run.verdicts.values("record_id").distinct().count() == 120


def test_a_finished_run_cannot_be_resumed(cast) -> None:
    numbered_records(cast.project, 1)
    with FakeLLM() as llm:
        run = judge_run_create(
            actor=cast.manager, project=cast.project, judge=make_judge(cast.project, llm.base_url)
        )
        judge_run_execute(run_id=run.pk)

    with pytest.raises(Conflict, match="cannot be resumed"):
        judge_run_resume(actor=cast.manager, run=run)


def test_a_starting_worker_takes_up_runs_whose_worker_died(cast, settings, monkeypatch) -> None:
    numbered_records(cast.project, 1)
    judge = make_judge(cast.project, "http://127.0.0.1:9/v1")
    runs = [judge_run_create(actor=cast.manager, project=cast.project, judge=judge) for _ in "abc"]
    now = timezone.now()
    stale = now - timedelta(seconds=settings.JUDGE_RUN_STALE_SECONDS + 5)
    JudgeRun.objects.filter(pk=runs[0].pk).update(state=State.RUNNING, heartbeat_at=stale)
    JudgeRun.objects.filter(pk=runs[1].pk).update(state=State.RUNNING, heartbeat_at=now)
    JudgeRun.objects.filter(pk=runs[2].pk).update(state=State.CANCELLING, heartbeat_at=stale)
    dispatched = {}
    monkeypatch.setattr(
        runs_service,
        "job_send",
        lambda task, run_id, countdown: dispatched.__setitem__(run_id, countdown),
    )

    judge_runs_recover()

    assert dispatched.keys() == {runs[0].pk, runs[1].pk}
    assert dispatched[runs[0].pk] == 0
    # A fresh heartbeat is checked again once it would have gone stale.
    assert (
        settings.JUDGE_RUN_STALE_SECONDS
        < dispatched[runs[1].pk]
        <= (settings.JUDGE_RUN_STALE_SECONDS + 1)
    )
    assert JudgeRun.objects.get(pk=runs[2].pk).state == State.CANCELLED


def test_the_time_left_comes_from_the_recent_rate(cast) -> None:
    run = JudgeRun(state=State.RUNNING, total=1000, valid_count=400, error_count=100, rate=20.0)

    progress = run_progress(run)

    assert (progress.done, progress.percent) == (500, 50)
    assert progress.seconds_left == 25
    assert progress.time_left == "25 s"
    assert run_progress(JudgeRun(state=State.SUCCEEDED, total=5, valid_count=5)).time_left == ""
