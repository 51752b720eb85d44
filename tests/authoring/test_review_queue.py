"""The review queue: submitted tasks of others, oldest first, each held by one reviewer at a
time; K approvals from distinct reviewers approve a task."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from authoring.models import Review, Task
from authoring.selectors import review_queue
from authoring.services.reviews import review_take, review_take_next
from authoring.services.tasks import task_submit, task_update
from curation.errors import Conflict
from curation.models import Role
from curation.services.projects import membership_grant
from tests.authoring.task_helpers import decide, make_task, task_content
from tests.conftest import Cast
from tests.factories import UserFactory

State = Task.State


@pytest.fixture
def second_reviewer(cast: Cast):
    second = UserFactory(username="second")
    membership_grant(actor=cast.manager, project=cast.project, user=second, role=Role.REVIEWER)
    return second


def submitted_at(task: Task, minutes_ago: int) -> None:
    Task.objects.filter(pk=task.pk).update(
        submitted_at=timezone.now() - timedelta(minutes=minutes_ago)
    )


def test_the_queue_holds_submitted_tasks_of_others_oldest_first(cast: Cast) -> None:
    newer = make_task(cast.project, cast.author, State.SUBMITTED)
    older = make_task(cast.project, cast.author, State.SUBMITTED)
    submitted_at(newer, 5)
    submitted_at(older, 50)
    make_task(cast.project, cast.author)
    managers = make_task(cast.project, cast.manager, State.SUBMITTED)

    assert list(review_queue(cast.project, cast.reviewer)) == [older, newer, managers]
    assert list(review_queue(cast.project, cast.manager)) == [older, newer]


def test_taking_the_next_task_holds_it_for_the_project_s_lease_time(cast: Cast) -> None:
    cast.project.review_lease_minutes = 20
    cast.project.save()
    task = make_task(cast.project, cast.author, State.SUBMITTED)

    taken = review_take_next(actor=cast.reviewer, project=cast.project)

    assert taken.pk == task.pk
    task.refresh_from_db()
    assert (task.state, task.reviewer) == (State.IN_REVIEW, cast.reviewer)
    left = task.review_expires_at - timezone.now()
    assert timedelta(minutes=19) < left <= timedelta(minutes=20)
    assert list(review_queue(cast.project, cast.manager)) == []


def test_taking_the_next_task_again_gives_back_the_one_held(cast: Cast) -> None:
    first = make_task(cast.project, cast.author, State.SUBMITTED)
    make_task(cast.project, cast.author, State.SUBMITTED)
    submitted_at(first, 10)

    assert review_take_next(actor=cast.reviewer, project=cast.project).pk == first.pk
    assert review_take_next(actor=cast.reviewer, project=cast.project).pk == first.pk
    assert Task.objects.filter(state=State.IN_REVIEW).count() == 1


def test_nothing_to_take_is_none(cast: Cast) -> None:
    make_task(cast.project, cast.author)

    assert review_take_next(actor=cast.reviewer, project=cast.project) is None


def test_an_expired_hold_returns_the_task_to_the_queue(cast: Cast, second_reviewer) -> None:
    task = make_task(cast.project, cast.author, State.IN_REVIEW, reviewer=cast.reviewer)
    assert list(review_queue(cast.project, second_reviewer)) == []
    Task.objects.filter(pk=task.pk).update(review_expires_at=timezone.now() - timedelta(seconds=1))

    assert list(review_queue(cast.project, second_reviewer)) == [task]
    taken = review_take_next(actor=second_reviewer, project=cast.project)

    assert taken.reviewer == second_reviewer


def test_a_reviewer_whose_hold_ran_out_may_not_decide(cast: Cast) -> None:
    task = make_task(cast.project, cast.author, State.IN_REVIEW, reviewer=cast.reviewer)
    Task.objects.filter(pk=task.pk).update(review_expires_at=timezone.now() - timedelta(seconds=1))

    with pytest.raises(Conflict) as refused:
        decide(task, cast.reviewer, Review.Decision.APPROVE)

    assert refused.value.message.startswith("Your hold on this task ran out at ")
    assert not Review.objects.exists()


def test_a_task_held_by_one_reviewer_cannot_be_taken_by_another(
    cast: Cast, second_reviewer
) -> None:
    task = make_task(cast.project, cast.author, State.IN_REVIEW, reviewer=cast.reviewer)

    with pytest.raises(Conflict) as refused:
        review_take(actor=second_reviewer, task=task, expected_version=task.version)

    assert refused.value.message.startswith("This task is being reviewed by reviewer until ")


def test_with_k_2_one_approval_sends_the_task_back_to_the_queue(
    cast: Cast, second_reviewer
) -> None:
    cast.project.required_approvals = 2
    cast.project.save()
    task = make_task(cast.project, cast.author, State.IN_REVIEW, reviewer=cast.reviewer)

    decide(task, cast.reviewer, Review.Decision.APPROVE)
    task.refresh_from_db()
    assert (task.state, task.reviewer) == (State.SUBMITTED, None)
    assert task not in review_queue(cast.project, cast.reviewer), "not twice by one reviewer"

    taken = review_take_next(actor=second_reviewer, project=cast.project)
    decide(taken, second_reviewer, Review.Decision.APPROVE)
    task.refresh_from_db()

    assert task.state == State.APPROVED
    assert task.decided_at is not None
    assert sorted(task.reviews.values_list("reviewer__username", flat=True)) == [
        "reviewer",
        "second",
    ]


def test_with_k_2_one_reviewer_cannot_approve_the_same_revision_twice(cast: Cast) -> None:
    cast.project.required_approvals = 2
    cast.project.save()
    task = make_task(cast.project, cast.author, State.IN_REVIEW, reviewer=cast.reviewer)
    decide(task, cast.reviewer, Review.Decision.APPROVE)
    task.refresh_from_db()

    with pytest.raises(Conflict) as refused:
        review_take(actor=cast.reviewer, task=task, expected_version=task.version)

    assert refused.value.message == (
        "You have already reviewed this revision: another reviewer must review it."
    )
    assert review_take_next(actor=cast.reviewer, project=cast.project) is None
    task.refresh_from_db()
    assert task.state == State.SUBMITTED


def test_with_k_2_a_resubmission_needs_two_new_approvals(cast: Cast, second_reviewer) -> None:
    cast.project.required_approvals = 2
    cast.project.save()
    task = make_task(cast.project, cast.author, State.IN_REVIEW, reviewer=cast.reviewer)
    decide(task, cast.reviewer, Review.Decision.APPROVE)
    review_take_next(actor=second_reviewer, project=cast.project)
    decide(task, second_reviewer, Review.Decision.REQUEST_CHANGES)
    task.refresh_from_db()
    content = task_content(cast.project, prompt="A clearer prompt.")
    task_update(actor=cast.author, task=task, expected_version=task.version, content=content)
    task_submit(actor=cast.author, task=task, expected_version=task.version)

    # The first reviewer approved revision 1, not revision 2: they may review again.
    assert review_take_next(actor=cast.reviewer, project=cast.project).pk == task.pk
    decide(task, cast.reviewer, Review.Decision.APPROVE)
    task.refresh_from_db()

    assert (task.round, task.state) == (2, State.SUBMITTED)


def test_the_queue_page_lists_what_waits_and_what_i_hold(cast: Cast, second_reviewer) -> None:
    waiting = make_task(cast.project, cast.author, State.SUBMITTED, prompt="Waiting <b>here</b>")
    held = make_task(cast.project, cast.author, State.IN_REVIEW, reviewer=cast.reviewer)

    page = cast.client_for("reviewer").get(reverse("authoring:review_queue", args=["agent-safety"]))

    body = page.content.decode()
    assert page.status_code == 200
    assert reverse("authoring:task_review", args=["agent-safety", held.pk]) in body
    assert reverse("authoring:task_take", args=["agent-safety", waiting.pk]) in body
    assert "Waiting &lt;b&gt;here&lt;/b&gt;" in body
    # Each row's button says, to a screen reader, which task it takes.
    assert (
        f'Take<span class="visually-hidden"> Finance and Insurance - Personal Financial Advisors: '
        f"{waiting.external_id}</span></button>" in body
    )


def test_the_take_button_leads_to_the_review_page(cast: Cast) -> None:
    task = make_task(cast.project, cast.author, State.SUBMITTED)
    client = cast.client_for("reviewer")

    response = client.post(reverse("authoring:review_next", args=["agent-safety"]))

    assert response.status_code == 302
    assert response["Location"] == reverse("authoring:task_review", args=["agent-safety", task.pk])
    again = client.post(reverse("authoring:review_next", args=["agent-safety"]))
    assert again["Location"] == response["Location"]


def test_an_author_opening_the_review_page_of_their_own_task_is_refused(cast: Cast) -> None:
    membership_grant(actor=cast.manager, project=cast.project, user=cast.author, role=Role.REVIEWER)
    task = make_task(cast.project, cast.author, State.SUBMITTED)

    response = cast.client_for("author").get(
        reverse("authoring:task_review", args=["agent-safety", task.pk])
    )

    assert response.status_code == 403
    assert review_queue(cast.project, cast.author).count() == 0


def test_the_navigation_counts_what_waits_for_each_person(cast: Cast) -> None:
    make_task(cast.project, cast.author)
    make_task(cast.project, cast.author, State.CHANGES_REQUESTED, reviewer=cast.reviewer)
    make_task(cast.project, cast.author, State.SUBMITTED)
    make_task(cast.project, cast.author, State.SUBMITTED)
    url = reverse("curation:project", args=["agent-safety"])

    author_page = cast.client_for("author").get(url).content.decode()
    reviewer_page = cast.client_for("reviewer").get(url).content.decode()

    assert 'title="Your drafts and tasks sent back to you">2</span>' in author_page
    assert "Review queue" not in author_page
    assert 'title="Tasks waiting for your review">2</span>' in reviewer_page
