"""The task workflow: every move between states, who may make it, and how it is made.

This is the one place that knows the moves. Services ask it to apply one and do the rest (the
revision a submission freezes, the review a decision writes); views and the API only call
services. A move is one conditional UPDATE on the task's (state, version): of two people acting
at once on the same task, exactly one changes the row and the other is told who came first.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from django.db.models import F, Q
from django.utils import timezone

from authoring.models import Task
from curation.errors import Conflict, DomainError, NotAllowed
from curation.models import AuditEvent, Membership, Role
from curation.services.audit import audit_log

if TYPE_CHECKING:
    from django.contrib.auth.models import User

State = Task.State


class Action(StrEnum):
    EDIT = "edit"
    SUBMIT = "submit"
    WITHDRAW = "withdraw"
    REOPEN = "reopen"
    TAKE = "take"
    RELEASE = "release"
    APPROVE = "approve"
    REQUEST_CHANGES = "request_changes"
    REJECT = "reject"


class Party(StrEnum):
    """How a person stands to a task, which decides the moves open to them."""

    # The person who wrote the task.
    AUTHOR = "author"
    # A manager of the project, or a site administrator.
    MANAGER = "manager"
    # A reviewer or manager who did not write the task: authors never review their own.
    REVIEWER = "reviewer"
    # The reviewer holding the task while the hold lasts.
    HOLDER = "holder"


@dataclass(frozen=True)
class Move:
    # The states the move may lead to; the first unless the service picks another (an approval
    # leads back to the queue until the task has its K approvals).
    targets: tuple[State, ...]
    parties: frozenset[Party]
    # How the move reads in messages ("This task was just submitted by ...").
    verb: str
    # The audit event's action is "curation.task.<audit>".
    audit: str


def _move(targets: tuple[State, ...], parties: set[Party], verb: str, audit: str) -> Move:
    return Move(targets, frozenset(parties), verb, audit)


_EDIT = {Party.AUTHOR}
_WITHDRAW = _move((State.WITHDRAWN,), {Party.AUTHOR, Party.MANAGER}, "withdrawn", "withdrawn")
_TAKE = _move((State.IN_REVIEW,), {Party.REVIEWER}, "taken for review", "taken")

# (state, action) -> the move. A pair missing here is an illegal move in that state.
TRANSITIONS: dict[tuple[State, Action], Move] = {
    (State.DRAFT, Action.EDIT): _move((State.DRAFT,), _EDIT, "edited", "updated"),
    (State.CHANGES_REQUESTED, Action.EDIT): _move(
        (State.CHANGES_REQUESTED,), _EDIT, "edited", "updated"
    ),
    (State.DRAFT, Action.SUBMIT): _move(
        (State.SUBMITTED,), {Party.AUTHOR}, "submitted", "submitted"
    ),
    (State.CHANGES_REQUESTED, Action.SUBMIT): _move(
        (State.SUBMITTED,), {Party.AUTHOR}, "submitted", "submitted"
    ),
    (State.DRAFT, Action.WITHDRAW): _WITHDRAW,
    (State.SUBMITTED, Action.WITHDRAW): _WITHDRAW,
    (State.IN_REVIEW, Action.WITHDRAW): _WITHDRAW,
    (State.CHANGES_REQUESTED, Action.WITHDRAW): _WITHDRAW,
    (State.WITHDRAWN, Action.REOPEN): _move((State.DRAFT,), {Party.AUTHOR}, "reopened", "reopened"),
    (State.SUBMITTED, Action.TAKE): _TAKE,
    # Only once the holder's time has run out (see _guard).
    (State.IN_REVIEW, Action.TAKE): _TAKE,
    (State.IN_REVIEW, Action.RELEASE): _move(
        (State.SUBMITTED,), {Party.HOLDER}, "given back to the queue", "released"
    ),
    (State.IN_REVIEW, Action.APPROVE): _move(
        (State.APPROVED, State.SUBMITTED), {Party.HOLDER}, "approved", "approved"
    ),
    (State.IN_REVIEW, Action.REQUEST_CHANGES): _move(
        (State.CHANGES_REQUESTED,), {Party.HOLDER}, "sent back for changes", "changes_requested"
    ),
    (State.IN_REVIEW, Action.REJECT): _move(
        (State.REJECTED,), {Party.HOLDER}, "rejected", "rejected"
    ),
}

# The moves of the reviewer holding a task: giving it back and the three decisions.
HOLDER_ACTIONS = frozenset(
    action for (_, action), move in TRANSITIONS.items() if Party.HOLDER in move.parties
)


def _parties_per_action() -> dict[Action, frozenset[Party]]:
    parties: dict[Action, frozenset[Party]] = {}
    for (_, action), move in TRANSITIONS.items():
        parties[action] = parties.get(action, frozenset()) | move.parties
    return parties


# Who may ever make each action, in some state: decides between 403 and 409 for illegal moves.
_ACTION_PARTIES = _parties_per_action()

# The audit actions of moves, and how they read, for the message of the loser of a race.
_VERBS = {f"curation.task.{move.audit}": move.verb for move in TRANSITIONS.values()}

_REFUSALS = {
    Party.AUTHOR: "Only the task's author may {action} it.",
    Party.MANAGER: "Only the task's author or a manager may {action} it.",
    Party.REVIEWER: "Only reviewers may review tasks, and never their own.",
    Party.HOLDER: "Only the reviewer holding this task may {action} it.",
}
_ACTION_WORDS = {
    Action.EDIT: "edit",
    Action.SUBMIT: "submit",
    Action.WITHDRAW: "withdraw",
    Action.REOPEN: "reopen",
    Action.TAKE: "take",
    Action.RELEASE: "give back",
    Action.APPROVE: "approve",
    Action.REQUEST_CHANGES: "send back for changes",
    Action.REJECT: "reject",
}


def project_roles(user: User, project_id: int) -> frozenset[str]:
    """The user's roles in the project; a site administrator holds every role."""
    if user.is_superuser:
        return frozenset(Role)
    return frozenset(
        Membership.objects.filter(project_id=project_id, user=user).values_list("role", flat=True)
    )


def parties_of(task: Task, user: User, roles: frozenset[str]) -> frozenset[Party]:
    """How `user`, holding `roles` in the task's project, stands to the task."""
    parties = set()
    is_author = task.author_id == user.pk
    if is_author and (Role.AUTHOR in roles or Role.MANAGER in roles):
        parties.add(Party.AUTHOR)
    if Role.MANAGER in roles:
        parties.add(Party.MANAGER)
    if not is_author and (Role.REVIEWER in roles or Role.MANAGER in roles):
        parties.add(Party.REVIEWER)
        if task.state == State.IN_REVIEW and task.reviewer_id == user.pk:
            parties.add(Party.HOLDER)
    return frozenset(parties)


def available_actions(
    task: Task, user: User, roles: frozenset[str], *, now: datetime | None = None
) -> list[Action]:
    """The actions `user` may take on the task now, for the buttons a page offers."""
    now = now or timezone.now()
    parties = parties_of(task, user, roles)
    available = []
    for action in Action:
        move = TRANSITIONS.get((State(task.state), action))
        if move is None or not move.parties & parties:
            continue
        try:
            _guard(task, action, user, now)
        except DomainError:
            continue
        available.append(action)
    return available


def party_check(task: Task, action: Action, user: User, roles: frozenset[str]) -> frozenset[Party]:
    """How `user` stands to the task; NotAllowed if that allows `action` in no state at all."""
    parties = parties_of(task, user, roles)
    # A reviewer may come to hold the task: for them a decision is a matter of state.
    could = parties | ({Party.HOLDER} if Party.REVIEWER in parties else set())
    if not _ACTION_PARTIES[action] & could:
        raise NotAllowed(_refusal(_ACTION_PARTIES[action], parties, action))
    return parties


def move_check(
    task: Task,
    action: Action,
    user: User,
    roles: frozenset[str],
    *,
    expected_version: int | None = None,
    now: datetime | None = None,
) -> Move:
    """The move `action` makes on `task` as it is, if `user` may make it now.

    Raises NotAllowed (403) when the user may never make this move on this task (an author
    reviewing their own task, a reviewer submitting someone's draft), and Conflict (409) when
    the task changed since `expected_version`, or its state or its hold forbid the move now.
    """
    now = now or timezone.now()
    parties = party_check(task, action, user, roles)
    if expected_version is not None and task.version != expected_version:
        raise Conflict(_changed_meanwhile(task))
    move = TRANSITIONS.get((State(task.state), action))
    if move is None:
        raise Conflict(
            f"This task is {task.get_state_display().lower()}: you cannot "
            f"{_ACTION_WORDS[action]} it now."
        )
    if not move.parties & parties:
        if Party.HOLDER in move.parties:
            raise Conflict(_not_holding(task, user, now))
        raise NotAllowed(_refusal(move.parties, parties, action))
    _guard(task, action, user, now)
    return move


def transition_apply(
    *,
    task: Task,
    action: Action,
    actor: User,
    expected_version: int,
    target: State | None = None,
    changes: dict[str, Any] | None = None,
    details: dict[str, Any] | None = None,
    now: datetime | None = None,
) -> Move:
    """Make the move `action` on `task`, as the actor saw it at `expected_version`.

    `task` is the row as just read; `changes` are further columns the move sets (a hold, a
    round). The UPDATE changes the row only if it is still in the state and version the checks
    saw, and for the holder's moves only while the hold lasts; otherwise nothing is written and
    Conflict names who acted first. On success `task` is refreshed and the move is audited, with
    `details` added to what the event says. Call inside the service's transaction: the updated
    row stays locked until it commits.
    """
    now = now or timezone.now()
    roles = project_roles(actor, task.project_id)
    move = move_check(task, action, actor, roles, expected_version=expected_version, now=now)
    target = target or move.targets[0]
    if target not in move.targets:
        raise ValueError(f"{action} leads to {move.targets}, not {target}")
    condition = Q(pk=task.pk, state=task.state, version=expected_version)
    if Party.HOLDER in move.parties:
        condition &= Q(reviewer=actor, review_expires_at__gt=now)
    elif action == Action.TAKE and task.state == State.IN_REVIEW:
        condition &= Q(review_expires_at__lte=now)
    updated = Task.objects.filter(condition).update(
        state=target, version=F("version") + 1, updated_at=now, **(changes or {})
    )
    if updated != 1:
        task.refresh_from_db()
        raise Conflict(_changed_meanwhile(task))
    before = {"state": task.state, "version": task.version}
    task.refresh_from_db()
    audit_log(
        actor=actor,
        action=f"curation.task.{move.audit}",
        project=task.project,
        obj=task,
        before=before,
        after={"state": task.state, "version": task.version, **(details or {})},
    )
    return move


def _guard(task: Task, action: Action, user: User, now: datetime) -> None:
    """What the table cannot say: holds, and one decision per reviewer and revision."""
    if action == Action.TAKE:
        if task.state == State.IN_REVIEW and _holds(task, now):
            holder = "you" if task.reviewer_id == user.pk else _name(task.reviewer)
            raise Conflict(f"This task is being reviewed by {holder} until {_time(task)}.")
        if task.reviews.filter(revision__number=task.round, reviewer=user).exists():
            raise Conflict(
                "You have already reviewed this revision: another reviewer must review it."
            )
    elif action in HOLDER_ACTIONS and (task.reviewer_id != user.pk or not _holds(task, now)):
        raise Conflict(_not_holding(task, user, now))


def _holds(task: Task, now: datetime) -> bool:
    """Whether the task's hold lasts at `now`."""
    return task.review_expires_at is not None and task.review_expires_at > now


def _not_holding(task: Task, user: User, now: datetime) -> str:
    if task.reviewer_id == user.pk:
        return (
            f"Your hold on this task ran out at {_time(task)}: take it again from the review "
            "queue to decide on it."
        )
    if _holds(task, now):
        return f"{_name(task.reviewer)} is reviewing this task; only they may decide on it now."
    return "Take this task from the review queue before deciding on it."


def _changed_meanwhile(task: Task) -> str:
    """Who changed the task last, for the person whose move came second."""
    event = (
        AuditEvent.objects.filter(
            object_type=task._meta.label_lower, object_id=str(task.pk), action__in=_VERBS
        )
        .select_related("actor")
        .order_by("-created_at", "-id")
        .first()
    )
    if event is None:
        return "This task was just changed by someone else; reload to see it."
    return f"This task was just {_VERBS[event.action]} by {_name(event.actor)}; reload to see it."


def _refusal(allowed: frozenset[Party], parties: frozenset[Party], action: Action) -> str:
    if Party.AUTHOR in parties and allowed & {Party.REVIEWER, Party.HOLDER}:
        return "Authors never review their own tasks."
    for party in (Party.HOLDER, Party.REVIEWER, Party.MANAGER, Party.AUTHOR):
        if party in allowed:
            return _REFUSALS[party].format(action=_ACTION_WORDS[action])
    raise AssertionError(allowed)


def _name(user: User | None) -> str:
    return user.get_username() if user is not None else "someone"


def _time(task: Task) -> str:
    return timezone.localtime(task.review_expires_at).strftime("%Y-%m-%d %H:%M")
