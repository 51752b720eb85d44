"""The run pages: start a run, watch its progress (polled until it ends), read the verdicts,
cancel and resume; reviewers read, only managers act."""

from __future__ import annotations

from django.urls import reverse

from judging.models import JudgeRun
from judging.services.run_engine import judge_run_execute
from judging.services.runs import judge_run_create
from tests.fake_llm import FakeLLM, answer
from tests.judging.judge_runs import make_judge, numbered_records

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def test_a_manager_starts_a_run_over_some_categories(cast, django_capture_on_commit_callbacks):
    numbered_records(cast.project, 3, category="Finance")
    numbered_records(cast.project, 2, start=10)
    judge = make_judge(cast.project, "http://127.0.0.1:9/v1")
    finance = cast.project.categories.get(name="Finance")

    with django_capture_on_commit_callbacks() as callbacks:
        response = cast.client_for("manager").post(
            reverse("judging:run_new", args=[cast.project.slug]),
            {"judge": judge.pk, "categories": [finance.pk], "name": "Finance only"},
        )

    run = JudgeRun.objects.get()
    assert response["Location"] == reverse("judging:run_detail", args=[cast.project.slug, run.pk])
    assert (run.name, run.total, run.selection["categories"]) == ("Finance only", 3, ["Finance"])
    # The worker gets the run once it is committed.
    assert len(callbacks) == 1


def test_the_progress_is_polled_until_the_run_ends(cast) -> None:
    numbered_records(cast.project, 4)
    judge = make_judge(cast.project, "http://127.0.0.1:9/v1")
    run = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)
    url = reverse("judging:run_detail", args=[cast.project.slug, run.pk])
    client = cast.client_for("reviewer")

    pending = client.get(url, HTTP_HX_REQUEST="true")
    JudgeRun.objects.filter(pk=run.pk).update(state="running", valid_count=2, rate=1.0)
    running = client.get(url, HTTP_HX_REQUEST="true")
    JudgeRun.objects.filter(pk=run.pk).update(state="succeeded", valid_count=4, rate=None)
    finished = client.get(url, HTTP_HX_REQUEST="true")

    assert pending.status_code == 200 and 'hx-trigger="every 1s"' in pending.content.decode()
    assert "2 of 4 records judged (50%)" in running.content.decode()
    assert "About 2 s left" in running.content.decode()
    assert finished.status_code == 286
    assert 'hx-trigger="every 1s"' not in finished.content.decode()
    assert "4 of 4 records judged (100%)" in finished.content.decode()


def test_verdicts_are_listed_escaped_and_filtered(cast) -> None:
    numbered_records(cast.project, 3)
    replies = iter(["Looks fine.", "safe", HOSTILE, "maybe", "Risky.", "unsafe"])
    with FakeLLM(lambda request: answer(next(replies))) as llm:
        judge = make_judge(cast.project, llm.base_url, concurrency=1)
        run = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)
        judge_run_execute(run_id=run.pk)
    url = reverse("judging:run_detail", args=[cast.project.slug, run.pk])
    client = cast.client_for("reviewer")

    page = client.get(url).content.decode()
    invalid_only = client.get(url, {"parse_status": "invalid"}).content.decode()

    assert HOSTILE not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert page.count('class="badge parse-') == 3
    assert invalid_only.count('class="badge parse-') == 1
    # Reviewers read runs; only managers may cancel or resume them.
    assert "Cancel the run" not in page and "Resume" not in page


def test_a_manager_cancels_then_resumes_a_run(cast, django_capture_on_commit_callbacks) -> None:
    numbered_records(cast.project, 2)
    judge = make_judge(cast.project, "http://127.0.0.1:9/v1")
    run = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)
    client = cast.client_for("manager")
    detail = reverse("judging:run_detail", args=[cast.project.slug, run.pk])
    assert "Cancel the run" in client.get(detail).content.decode()

    client.post(reverse("judging:run_cancel", args=[cast.project.slug, run.pk]))
    run.refresh_from_db()
    assert run.state == JudgeRun.State.CANCELLED
    assert "Resume" in client.get(detail).content.decode()

    with django_capture_on_commit_callbacks() as callbacks:
        client.post(reverse("judging:run_resume", args=[cast.project.slug, run.pk]))
    run.refresh_from_db()
    assert run.state == JudgeRun.State.PENDING
    assert len(callbacks) == 1

    refused = client.post(reverse("judging:run_cancel", args=[cast.project.slug, run.pk]))
    assert refused.status_code == 302
    run.refresh_from_db()
    assert run.state == JudgeRun.State.CANCELLED


def test_the_run_list_shows_each_runs_state_and_counts(cast) -> None:
    numbered_records(cast.project, 2)
    judge = make_judge(cast.project, "http://127.0.0.1:9/v1")
    judge_run_create(actor=cast.manager, project=cast.project, judge=judge, name="First pass")

    page = cast.client_for("reviewer").get(reverse("judging:run_list", args=[cast.project.slug]))

    content = page.content.decode()
    assert "First pass" in content and "Waiting for a worker" in content and "0 / 2" in content
    assert "New run" not in content
