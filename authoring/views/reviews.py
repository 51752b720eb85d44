"""Reviewing tasks: the review queue, the review page with its diff, a revision's page."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.forms import BoundField
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from authoring.diff import FieldDiff, revision_diff
from authoring.forms import ReviewForm
from authoring.models import Review, Task, TaskRevision
from authoring.selectors import review_queue, roles_of, tasks_held
from authoring.services.reviews import review_decide, review_take_next
from authoring.services.tasks import FIELD_LABELS
from authoring.views.tasks import visible_task
from authoring.workflow import Action, Party, available_actions, parties_of
from curation.access import REVIEWERS, TASK_MEMBERS, ProjectAccess, project_view
from curation.errors import DomainError, NotAllowed
from curation.requests import AuthenticatedRequest

QUEUE_PAGE = 100


@dataclass(frozen=True)
class ReviewRow:
    """A field on the review page: its diff, what reviewers said of it last time, the input."""

    diff: FieldDiff
    earlier: list[tuple[str, str]]
    comment: BoundField


@dataclass(frozen=True)
class RevisionReview:
    """A review as a revision's page shows it: comments by field label, rubric answers."""

    review: Review
    comments: list[tuple[str, str]]
    rubric: list[tuple[str, bool]]


@require_GET
@project_view(REVIEWERS)
def queue(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    waiting = review_queue(access.project, request.user).select_related("author", "reviewer")
    context = {
        "project": access.project,
        "access": access,
        "held": tasks_held(access.project, request.user).select_related("author"),
        "waiting": waiting[:QUEUE_PAGE],
        "waiting_count": waiting.count(),
    }
    return render(request, "authoring/queue.html", context)


@require_POST
@project_view(REVIEWERS)
def take_next(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    try:
        task = review_take_next(actor=request.user, project=access.project)
    except NotAllowed as refusal:
        raise PermissionDenied(refusal.message) from None
    if task is None:
        messages.info(request, "No task waits for your review.")
        return redirect("authoring:review_queue", access.project.slug)
    return redirect("authoring:task_review", access.project.slug, task.pk)


@require_http_methods(["GET", "POST"])
@project_view(REVIEWERS)
def task_review(request: AuthenticatedRequest, access: ProjectAccess, task_id: int) -> HttpResponse:
    task = visible_task(access, request.user, task_id)
    if Party.REVIEWER not in parties_of(task, request.user, roles_of(access)):
        raise PermissionDenied("Authors never review their own tasks.")
    form = ReviewForm(access.project, request.POST or None, initial={"version": task.version})
    if request.method == "POST" and form.is_valid():
        try:
            review = review_decide(
                actor=request.user,
                task=task,
                expected_version=form.cleaned_data["version"],
                decision=form.cleaned_data["decision"],
                comments=form.comments(),
                rubric=form.rubric(),
                summary=form.cleaned_data["summary"],
            )
        except DomainError as error:
            form.add_error(None, error.message)
        else:
            messages.success(request, f"{review.get_decision_display()}: decision recorded.")
            return redirect("authoring:review_queue", access.project.slug)
    return _review_page(request, access, task, form)


@require_GET
@project_view(TASK_MEMBERS)
def task_revision(
    request: AuthenticatedRequest, access: ProjectAccess, task_id: int, number: int
) -> HttpResponse:
    task = visible_task(access, request.user, task_id)
    revision = get_object_or_404(task.revisions, number=number)
    # Retired checks too: past reviews answered them.
    checks = {str(pk): text for pk, text in access.project.rubric_checks.values_list("pk", "text")}
    previous = task.revisions.filter(number=number - 1).first()
    context = {
        "project": access.project,
        "access": access,
        "task": task,
        "revision": revision,
        "previous": previous,
        "diff": revision_diff(previous.content if previous else None, revision.content),
        "reviews": [
            RevisionReview(
                review,
                [(FIELD_LABELS[field], text) for field, text in review.comments.items()],
                [
                    (checks.get(pk, "A check since removed"), answer)
                    for pk, answer in review.rubric.items()
                ],
            )
            for review in revision.reviews.select_related("reviewer").order_by("created_at")
        ],
    }
    return render(request, "authoring/revision.html", context)


def _review_page(
    request: AuthenticatedRequest, access: ProjectAccess, task: Task, form: ReviewForm
) -> HttpResponse:
    """The revision under review against the previous one, and the form if the user holds it."""
    revision = task.revisions.filter(number=task.round).first()
    previous = task.revisions.filter(number=task.round - 1).first()
    earlier = _comments_by_field(previous)
    diff = (
        revision_diff(previous.content if previous else None, revision.content) if revision else []
    )
    holding = (
        task.state == Task.State.IN_REVIEW
        and task.reviewer_id == request.user.pk
        and task.review_expires_at is not None
        and task.review_expires_at > timezone.now()
    )
    context = {
        "project": access.project,
        "access": access,
        "task": task,
        "revision": revision,
        "previous": previous,
        "rows": [
            ReviewRow(field, earlier.get(field.field, []), form.comment_field(field.field))
            for field in diff
        ],
        "form": form,
        "files": task.reference_files.all(),
        "holding": holding,
        "can_take": Action.TAKE in available_actions(task, request.user, roles_of(access)),
    }
    return render(request, "authoring/review.html", context)


def _comments_by_field(revision: TaskRevision | None) -> dict[str, list[tuple[str, str]]]:
    """What reviewers said about each field of the previous revision: (reviewer, comment)."""
    comments: dict[str, list[tuple[str, str]]] = {}
    if revision is None:
        return comments
    for review in revision.reviews.select_related("reviewer").order_by("created_at"):
        for field, text in review.comments.items():
            comments.setdefault(field, []).append((review.reviewer.get_username(), text))
    return comments
