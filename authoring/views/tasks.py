"""Writing tasks: the list with the author's queue, a task's page, the form, moves and files."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import FileResponse, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from authoring.forms import ReferenceFileForm, TaskForm, VersionForm, message_formset
from authoring.models import TASK_FIELDS, Task
from authoring.reference_files import served_content_type
from authoring.selectors import (
    FieldComment,
    author_queue,
    latest_comments,
    roles_of,
    tasks_visible,
    visible_task,
)
from authoring.services.reviews import review_release, review_take
from authoring.services.tasks import (
    FIELD_LABELS,
    task_create,
    task_file_attach,
    task_file_remove,
    task_reopen,
    task_submit,
    task_update,
    task_withdraw,
)
from authoring.workflow import Action, available_actions, move_check, party_check
from curation.access import AUTHORS, TASK_MEMBERS, ProjectAccess, project_view
from curation.errors import DomainError, NotAllowed
from curation.models import AuditEvent
from curation.requests import AuthenticatedRequest

if TYPE_CHECKING:
    from django.contrib.auth.models import User

PAGE_SIZE = 50
# The moves a task page offers as buttons, and the service making each.
MOVES: dict[str, Callable[..., Any]] = {
    Action.SUBMIT: task_submit,
    Action.WITHDRAW: task_withdraw,
    Action.REOPEN: task_reopen,
    Action.TAKE: review_take,
    Action.RELEASE: review_release,
}
_DONE: dict[str, str] = {
    Action.SUBMIT: "Submitted for review.",
    Action.WITHDRAW: "Withdrawn.",
    Action.REOPEN: "Reopened as a draft.",
    Action.TAKE: "The task is yours to review.",
    Action.RELEASE: "Given back to the review queue.",
}


@dataclass
class FieldRow:
    """One field of a task as a page shows it: its value or its form input, and the comments."""

    name: str
    label: str
    value: Any = None
    comments: list[FieldComment] = field(default_factory=list)


def field_rows(task: Task, comments: dict[str, list[FieldComment]]) -> list[FieldRow]:
    values = {
        **{name: getattr(task, name) for name in TASK_FIELDS if name != "reference_files"},
        "risk_category": task.risk_category.name if task.risk_category else "",
        "reference_files": list(task.reference_files.all()),
    }
    return [
        FieldRow(name, FIELD_LABELS[name], values[name], comments.get(name, []))
        for name in TASK_FIELDS
    ]


@require_GET
@project_view(TASK_MEMBERS)
def task_list(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    tasks = tasks_visible(access.project, request.user, roles_of(access))
    state = request.GET.get("state", "")
    if state in Task.State.values:
        tasks = tasks.filter(state=state)
    page = Paginator(
        tasks.select_related("author", "risk_category").order_by("-updated_at", "-id"), PAGE_SIZE
    ).get_page(request.GET.get("page"))
    context = {
        "project": access.project,
        "access": access,
        "page": page,
        "state": state,
        "states": Task.State.choices,
        "mine": author_queue(access.project, request.user) if access.can_write_tasks else [],
    }
    return render(request, "authoring/list.html", context)


@require_http_methods(["GET", "POST"])
@project_view(AUTHORS)
def task_new(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    form = TaskForm(access.project, request.POST or None)
    formset = message_formset(request.POST or None)
    if request.method == "POST" and _valid(form, formset):
        try:
            task = task_create(
                actor=request.user, project=access.project, content=form.content(formset.messages())
            )
        except DomainError as error:
            form.add_error(None, error.message)
        else:
            messages.success(request, "Draft saved. Submit it for review when it is ready.")
            return redirect("authoring:task_detail", access.project.slug, task.pk)
    return _form_page(request, access, form, formset, task=None)


@require_http_methods(["GET", "POST"])
@project_view(AUTHORS)
def task_edit(request: AuthenticatedRequest, access: ProjectAccess, task_id: int) -> HttpResponse:
    task = visible_task(access, request.user, task_id)
    try:
        move_check(task, Action.EDIT, request.user, roles_of(access))
    except NotAllowed as refusal:
        raise PermissionDenied(refusal.message) from None
    except DomainError as error:
        messages.error(request, error.message)
        return redirect("authoring:task_detail", access.project.slug, task.pk)
    form = TaskForm(
        access.project, request.POST or None, instance=task, initial={"version": task.version}
    )
    formset = message_formset(request.POST or None, task=task)
    if request.method == "POST" and _valid(form, formset):
        try:
            task_update(
                actor=request.user,
                # Fresh: validating a model form writes its data onto the instance it edits.
                task=Task.objects.get(pk=task.pk),
                expected_version=form.cleaned_data["version"] or 0,
                content=form.content(formset.messages()),
            )
        except DomainError as error:
            form.add_error(None, error.message)
        else:
            messages.success(request, "Saved.")
            return redirect("authoring:task_detail", access.project.slug, task.pk)
    return _form_page(request, access, form, formset, task=task)


@require_GET
@project_view(TASK_MEMBERS)
def task_detail(request: AuthenticatedRequest, access: ProjectAccess, task_id: int) -> HttpResponse:
    task = visible_task(access, request.user, task_id)
    comments, latest_reviews = latest_comments(task)
    actions = available_actions(task, request.user, roles_of(access))
    context = {
        "project": access.project,
        "access": access,
        "task": task,
        "rows": field_rows(task, comments),
        "latest_reviews": latest_reviews,
        "actions": [action.value for action in actions],
        "file_form": ReferenceFileForm(initial={"version": task.version}),
        "file_types": ", ".join(settings.TASK_FILE_TYPES),
        "revisions": task.revisions.order_by("-number"),
        "reviews": task.reviews.select_related("reviewer", "revision").order_by("-created_at"),
        "history": AuditEvent.objects.filter(
            object_type=Task._meta.label_lower, object_id=str(task.pk)
        ).select_related("actor"),
    }
    return render(request, "authoring/detail.html", context)


@require_POST
@project_view(TASK_MEMBERS)
def task_move(
    request: AuthenticatedRequest, access: ProjectAccess, task_id: int, action: str
) -> HttpResponse:
    task = visible_task(access, request.user, task_id)
    _may_ever(access, request.user, task, Action(action))
    form = VersionForm(request.POST)
    version = form.cleaned_data["version"] if form.is_valid() else 0
    try:
        MOVES[action](actor=request.user, task=task, expected_version=version)
    except NotAllowed as refusal:
        raise PermissionDenied(refusal.message) from None
    except DomainError as error:
        messages.error(request, error.message)
        return redirect("authoring:task_detail", access.project.slug, task.pk)
    messages.success(request, _DONE[action])
    if action == Action.TAKE:
        return redirect("authoring:task_review", access.project.slug, task.pk)
    return redirect("authoring:task_detail", access.project.slug, task.pk)


@require_POST
@project_view(AUTHORS)
def task_file_upload(
    request: AuthenticatedRequest, access: ProjectAccess, task_id: int
) -> HttpResponse:
    task = visible_task(access, request.user, task_id)
    _may_ever(access, request.user, task, Action.EDIT)
    form = ReferenceFileForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, "Choose a file to attach.")
    elif form.cleaned_data["file"].size > settings.TASK_FILE_MAX_BYTES:
        messages.error(
            request, f"The file is larger than the limit of {settings.TASK_FILE_MAX_BYTES:,} bytes."
        )
    else:
        upload = form.cleaned_data["file"]
        try:
            task_file_attach(
                actor=request.user,
                task=task,
                expected_version=form.cleaned_data["version"],
                name=upload.name,
                data=upload.read(),
            )
        except NotAllowed as refusal:
            raise PermissionDenied(refusal.message) from None
        except DomainError as error:
            messages.error(request, error.message)
        else:
            messages.success(request, "File attached.")
    return redirect("authoring:task_detail", access.project.slug, task.pk)


@require_GET
@project_view(TASK_MEMBERS)
def task_file_download(
    request: AuthenticatedRequest, access: ProjectAccess, task_id: int, file_id: int
) -> FileResponse:
    task = visible_task(access, request.user, task_id)
    reference = get_object_or_404(task.reference_files, pk=file_id)
    # Always a download, never a page: the file is the author's, and may hold anything.
    response = FileResponse(
        reference.file.open("rb"),
        as_attachment=True,
        filename=reference.name,
        content_type=served_content_type(reference.name),
    )
    response["X-Content-Type-Options"] = "nosniff"
    return response


@require_POST
@project_view(AUTHORS)
def task_file_delete(
    request: AuthenticatedRequest, access: ProjectAccess, task_id: int, file_id: int
) -> HttpResponse:
    task = visible_task(access, request.user, task_id)
    _may_ever(access, request.user, task, Action.EDIT)
    reference = get_object_or_404(task.reference_files, pk=file_id)
    form = VersionForm(request.POST)
    try:
        task_file_remove(
            actor=request.user,
            task=task,
            expected_version=form.cleaned_data["version"] if form.is_valid() else 0,
            file=reference,
        )
    except NotAllowed as refusal:
        raise PermissionDenied(refusal.message) from None
    except DomainError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"Removed {reference.name}.")
    return redirect("authoring:task_detail", access.project.slug, task.pk)


def _may_ever(access: ProjectAccess, user: User, task: Task, action: Action) -> None:
    """403 for whoever may make `action` on this task in no state at all (before a form's
    errors could hide that)."""
    try:
        party_check(task, action, user, roles_of(access))
    except NotAllowed as refusal:
        raise PermissionDenied(refusal.message) from None


def _valid(form: TaskForm, formset: Any) -> bool:
    return form.is_valid() and formset.is_valid() and form.check_content(formset.messages())


def _form_page(
    request: AuthenticatedRequest,
    access: ProjectAccess,
    form: TaskForm,
    formset: Any,
    task: Task | None,
) -> HttpResponse:
    comments, reviews = latest_comments(task) if task else ({}, [])
    rows = [
        FieldRow(
            name,
            FIELD_LABELS[name],
            form[name] if name in form.fields else None,
            comments.get(name, []),
        )
        for name in TASK_FIELDS
        if name != "reference_files"
    ]
    context = {
        "project": access.project,
        "access": access,
        "task": task,
        "form": form,
        "formset": formset,
        "rows": rows,
        "summaries": [review for review in reviews if review.summary],
    }
    return render(request, "authoring/form.html", context)
