"""People acting on the same task at the same moment, on PostgreSQL: exactly one of them wins,
and the others are told who came first. Each person acts from their own thread, on their own
database connection, released together by a barrier."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import connection

from authoring.models import Review, Task
from authoring.services.reviews import review_decide, review_take, review_take_next
from authoring.services.tasks import task_update, task_withdraw
from curation.errors import Conflict
from curation.models import Role
from curation.services.projects import membership_grant
from tests.authoring.task_helpers import make_task, rubric_answers, task_content
from tests.conftest import Cast
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

State = Task.State


def at_once(*acts: Callable[[], object]) -> list[object]:
    """Run each act in its own thread, all started together; what each returned or raised."""
    barrier = threading.Barrier(len(acts))
    results: list[object] = [None] * len(acts)

    def run(index: int, act: Callable[[], object]) -> None:
        try:
            barrier.wait()
            results[index] = act()
        except Exception as error:  # what each act raised is what the test looks at
            results[index] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, act)) for i, act in enumerate(acts)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


@pytest.fixture
def second_reviewer(cast: Cast):
    second = UserFactory(username="second")
    membership_grant(actor=cast.manager, project=cast.project, user=second, role=Role.REVIEWER)
    return second


def test_two_reviewers_deciding_at_once_leave_exactly_one_decision(
    cast: Cast, second_reviewer
) -> None:
    task = make_task(cast.project, cast.author, State.SUBMITTED)
    seen = task.version

    def review(reviewer, decision: str) -> Callable[[], object]:
        def act() -> Review:
            # Both opened the task at the same version; each takes it and decides at once.
            mine = Task.objects.get(pk=task.pk)
            review_take(actor=reviewer, task=mine, expected_version=seen)
            return review_decide(
                actor=reviewer,
                task=mine,
                expected_version=mine.version,
                decision=decision,
                comments={"prompt": "Unclear."},
                rubric=rubric_answers(cast.project),
            )

        return act

    results = at_once(
        review(cast.reviewer, Review.Decision.APPROVE),
        review(second_reviewer, Review.Decision.REJECT),
    )

    reviews = list(Review.objects.filter(task=task))
    assert len(reviews) == 1
    winner = 0 if isinstance(results[0], Review) else 1
    loser = results[1 - winner]
    assert isinstance(loser, Conflict), loser
    # The loser hears of the winner's take, or already of their decision.
    name = reviews[0].reviewer.get_username()
    assert loser.message.startswith("This task was just ")
    assert loser.message.endswith(f" by {name}; reload to see it.")
    task.refresh_from_db()
    assert task.state == (State.APPROVED if winner == 0 else State.REJECTED)


def test_two_decisions_of_one_reviewer_at_once_leave_exactly_one(cast: Cast) -> None:
    # The same reviewer in two tabs, approving in one and rejecting in the other.
    task = make_task(cast.project, cast.author, State.IN_REVIEW, reviewer=cast.reviewer)

    def decide(decision: str) -> Callable[[], object]:
        seen = Task.objects.get(pk=task.pk)
        return lambda: review_decide(
            actor=cast.reviewer,
            task=seen,
            expected_version=seen.version,
            decision=decision,
            comments={},
            rubric=rubric_answers(cast.project),
        )

    results = at_once(decide(Review.Decision.APPROVE), decide(Review.Decision.REJECT))

    assert sorted(type(result).__name__ for result in results) == ["Conflict", "Review"]
    assert Review.objects.filter(task=task).count() == 1
    task.refresh_from_db()
    decided = next(result for result in results if isinstance(result, Review))
    assert task.state == {"approve": State.APPROVED, "reject": State.REJECTED}[decided.decision]


def test_an_author_withdrawing_as_the_reviewer_approves_leaves_one_of_the_two(
    cast: Cast,
) -> None:
    task = make_task(cast.project, cast.author, State.IN_REVIEW, reviewer=cast.reviewer)
    seen = Task.objects.get(pk=task.pk)

    results = at_once(
        lambda: task_withdraw(
            actor=cast.author, task=Task.objects.get(pk=task.pk), expected_version=seen.version
        ),
        lambda: review_decide(
            actor=cast.reviewer,
            task=Task.objects.get(pk=task.pk),
            expected_version=seen.version,
            decision=Review.Decision.APPROVE,
            comments={},
            rubric=rubric_answers(cast.project),
        ),
    )

    conflicts = [result for result in results if isinstance(result, Conflict)]
    assert len(conflicts) == 1, results
    task.refresh_from_db()
    assert task.version == seen.version + 1
    if isinstance(results[0], Conflict):
        assert task.state == State.APPROVED
        assert conflicts[0].message == "This task was just approved by reviewer; reload to see it."
    else:
        assert task.state == State.WITHDRAWN
        assert not Review.objects.filter(task=task).exists()
        assert conflicts[0].message == "This task was just withdrawn by author; reload to see it."


def test_reviewers_taking_at_once_get_different_tasks(cast: Cast, second_reviewer) -> None:
    tasks = [make_task(cast.project, cast.author, State.SUBMITTED) for _ in range(2)]

    results = at_once(
        lambda: review_take_next(actor=cast.reviewer, project=cast.project),
        lambda: review_take_next(actor=second_reviewer, project=cast.project),
    )

    assert all(isinstance(result, Task) for result in results), results
    assert {result.pk for result in results} == {task.pk for task in tasks}
    holders = dict(Task.objects.values_list("pk", "reviewer__username"))
    assert sorted(holders.values()) == ["reviewer", "second"]


def test_reviewers_taking_the_last_task_at_once_leave_one_without(
    cast: Cast, second_reviewer
) -> None:
    task = make_task(cast.project, cast.author, State.SUBMITTED)

    results = at_once(
        lambda: review_take_next(actor=cast.reviewer, project=cast.project),
        lambda: review_take_next(actor=second_reviewer, project=cast.project),
    )

    assert sorted(repr(result) for result in results if not isinstance(result, Task)) == ["None"]
    task.refresh_from_db()
    assert task.state == State.IN_REVIEW
    assert task.reviewer.get_username() in ("reviewer", "second")


def test_two_edits_of_one_draft_at_once_keep_exactly_one(cast: Cast) -> None:
    task = make_task(cast.project, cast.author)
    seen = task.version

    def edit(prompt: str) -> Callable[[], object]:
        mine = Task.objects.get(pk=task.pk)
        content = task_content(cast.project, prompt=prompt)
        return lambda: task_update(
            actor=cast.author, task=mine, expected_version=seen, content=content
        )

    results = at_once(edit("First wording."), edit("Second wording."))

    conflicts = [result for result in results if isinstance(result, Conflict)]
    assert len(conflicts) == 1
    assert conflicts[0].message == "This task was just edited by author; reload to see it."
    task.refresh_from_db()
    assert task.version == seen + 1
    assert task.prompt in ("First wording.", "Second wording.")
