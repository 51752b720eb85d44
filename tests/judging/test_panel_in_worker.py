"""A panel is combined by a worker, not in the request: the page and the API answer at once and
follow the panel's progress to its end; the job is safe to run twice, from two workers at once,
and after a worker that died mid-way; a cancelled panel stops."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from curation.models import AuditEvent
from judging.models import JudgeRun, Verdict
from judging.services import panels
from judging.services.panels import panel_compute, panel_create
from judging.services.runs import judge_run_cancel, judge_runs_recover
from judging.signals import verdicts_saved
from tests.judging.test_connection_test_in_worker import poll
from tests.judging.test_panels import api_for, labels_of, three_runs

State = JudgeRun.State


def counts(run: JudgeRun) -> tuple[int, int, int, int]:
    run.refresh_from_db()
    return run.total, run.valid_count, run.invalid_count, run.error_count


@pytest.mark.django_db(transaction=True)
def test_a_worker_combines_the_panel_while_its_page_polls_its_progress(cast, celery_worker) -> None:
    runs = three_runs(cast)
    client = cast.client_for("manager")

    asked = client.post(
        reverse("judging:panel_new", args=[cast.project.slug]),
        {"members": [r.pk for r in runs], "rule": "majority"},
    )
    done = poll(client, asked["Location"])

    panel = JudgeRun.objects.get(source=JudgeRun.Source.PANEL)
    assert "5 of 5 records combined" in done.content.decode()
    assert panel.state == State.SUCCEEDED and panel.started_at and panel.finished_at
    assert labels_of(panel) == {
        "1": "unsafe",
        "2": "unsafe",
        "3": "safe",
        "4": "invalid",
        "5": "safe",
    }
    assert counts(panel) == (5, 4, 1, 0)
    assert (
        AuditEvent.objects.filter(action="judging.panel.computed", object_id=panel.pk).count() == 1
    )


@pytest.mark.django_db(transaction=True)
def test_the_api_answers_202_and_the_panel_can_be_followed_to_its_end(cast, celery_worker) -> None:
    runs = three_runs(cast)
    api = api_for(cast.manager)

    accepted = api.post(
        reverse("judging_api:panel_list", args=[cast.project.slug]),
        {"runs": [r.pk for r in runs], "rule": "any_unsafe"},
        format="json",
    )
    deadline = time.monotonic() + 30
    while (followed := api.get(accepted["Location"]).json())["state"] in ("pending", "running"):
        assert time.monotonic() < deadline, "the panel was never combined"
        time.sleep(0.2)

    assert accepted.status_code == 202
    assert followed["outcome"] == "finished"
    assert (followed["total"], followed["done"], followed["valid_count"]) == (5, 5, 5)


@pytest.mark.django_db(transaction=True)
def test_two_workers_combining_one_panel_at_once_write_each_verdict_once(cast) -> None:
    runs = three_runs(cast)
    panel = panel_create(actor=cast.manager, project=cast.project, members=runs, rule="majority")
    start = threading.Barrier(2)
    outcomes: list[bool] = []

    def worker() -> None:
        start.wait()
        try:
            outcomes.append(panel_compute(run_id=panel.pk))
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    again = panel_compute(run_id=panel.pk)

    assert len(outcomes) == 2 and again is True
    assert Verdict.objects.filter(run=panel).count() == 5
    assert counts(panel) == (5, 4, 1, 0)
    assert (
        AuditEvent.objects.filter(action="judging.panel.computed", object_id=panel.pk).count() == 1
    )


@pytest.mark.django_db(transaction=True)
def test_a_panel_whose_worker_died_mid_way_is_taken_over_once_its_heartbeat_is_stale(
    cast, monkeypatch, settings
) -> None:
    runs = three_runs(cast)
    panel = panel_create(actor=cast.manager, project=cast.project, members=runs, rule="majority")
    # Two records a batch, and the worker "dies" when it comes to check the second batch.
    monkeypatch.setattr(panels, "BATCH", 2)
    checked = []

    def dies_on_the_second_batch(sender: object, **kwargs: object) -> None:
        checked.append(kwargs["record_ids"])
        if len(checked) == 2:
            raise SystemExit("killed")

    verdicts_saved.connect(dies_on_the_second_batch)
    try:
        with pytest.raises(SystemExit):
            panel_compute(run_id=panel.pk)
    finally:
        verdicts_saved.disconnect(dies_on_the_second_batch)
    left = (counts(panel), panel.state)
    held = panel_compute(run_id=panel.pk)
    stale = timezone.now() - timedelta(seconds=settings.JUDGE_RUN_STALE_SECONDS + 1)
    JudgeRun.objects.filter(pk=panel.pk).update(heartbeat_at=stale)
    taken_over = panel_compute(run_id=panel.pk)

    # The first batch was committed; the second died with its worker.
    assert left == ((5, 2, 0, 0), State.RUNNING)
    assert held is False, "a panel whose worker beats was taken from it"
    assert taken_over is True
    assert Verdict.objects.filter(run=panel).count() == 5
    assert counts(panel) == (5, 4, 1, 0) and panel.state == State.SUCCEEDED


@pytest.mark.django_db(transaction=True)
def test_a_worker_that_starts_takes_up_a_panel_whose_worker_died(
    cast, settings, celery_worker
) -> None:
    runs = three_runs(cast)
    panel = panel_create(actor=cast.manager, project=cast.project, members=runs, rule="majority")
    # The job sent when the panel was made, taken by the test's worker, is the one that "dies".
    deadline = time.monotonic() + 30
    while not JudgeRun.objects.filter(pk=panel.pk, state=State.SUCCEEDED).exists():
        assert time.monotonic() < deadline, "the panel was never combined"
        time.sleep(0.1)
    panel.verdicts.filter(record__external_id__in=["4", "5"]).delete()
    stale = timezone.now() - timedelta(seconds=settings.JUDGE_RUN_STALE_SECONDS + 1)
    JudgeRun.objects.filter(pk=panel.pk).update(
        state=State.RUNNING, heartbeat_at=stale, valid_count=3, invalid_count=0
    )

    recovered = judge_runs_recover()
    while not JudgeRun.objects.filter(pk=panel.pk, state=State.SUCCEEDED).exists():
        assert time.monotonic() < deadline + 30, "the panel was never taken up"
        time.sleep(0.1)

    assert panel.pk in recovered
    assert Verdict.objects.filter(run=panel).count() == 5
    assert counts(panel) == (5, 4, 1, 0)


@pytest.mark.django_db(transaction=True)
def test_a_panel_cancelled_before_a_worker_takes_it_is_never_combined(cast) -> None:
    runs = three_runs(cast)
    panel = panel_create(actor=cast.manager, project=cast.project, members=runs, rule="majority")

    judge_run_cancel(actor=cast.manager, run=panel)
    panel_compute(run_id=panel.pk)

    panel.refresh_from_db()
    assert panel.state == State.CANCELLED
    assert not panel.verdicts.exists()
