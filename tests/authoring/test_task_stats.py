"""Workflow statistics for managers: tasks per state, rounds to approval, time in review and
acceptance per author, as charts with their numbers."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse

from authoring.models import Review, Task, TaskRevision
from authoring.selectors import workflow_stats
from authoring.services.reviews import review_take
from authoring.services.tasks import task_submit, task_update
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


def backdate_submission(task: Task, hours: float) -> None:
    """Make the task's latest revision submitted `hours` before its reviews."""
    revision = task.revisions.get(number=task.round)
    decided = revision.reviews.order_by("created_at").first().created_at
    TaskRevision.objects.filter(pk=revision.pk).update(created_at=decided - timedelta(hours=hours))


def test_the_statistics_of_a_project(cast: Cast) -> None:
    first_time = make_task(cast.project, cast.author, State.APPROVED, reviewer=cast.reviewer)
    backdate_submission(first_time, 2)
    rejected = make_task(cast.project, cast.author, State.REJECTED, reviewer=cast.reviewer)
    backdate_submission(rejected, 4)
    second_time = make_task(
        cast.project, cast.manager, State.CHANGES_REQUESTED, reviewer=cast.reviewer
    )
    backdate_submission(second_time, 10)
    content = task_content(cast.project, prompt="Better.")
    task_update(
        actor=cast.manager, task=second_time, expected_version=second_time.version, content=content
    )
    task_submit(actor=cast.manager, task=second_time, expected_version=second_time.version)
    review_take(actor=cast.reviewer, task=second_time, expected_version=second_time.version)
    decide(second_time, cast.reviewer, Review.Decision.APPROVE)
    backdate_submission(second_time, 1)
    make_task(cast.project, cast.author)

    stats = workflow_stats(cast.project)

    assert dict(stats.per_state) == {
        "Draft": 1,
        "Submitted": 0,
        "In review": 0,
        "Changes requested": 0,
        "Approved": 2,
        "Rejected": 1,
        "Withdrawn": 0,
    }
    assert stats.rounds_to_approval == [("1", 1), ("2", 1)]
    # Decisions after 2, 4, 10 and 1 hours.
    assert round(stats.median_hours, 3) == 3.0
    assert [(name, round(hours, 3)) for name, hours in stats.median_hours_by_decision] == [
        ("Approve", 1.5),
        ("Request changes", 10.0),
        ("Reject", 4.0),
    ]
    assert stats.outcomes_by_author == [("author", 1, 1), ("manager", 1, 0)]


def test_tasks_approved_in_the_same_round_are_counted_each(cast: Cast, second_reviewer) -> None:
    for _ in range(3):
        make_task(cast.project, cast.author, State.APPROVED, reviewer=cast.reviewer)
    # Two reviews of one task, K = 2: still one task approved in its first round.
    cast.project.required_approvals = 2
    cast.project.save()
    twice = make_task(cast.project, cast.author, State.SUBMITTED)
    for reviewer in (cast.reviewer, second_reviewer):
        review_take(actor=reviewer, task=twice, expected_version=twice.version)
        decide(twice, reviewer, Review.Decision.APPROVE)

    assert workflow_stats(cast.project).rounds_to_approval == [("1", 4)]


def test_tasks_imported_approved_do_not_count_as_rounds_of_review(cast: Cast) -> None:
    task = make_task(cast.project, cast.author)
    Task.objects.filter(pk=task.pk).update(state=State.APPROVED, round=1)

    assert workflow_stats(cast.project).rounds_to_approval == []


def test_the_page_draws_the_charts_for_managers(cast: Cast) -> None:
    make_task(cast.project, cast.author, State.APPROVED, reviewer=cast.reviewer)

    page = cast.client_for("manager").get(reverse("authoring:task_stats", args=["agent-safety"]))

    body = page.content.decode()
    assert page.status_code == 200
    for title in (
        "Tasks per state",
        "Approved tasks by rounds of review",
        "Median hours from submission to decision",
        "Acceptance rate per author",
    ):
        assert title in body
    assert '<th scope="row">author</th><td>100%</td>' in body


def test_an_empty_project_has_no_numbers_yet(cast: Cast) -> None:
    page = cast.client_for("manager").get(reverse("authoring:task_stats", args=["agent-safety"]))

    assert "no decisions yet" in page.content.decode()
    assert page.content.decode().count("No data yet.") == 3
