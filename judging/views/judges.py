"""Judges and their prompt templates (managers): list, create, edit, test the connection."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from curation.access import MANAGERS, ProjectAccess, project_view
from judging.client import api_key_is_set
from judging.forms import JudgeForm, PromptTemplateForm
from judging.models import Judge
from judging.services.judges import (
    judge_connection_test,
    judge_create,
    judge_update,
    prompt_template_create,
)


@require_GET
@project_view(MANAGERS)
def judge_list(request: HttpRequest, access: ProjectAccess) -> HttpResponse:
    judges = access.project.judges.select_related("template")
    context = {
        "project": access.project,
        "access": access,
        "judges": [(judge, api_key_is_set(judge.api_key_env)) for judge in judges],
    }
    return render(request, "judging/judges.html", context)


@require_http_methods(["GET", "POST"])
@project_view(MANAGERS)
def judge_new(request: HttpRequest, access: ProjectAccess) -> HttpResponse:
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
def judge_edit(request: HttpRequest, access: ProjectAccess, judge_id: int) -> HttpResponse:
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
def judge_test(request: HttpRequest, access: ProjectAccess, judge_id: int) -> HttpResponse:
    judge = get_object_or_404(access.project.judges, pk=judge_id)
    check = judge_connection_test(judge=judge)
    if request.htmx:
        context = {"project": access.project, "judge": judge, "check": check}
        return render(request, "judging/judges_form.html#connection", context)
    (messages.success if check.ok else messages.error)(request, check.message)
    return redirect("judging:judge_edit", access.project.slug, judge.pk)


@require_http_methods(["GET", "POST"])
@project_view(MANAGERS)
def template_list(request: HttpRequest, access: ProjectAccess) -> HttpResponse:
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
    request: HttpRequest, access: ProjectAccess, form: JudgeForm, judge: Judge | None
) -> HttpResponse:
    variable = form["api_key_env"].value() or ""
    context = {
        "project": access.project,
        "access": access,
        "form": form,
        "judge": judge,
        "api_key_env": variable,
        "api_key_set": api_key_is_set(variable),
    }
    return render(request, "judging/judges_form.html", context)
