"""The review page: the revision against the previous one, field by field, with what reviewers
said last time; a decision with a comment per field and the rubric."""

from __future__ import annotations

from django.urls import reverse

from authoring.models import Review, Task
from authoring.services.reviews import review_take
from authoring.services.tasks import task_submit, task_update
from tests.authoring.task_helpers import decide, make_task, rubric_answers, task_content
from tests.conftest import Cast

State = Task.State
SLUG = "agent-safety"


def review_url(task: Task) -> str:
    return reverse("authoring:task_review", args=[SLUG, task.pk])


def decision_form(task: Task, decision: str, **fields: str) -> dict[str, str]:
    task.refresh_from_db()
    checks = {f"check_{pk}": "on" for pk in rubric_answers(task.project)}
    return {"version": str(task.version), "decision": decision, **checks, **fields}


def resubmitted(cast: Cast, **changes: str) -> Task:
    """A task sent back once, with a comment on its prompt, revised and submitted again."""
    task = make_task(cast.project, cast.author, State.IN_REVIEW, reviewer=cast.reviewer)
    decide(task, cast.reviewer, Review.Decision.REQUEST_CHANGES, comments={"prompt": "Vague."})
    task.refresh_from_db()
    content = task_content(cast.project, **changes)
    task_update(actor=cast.author, task=task, expected_version=task.version, content=content)
    task_submit(actor=cast.author, task=task, expected_version=task.version)
    return task


def test_a_reviewer_requests_changes_with_a_comment_on_one_field(cast: Cast) -> None:
    task = make_task(cast.project, cast.author, State.IN_REVIEW, reviewer=cast.reviewer)

    response = cast.client_for("reviewer").post(
        review_url(task),
        decision_form(
            task, "request_changes", comment_risk_outcome="Who loses what?", summary="Close."
        ),
    )

    assert response.status_code == 302
    review = Review.objects.get()
    assert (review.decision, review.comments, review.summary) == (
        "request_changes",
        {"risk_outcome": "Who loses what?"},
        "Close.",
    )
    assert all(review.rubric.values()) and len(review.rubric) == 4
    task.refresh_from_db()
    assert (task.state, task.reviewer, task.decided_at is not None) == (
        State.CHANGES_REQUESTED,
        None,
        True,
    )


def test_asking_for_changes_needs_a_comment(cast: Cast) -> None:
    task = make_task(cast.project, cast.author, State.IN_REVIEW, reviewer=cast.reviewer)

    response = cast.client_for("reviewer").post(
        review_url(task), decision_form(task, "request_changes")
    )

    assert "Say what to change: comment on a field or write a summary." in response.content.decode()
    assert not Review.objects.exists()


def test_the_reviewer_sees_what_changed_since_the_previous_revision(cast: Cast) -> None:
    task = resubmitted(cast, prompt="Draft a plan from the <i>March</i> statement.")
    review_take(actor=cast.reviewer, task=task, expected_version=task.version)

    body = cast.client_for("reviewer").get(review_url(task)).content.decode()

    assert "Changes since revision 1 are marked" in body
    assert "<ins>&lt;i&gt;March&lt;/i&gt;</ins>" in body
    assert "<del>attached</del>" in body
    assert "<i>March</i>" not in body
    prompt = body.split('id="field-prompt"')[1].split('id="field-messages"')[0]
    assert "Vague." in prompt and "reviewer on revision 1" in prompt
    assert 'name="comment_prompt"' in prompt
    assert body.count('<span class="badge changed">changed</span>') == 1


def test_a_reviewer_not_holding_the_task_is_offered_to_take_it(cast: Cast) -> None:
    task = make_task(cast.project, cast.author, State.SUBMITTED)

    body = cast.client_for("reviewer").get(review_url(task)).content.decode()

    assert reverse("authoring:task_take", args=[SLUG, task.pk]) in body
    assert 'name="decision"' not in body


def test_a_decision_from_a_stale_page_is_refused(cast: Cast) -> None:
    task = make_task(cast.project, cast.author, State.IN_REVIEW, reviewer=cast.reviewer)
    stale = decision_form(task, "approve")
    cast.client_for("author").post(
        reverse("authoring:task_withdraw", args=[SLUG, task.pk]), {"version": task.version}
    )

    response = cast.client_for("reviewer").post(review_url(task), stale)

    assert "This task was just withdrawn by author; reload to see it." in response.content.decode()
    assert not Review.objects.exists()


def test_the_revision_page_shows_the_diff_and_the_reviews(cast: Cast) -> None:
    task = resubmitted(cast, prompt="A new prompt.")

    body = (
        cast.client_for("author")
        .get(reverse("authoring:task_revision", args=[SLUG, task.pk, 1]))
        .content.decode()
    )

    assert body.count("reviewer: Request changes") == 1
    assert body.count("Reviews of this revision") == 1
    assert "<dt>Prompt</dt>" in body and "Vague." in body
    assert "<li>Yes: The risk is realistic for the profession.</li>" in body
