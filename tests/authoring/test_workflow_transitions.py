"""Every move of the task workflow, from every state, by every role: legal moves happen and are
audited, illegal ones are refused (403 for whoever may never make them, 409 for a move the
state forbids) and change nothing.

The expectations are written out here, not derived from authoring.workflow, so that a change to
the table that this file does not also make fails.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from authoring.models import Review, Task
from authoring.services.reviews import review_release, review_take
from authoring.services.tasks import task_reopen, task_submit, task_update, task_withdraw
from curation.errors import Conflict, NotAllowed
from curation.models import AuditEvent, Role
from curation.services.projects import membership_grant
from tests.authoring.task_helpers import decide, make_task, task_content
from tests.conftest import Cast
from tests.factories import UserFactory

State = Task.State
ALL_STATES = tuple(State)
EDITABLE = (State.DRAFT, State.CHANGES_REQUESTED)
OPEN = (State.DRAFT, State.SUBMITTED, State.IN_REVIEW, State.CHANGES_REQUESTED)
# The people: the task's author, the reviewer who holds it when it is in review, a second
# reviewer, a manager (who may review too), a site administrator (who holds every role), an
# annotator.
PERSONAS = ("author", "reviewer", "second_reviewer", "manager", "superuser", "annotator")
REVIEWING = ("reviewer", "second_reviewer", "manager", "superuser")


def expected(action: str, state: State, persona: str) -> str:
    """The state the move leads to, or "403" / "409"."""
    author_moves = {
        "edit": {s: s for s in EDITABLE},
        "submit": {s: State.SUBMITTED for s in EDITABLE},
        "reopen": {State.WITHDRAWN: State.DRAFT},
    }
    if action in author_moves:
        if persona != "author":
            return "403"
        return author_moves[action].get(state, "409")
    if action == "withdraw":
        if persona not in ("author", "manager", "superuser"):
            return "403"
        return State.WITHDRAWN if state in OPEN else "409"
    if persona not in REVIEWING:
        return "403"
    if action == "take":
        # In review, the reviewer's hold lasts: nobody else may take the task, nor they again.
        return State.IN_REVIEW if state == State.SUBMITTED else "409"
    decisions = {
        "release": State.SUBMITTED,
        "approve": State.APPROVED,
        "request_changes": State.CHANGES_REQUESTED,
        "reject": State.REJECTED,
    }
    # Only the reviewer holding the task decides on it or gives it back.
    if state == State.IN_REVIEW and persona == "reviewer":
        return decisions[action]
    return "409"


def make(action: str) -> Callable[[Task, object], object]:
    def edit(task, actor):
        content = task_content(task.project, prompt="A clearer prompt.")
        return task_update(actor=actor, task=task, expected_version=task.version, content=content)

    def decision(value: str) -> Callable[[Task, object], object]:
        return lambda task, actor: decide(task, actor, value)

    def move(service):
        return lambda task, actor: service(actor=actor, task=task, expected_version=task.version)

    return {
        "edit": edit,
        "submit": move(task_submit),
        "withdraw": move(task_withdraw),
        "reopen": move(task_reopen),
        "take": move(review_take),
        "release": move(review_release),
        "approve": decision(Review.Decision.APPROVE),
        "request_changes": decision(Review.Decision.REQUEST_CHANGES),
        "reject": decision(Review.Decision.REJECT),
    }[action]


ACTIONS = (
    "edit",
    "submit",
    "withdraw",
    "reopen",
    "take",
    "release",
    "approve",
    "request_changes",
    "reject",
)


@pytest.mark.parametrize("state", ALL_STATES, ids=str)
@pytest.mark.parametrize("action", ACTIONS)
def test_each_move_from_each_state_for_each_role(cast: Cast, action: str, state: State) -> None:
    second = UserFactory(username="second")
    membership_grant(actor=cast.manager, project=cast.project, user=second, role=Role.REVIEWER)
    people = {
        "author": cast.author,
        "reviewer": cast.reviewer,
        "second_reviewer": second,
        "manager": cast.manager,
        "superuser": cast.superuser,
        "annotator": cast.annotator,
    }
    wrong = {}
    for persona in PERSONAS:
        task = make_task(cast.project, cast.author, state, reviewer=cast.reviewer)
        before = (task.state, task.version, AuditEvent.objects.count())
        want = expected(action, state, persona)
        try:
            make(action)(task, people[persona])
        except NotAllowed:
            got = "403"
        except Conflict:
            got = "409"
        else:
            task.refresh_from_db()
            got = task.state
        if got != want:
            wrong[persona] = f"expected {want}, got {got}"
            continue
        task.refresh_from_db()
        events = AuditEvent.objects.count() - before[2]
        if want in ("403", "409"):
            assert (task.state, task.version, events) == (*before[:2], 0), persona
        else:
            assert task.version == before[1] + 1, persona
            assert events == 1, persona
    assert not wrong, f"{action} from {state}: {wrong}"


def test_a_refused_move_says_why(cast: Cast) -> None:
    task = make_task(cast.project, cast.author, State.APPROVED, reviewer=cast.reviewer)

    with pytest.raises(Conflict) as refused:
        task_submit(actor=cast.author, task=task, expected_version=task.version)
    assert refused.value.message == "This task is approved: you cannot submit it now."
    with pytest.raises(NotAllowed) as refused:
        task_submit(actor=cast.reviewer, task=task, expected_version=task.version)
    assert refused.value.message == "Only the task's author may submit it."


def test_an_author_never_reviews_their_own_task(cast: Cast) -> None:
    membership_grant(actor=cast.manager, project=cast.project, user=cast.author, role=Role.REVIEWER)
    task = make_task(cast.project, cast.author, State.SUBMITTED)

    with pytest.raises(NotAllowed) as refused:
        review_take(actor=cast.author, task=task, expected_version=task.version)
    assert refused.value.message == "Authors never review their own tasks."
    task.refresh_from_db()
    assert (task.state, task.reviewer) == (State.SUBMITTED, None)


def test_a_manager_never_reviews_their_own_task_either(cast: Cast) -> None:
    task = make_task(cast.project, cast.manager, State.SUBMITTED)

    with pytest.raises(NotAllowed) as refused:
        review_take(actor=cast.manager, task=task, expected_version=task.version)
    assert refused.value.message == "Authors never review their own tasks."


def test_every_move_is_audited_with_the_states_before_and_after(cast: Cast) -> None:
    task = make_task(cast.project, cast.author, State.CHANGES_REQUESTED, reviewer=cast.reviewer)

    actions = list(
        AuditEvent.objects.filter(object_id=str(task.pk), object_type="authoring.task")
        .order_by("id")
        .values_list("action", "actor__username", "before__state", "after__state")
    )

    assert actions == [
        ("curation.task.created", "author", None, "draft"),
        ("curation.task.submitted", "author", "draft", "submitted"),
        ("curation.task.taken", "reviewer", "submitted", "in_review"),
        ("curation.task.changes_requested", "reviewer", "in_review", "changes_requested"),
    ]


def test_a_move_from_a_stale_page_names_who_moved_first(cast: Cast) -> None:
    task = make_task(cast.project, cast.author)
    stale = task.version
    task_submit(actor=cast.author, task=task, expected_version=stale)

    with pytest.raises(Conflict) as refused:
        task_withdraw(actor=cast.author, task=task, expected_version=stale)
    assert refused.value.message == "This task was just submitted by author; reload to see it."
