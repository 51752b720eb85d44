"""Judge runs: the list, a new run, one run with its live progress and verdicts, cancel and
resume, and importing verdicts made elsewhere. Reviewers read runs; managers act on them."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseStopPolling

from curation.access import MANAGERS, RECORD_READERS, ProjectAccess, project_view
from curation.errors import DomainError
from curation.requests import AuthenticatedRequest
from judging.forms import RunForm, VerdictFilterForm, VerdictImportForm
from judging.models import JudgeRun, name_shared
from judging.selectors import run_top_errors
from judging.services.runs import (
    can_retry_errors,
    is_finished,
    is_resumable,
    is_stalled,
    judge_run_cancel,
    judge_run_create,
    judge_run_plan,
    judge_run_resume,
    judge_run_retry_errors,
    run_progress,
    selection_description,
)
from judging.services.verdict_import import verdict_import

RECENT_RUNS = 100
VERDICTS_PER_PAGE = 50


@require_GET
@project_view(RECORD_READERS)
def run_list(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    runs = access.project.judge_runs.annotate(name_is_shared=name_shared()).defer(
        "record_ids", "judge_snapshot", "report"
    )
    context = {
        "project": access.project,
        "access": access,
        "runs": [(run, run_progress(run)) for run in runs[:RECENT_RUNS]],
    }
    return render(request, "judging/runs.html", context)


@require_http_methods(["GET", "POST"])
@project_view(MANAGERS)
def run_new(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    form = RunForm(request.POST or None, project=access.project)
    plan = None
    if request.method == "POST" and form.is_valid():
        try:
            # "Estimate the cost" shows what the run would take, and starts nothing.
            if "estimate" in request.POST:
                plan = judge_run_plan(project=access.project, **form.cleaned_data)
            else:
                run = judge_run_create(
                    actor=request.user, project=access.project, **form.cleaned_data
                )
                return redirect("judging:run_detail", access.project.slug, run.pk)
        except DomainError as error:
            form.add_error(None, error.message)
    context = {"project": access.project, "access": access, "form": form, "plan": plan}
    return render(request, "judging/runs_new.html", context)


@require_GET
# The same URL answers htmx's polls with the live parts alone: caches must keep the two apart.
@vary_on_headers("HX-Request")
@project_view(RECORD_READERS)
def run_detail(request: AuthenticatedRequest, access: ProjectAccess, run_id: int) -> HttpResponse:
    run = get_object_or_404(
        access.project.judge_runs.select_related("judge", "created_by").defer("record_ids"),
        pk=run_id,
    )
    filters = VerdictFilterForm(request.GET)
    verdicts = run.verdicts.select_related("record").order_by("record_id")
    if filters.is_valid() and filters.cleaned_data["parse_status"]:
        verdicts = verdicts.filter(parse_status=filters.cleaned_data["parse_status"])
    context = {
        "project": access.project,
        "access": access,
        "run": run,
        "progress": run_progress(run),
        "finished": is_finished(run),
        "stalled": is_stalled(run),
        "resumable": is_resumable(run),
        "retryable": can_retry_errors(run),
        "top_errors": run_top_errors(run.pk),
        "page": Paginator(verdicts, VERDICTS_PER_PAGE).get_page(request.GET.get("page")),
    }
    if request.htmx and not request.htmx.history_restore_request:
        response = render(request, "judging/runs_detail.html#poll", context)
        # A finished run's final figures and verdicts are the last: htmx stops polling.
        return HttpResponseStopPolling(response.content) if is_finished(run) else response
    context |= {"selection": selection_description(run.selection), "filters": filters}
    return render(request, "judging/runs_detail.html", context)


@require_POST
@project_view(MANAGERS)
def run_cancel(request: AuthenticatedRequest, access: ProjectAccess, run_id: int) -> HttpResponse:
    return _act(request, access, run_id, judge_run_cancel, "Cancelling the run.")


@require_POST
@project_view(MANAGERS)
def run_resume(request: AuthenticatedRequest, access: ProjectAccess, run_id: int) -> HttpResponse:
    return _act(request, access, run_id, judge_run_resume, "The run will go on.")


@require_POST
@project_view(MANAGERS)
def run_retry_errors(
    request: AuthenticatedRequest, access: ProjectAccess, run_id: int
) -> HttpResponse:
    return _act(
        request, access, run_id, judge_run_retry_errors, "The errored records will be judged again."
    )


@require_http_methods(["GET", "POST"])
@project_view(MANAGERS)
def verdict_import_page(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    form = VerdictImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            run = verdict_import(
                actor=request.user,
                project=access.project,
                upload=data["file"],
                protocol=data["protocol"],
                name=data["name"],
                id_field=data["id_field"],
            )
        except DomainError as error:
            form.add_error("file", error.message)
        else:
            messages.success(request, f"Imported {run.total} verdicts.")
            return redirect("judging:run_detail", access.project.slug, run.pk)
    context = {"project": access.project, "access": access, "form": form}
    return render(request, "judging/runs_import.html", context)


def _act(
    request: AuthenticatedRequest,
    access: ProjectAccess,
    run_id: int,
    service: Callable[..., JudgeRun],
    done: str,
) -> HttpResponse:
    run = get_object_or_404(access.project.judge_runs.defer("record_ids"), pk=run_id)
    try:
        service(actor=request.user, run=run)
    except DomainError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, done)
    return redirect("judging:run_detail", access.project.slug, run.pk)
