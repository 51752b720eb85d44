"""Judges and their prompt templates (managers): list, create, edit, test the connection."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseStopPolling

from curation import charts
from curation.access import MANAGERS, ProjectAccess, project_view
from curation.errors import DomainError
from curation.requests import AuthenticatedRequest
from judging.forms import JudgeForm, PromptTemplateForm
from judging.models import ConnectionCheck, Judge
from judging.selectors import JudgeCost, judge_costs
from judging.services.judges import (
    connection_check_start,
    judge_create,
    judge_update,
    prompt_template_create,
)


@require_GET
@project_view(MANAGERS)
def judge_list(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    judges = access.project.judges.select_related("template", "connection", "active_version")
    context = {
        "project": access.project,
        "access": access,
        "judges": judges,
        "cost_charts": _cost_charts(judge_costs(access.project)),
    }
    return render(request, "judging/judges.html", context)


def _cost_charts(costs: list[JudgeCost]) -> list[charts.ColumnChart | charts.BarChart]:
    """The project's cost per week, and each judge's, as the Judges page draws them."""
    if not costs:
        return []
    weeks: dict[str, float] = {}
    for cost in costs:
        label = f"{cost.week:%b %d}"
        weeks[label] = weeks.get(label, 0.0) + float(cost.cost)
    names = sorted({cost.judge for cost in costs})
    by_judge = sorted(costs, key=lambda cost: (cost.judge, cost.week))
    return [
        charts.column_chart(
            "Cost of the project's judge runs, by the week they started",
            list(weeks.items()),
            number_format="{:,.2f}",
        ),
        charts.bar_chart(
            "Cost of each judge's runs, by week",
            [(f"{cost.judge}, {cost.week:%b %d}", float(cost.cost)) for cost in by_judge],
            number_format="{:,.2f}",
            series=[names.index(cost.judge) for cost in by_judge],
            legend=list(enumerate(names)),
        ),
    ]


@require_http_methods(["GET", "POST"])
@project_view(MANAGERS)
def judge_new(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    form = JudgeForm(request.POST or None, project=access.project)
    if request.method == "POST" and form.is_valid():
        try:
            judge = judge_create(actor=request.user, project=access.project, **form.cleaned_data)
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(request, f"Judge “{judge.name}” created.")
            return redirect("judging:judge_edit", access.project.slug, judge.pk)
    return _judge_page(request, access, form, judge=None)


@require_http_methods(["GET", "POST"])
@project_view(MANAGERS)
def judge_edit(request: AuthenticatedRequest, access: ProjectAccess, judge_id: int) -> HttpResponse:
    judge = get_object_or_404(access.project.judges, pk=judge_id)
    form = JudgeForm(request.POST or None, instance=judge, project=access.project)
    if request.method == "POST" and form.is_valid():
        try:
            judge_update(actor=request.user, judge=judge, **form.cleaned_data)
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(request, f"Judge “{judge.name}” saved. Runs started from now use it.")
            return redirect("judging:judge_edit", access.project.slug, judge.pk)
    return _judge_page(request, access, form, judge=judge)


@require_POST
@project_view(MANAGERS)
def judge_test(request: AuthenticatedRequest, access: ProjectAccess, judge_id: int) -> HttpResponse:
    """Hand the test to a worker: no web process waits on an endpoint."""
    judge = get_object_or_404(access.project.judges, pk=judge_id)
    try:
        check = connection_check_start(
            actor=request.user, connection=judge.connection, model=judge.model, judge=judge
        )
    except DomainError as refused:
        if request.htmx:
            context = {"project": access.project, "judge": judge, "refused": refused.message}
            return render(request, "judging/judges_form.html#connection", context)
        messages.error(request, refused.message)
        return redirect("judging:judge_edit", access.project.slug, judge.pk)
    if request.htmx:
        context = {"project": access.project, "judge": judge, "check": check}
        return render(request, "judging/judges_form.html#connection", context)
    messages.info(request, "A worker is testing the connection.")
    return redirect("judging:judge_test_detail", access.project.slug, judge.pk, check.pk)


@require_GET
# The same URL answers htmx's polls with the result alone: caches must keep the two apart.
@vary_on_headers("HX-Request")
@project_view(MANAGERS)
def judge_test_detail(
    request: AuthenticatedRequest, access: ProjectAccess, judge_id: int, test_id: int
) -> HttpResponse:
    judge = get_object_or_404(access.project.judges, pk=judge_id)
    check = get_object_or_404(judge.connection_checks, pk=test_id)
    context = {"project": access.project, "judge": judge, "check": check}
    if request.htmx and not request.htmx.history_restore_request:
        response = render(request, "judging/judges_form.html#connection", context)
        ended = check.is_finished or check.is_abandoned
        return HttpResponseStopPolling(response.content) if ended else response
    return _judge_page(
        request, access, JudgeForm(instance=judge, project=access.project), judge, check
    )


@require_http_methods(["GET", "POST"])
@project_view(MANAGERS)
def template_list(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    """The project's templates, latest version first, and a form for a new one (or a new
    version: saving under an existing name adds a version)."""
    initial = {}
    if based_on := request.GET.get("from"):
        template = access.project.prompt_templates.filter(pk=based_on).first()
        if template is not None:
            initial = {f: getattr(template, f) for f in ("name", "answer", "system", "user")}
    form = PromptTemplateForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            template = prompt_template_create(
                actor=request.user, project=access.project, **form.cleaned_data
            )
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(request, f"Saved {template}.")
            return redirect("judging:template_list", access.project.slug)
    templates = access.project.prompt_templates.select_related("created_by")
    context = {
        "project": access.project,
        "access": access,
        "form": form,
        "templates": templates,
    }
    return render(request, "judging/judges_templates.html", context)


def _judge_page(
    request: AuthenticatedRequest,
    access: ProjectAccess,
    form: JudgeForm,
    judge: Judge | None,
    check: ConnectionCheck | None = None,
) -> HttpResponse:
    context = {
        "project": access.project,
        "access": access,
        "form": form,
        "judge": judge,
        "check": check,
    }
    return render(request, "judging/judges_form.html", context)
