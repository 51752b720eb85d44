"""Reviewing tasks: taking one from the queue, giving it back, deciding on it.

A reviewer holds a task for the project's review_lease_minutes; only the holder decides, and a
hold that runs out puts the task back in the queue. A task is approved once its current revision
has approvals from K distinct reviewers (the project's required_approvals); until then each
approval sends it back to the queue for another reviewer.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from django.db import transaction
from django.utils import timezone

from authoring.models import Review, Task
from authoring.selectors import review_queue, tasks_held
from authoring.services.tasks import FIELD_LABELS
from authoring.workflow import Action, move_check, project_roles, transition_apply
from curation.errors import DomainError, NotAllowed
from curation.models import Project, Role

if TYPE_CHECKING:
    from django.contrib.auth.models import User

State = Task.State
Decision = Review.Decision
_DECISION_ACTIONS = {
    Decision.APPROVE: Action.APPROVE,
    Decision.REQUEST_CHANGES: Action.REQUEST_CHANGES,
    Decision.REJECT: Action.REJECT,
}
COMMENT_MAX_CHARS = 5000


def review_take_next(*, actor: User, project: Project) -> Task | None:
    """The task `actor` reviews next: one they already hold, else the oldest in the queue.

    None when nothing waits for them. Reviewers taking at once get different tasks: each locks
    the row it picks and skips rows others have locked.
    """
    if not project_roles(actor, project.pk) & {Role.REVIEWER, Role.MANAGER}:
        raise NotAllowed("Only reviewers may review tasks, and never their own.")
    held = tasks_held(project, actor).first()
    if held is not None:
        return held
    with transaction.atomic():
        # The id only: finding the oldest waiting task scans and sorts the queue, which costs
        # three times as much when the rows carry their long texts along.
        pk = (
            review_queue(project, actor)
            .select_for_update(skip_locked=True)
            .values_list("pk", flat=True)
            .first()
        )
        if pk is None:
            return None
        task = Task.objects.select_related("project").get(pk=pk)
        _take(actor, task, task.version)
    return task


def review_take(*, actor: User, task: Task, expected_version: int) -> Task:
    """Take this task for review, if it waits in the queue or its reviewer's hold ran out."""
    with transaction.atomic():
        _take(actor, task, expected_version)
    return task


def review_release(*, actor: User, task: Task, expected_version: int) -> Task:
    """Give a held task back to the queue, undecided."""
    with transaction.atomic():
        transition_apply(
            task=task,
            action=Action.RELEASE,
            actor=actor,
            expected_version=expected_version,
            changes={"reviewer": None, "review_expires_at": None},
        )
    return task


def review_decide(
    *,
    actor: User,
    task: Task,
    expected_version: int,
    decision: str,
    comments: dict[str, str],
    rubric: dict[str, bool],
    summary: str = "",
) -> Review:
    """Decide on the revision `actor` holds: approve, request changes or reject.

    `comments` are by field of TASK_FIELDS (blank ones are dropped); `rubric` answers the
    project's active checks by id.
    """
    decision = Decision(decision)
    action = _DECISION_ACTIONS[decision]
    comments = {field: text.strip() for field, text in comments.items() if text.strip()}
    summary = summary.strip()
    now = timezone.now()
    with transaction.atomic():
        # Whether the actor may decide now comes before what their review says.
        roles = project_roles(actor, task.project_id)
        move_check(task, action, actor, roles, expected_version=expected_version, now=now)
        _check_review(task, decision, comments, rubric, summary)
        revision = task.revisions.get(number=task.round)
        target = None
        details: dict[str, object] = {"revision": revision.number, "decision": decision.value}
        if decision == Decision.APPROVE:
            approvals = (
                revision.reviews.filter(decision=Decision.APPROVE)
                .exclude(reviewer=actor)
                .values("reviewer")
                .distinct()
                .count()
                + 1
            )
            required = task.project.required_approvals
            target = State.APPROVED if approvals >= required else State.SUBMITTED
            details.update(approvals=approvals, required=required)
        final = target != State.SUBMITTED
        transition_apply(
            task=task,
            action=action,
            actor=actor,
            expected_version=expected_version,
            target=target,
            changes={
                "reviewer": None,
                "review_expires_at": None,
                **({"decided_at": now} if final else {}),
            },
            details=details,
            now=now,
        )
        review = Review(
            task=task,
            revision=revision,
            reviewer=actor,
            decision=decision,
            comments=comments,
            rubric=rubric,
            summary=summary,
        )
        review.full_clean()
        review.save()
    return review


def _take(actor: User, task: Task, expected_version: int) -> None:
    now = timezone.now()
    transition_apply(
        task=task,
        action=Action.TAKE,
        actor=actor,
        expected_version=expected_version,
        changes={
            "reviewer": actor,
            "review_expires_at": now + timedelta(minutes=task.project.review_lease_minutes),
        },
        details={"reviewer": actor.get_username(), "revision": task.round},
        now=now,
    )


def _check_review(
    task: Task,
    decision: Decision,
    comments: dict[str, str],
    rubric: dict[str, bool],
    summary: str,
) -> None:
    unknown = sorted(set(comments) - set(FIELD_LABELS))
    if unknown:
        raise DomainError(f"There is no field called {', '.join(unknown)} to comment on.")
    too_long = [FIELD_LABELS[f] for f, text in comments.items() if len(text) > COMMENT_MAX_CHARS]
    if too_long:
        raise DomainError(
            f"Comments are at most {COMMENT_MAX_CHARS:,} characters: shorten those on "
            f"{', '.join(too_long).lower()}."
        )
    checks = {
        str(pk)
        for pk in task.project.rubric_checks.filter(active=True).values_list("pk", flat=True)
    }
    if set(rubric) != checks or not all(isinstance(value, bool) for value in rubric.values()):
        raise DomainError("Answer every check of the rubric, yes or no.")
    if decision == Decision.REQUEST_CHANGES and not comments and not summary:
        raise DomainError("Say what to change: comment on a field or write a summary.")
