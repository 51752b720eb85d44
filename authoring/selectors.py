"""Reads about benchmark tasks: who sees which, the two queues, comments, workflow statistics."""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.shortcuts import get_object_or_404
from django.utils import timezone

from authoring.models import Review, Task
from curation.models import Project, Role

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from curation.access import ProjectAccess

State = Task.State
# What an author must act on: their drafts and the tasks sent back to them.
WAITING_FOR_AUTHOR = (State.DRAFT, State.CHANGES_REQUESTED)


def roles_of(access: ProjectAccess) -> frozenset[str]:
    """The roles a person acts with in the project; a site administrator holds every role."""
    return frozenset(Role) if access.is_superuser else access.roles


def tasks_visible(project: Project, user: User, roles: frozenset[str]) -> QuerySet[Task]:
    """The tasks `user` may read: managers all; reviewers every task submitted at least once
    (drafts are their authors' business); authors their own."""
    tasks = Task.objects.filter(project=project)
    if Role.MANAGER in roles:
        return tasks
    visible = Q(author=user)
    if Role.REVIEWER in roles:
        visible |= Q(round__gt=0)
    return tasks.filter(visible)


def review_queue(project: Project, user: User, *, now: datetime | None = None) -> QuerySet[Task]:
    """Tasks `user` may take for review, oldest submission first.

    Submitted tasks, and tasks whose reviewer's hold has run out, except the user's own and
    those whose current revision the user has already reviewed.
    """
    now = now or timezone.now()
    reviewed = Review.objects.filter(
        task=OuterRef("pk"), revision__number=OuterRef("round"), reviewer=user
    )
    return (
        Task.objects.filter(project=project)
        .filter(Q(state=State.SUBMITTED) | Q(state=State.IN_REVIEW, review_expires_at__lte=now))
        .exclude(author=user)
        .exclude(Exists(reviewed))
        .order_by("submitted_at", "id")
    )


def tasks_held(project: Project, user: User, *, now: datetime | None = None) -> QuerySet[Task]:
    """Tasks `user` is reviewing now."""
    return Task.objects.filter(
        project=project,
        state=State.IN_REVIEW,
        reviewer=user,
        review_expires_at__gt=now or timezone.now(),
    ).order_by("review_expires_at")


def author_queue(project: Project, user: User) -> QuerySet[Task]:
    """The user's drafts and tasks sent back for changes, sent-back ones first."""
    return (
        Task.objects.filter(project=project, author=user, state__in=WAITING_FOR_AUTHOR)
        .annotate(sent_back=Q(state=State.CHANGES_REQUESTED))
        .order_by("-sent_back", "-updated_at")
    )


@dataclass(frozen=True)
class TaskBadges:
    """What waits for a person: as an author, and as a reviewer."""

    mine: int
    to_review: int


def task_badges(project: Project, user: User, roles: frozenset[str]) -> TaskBadges:
    mine = to_review = 0
    if roles & {Role.AUTHOR, Role.MANAGER}:
        mine = author_queue(project, user).count()
    if roles & {Role.REVIEWER, Role.MANAGER}:
        to_review = review_queue(project, user).count()
    return TaskBadges(mine=mine, to_review=to_review)


@dataclass(frozen=True)
class FieldComment:
    reviewer: str
    decision: str
    text: str


def latest_comments(task: Task) -> tuple[dict[str, list[FieldComment]], list[Review]]:
    """The reviewers' comments on the task's latest revision, by field, and those reviews."""
    if task.round == 0:
        return {}, []
    reviews = list(
        task.reviews.filter(revision__number=task.round).select_related("reviewer").order_by("id")
    )
    by_field: dict[str, list[FieldComment]] = defaultdict(list)
    for review in reviews:
        for field, text in review.comments.items():
            by_field[field].append(
                FieldComment(
                    reviewer=review.reviewer.get_username(),
                    decision=review.get_decision_display(),
                    text=text,
                )
            )
    return dict(by_field), reviews


@dataclass(frozen=True)
class WorkflowStats:
    per_state: list[tuple[str, int]]
    # Submissions an approved task took, for tasks approved through review here.
    rounds_to_approval: list[tuple[str, int]]
    # Hours from a revision's submission to a decision on it: overall, and per decision.
    median_hours: float | None
    median_hours_by_decision: list[tuple[str, float]]
    # Per author: (name, approved, rejected), for authors with a task approved or rejected.
    outcomes_by_author: list[tuple[str, int, int]]


def workflow_stats(project: Project) -> WorkflowStats:
    """Aggregates over the project's tasks and reviews: a handful of queries, whatever the size."""
    counts = dict(
        Task.objects.filter(project=project).values_list("state").annotate(n=Count("id")).order_by()
    )
    per_state = [(state.label, counts.get(state.value, 0)) for state in State]

    # Per round, how many tasks: the Exists keeps one row per task (a join on reviews would
    # repeat a task per review), and tasks imported approved have no reviews to count.
    rounds = dict(
        Task.objects.filter(
            Exists(Review.objects.filter(task=OuterRef("pk"))),
            project=project,
            state=State.APPROVED,
        )
        .values_list("round")
        .annotate(n=Count("id"))
        .order_by()
    )
    rounds_to_approval = [(str(n), rounds.get(n, 0)) for n in range(1, max(rounds, default=0) + 1)]

    waits: dict[str, list[float]] = defaultdict(list)
    reviews = Review.objects.filter(task__project=project).values_list(
        "decision", "created_at", "revision__created_at"
    )
    for decision, decided, submitted in reviews:
        waits[decision].append((decided - submitted).total_seconds() / 3600)
    every_wait = [hours for hours_of in waits.values() for hours in hours_of]
    median_by_decision = [
        (decision.label, statistics.median(waits[decision.value]))
        for decision in Review.Decision
        if waits[decision.value]
    ]

    outcomes = (
        Task.objects.filter(project=project, state__in=(State.APPROVED, State.REJECTED))
        .values_list("author__username")
        .annotate(
            approved=Count("id", filter=Q(state=State.APPROVED)),
            rejected=Count("id", filter=Q(state=State.REJECTED)),
        )
        .order_by("author__username")
    )
    return WorkflowStats(
        per_state=per_state,
        rounds_to_approval=rounds_to_approval,
        median_hours=statistics.median(every_wait) if every_wait else None,
        median_hours_by_decision=median_by_decision,
        outcomes_by_author=list(outcomes),
    )


def visible_task(access: ProjectAccess, user: User, task_id: int) -> Task:
    """The task, if the user may read it; 404 otherwise, so that others' drafts do not leak."""
    tasks = tasks_visible(access.project, user, roles_of(access))
    return get_object_or_404(
        tasks.select_related("author", "risk_category", "reviewer"), pk=task_id
    )
