"""Task review settings for managers: K, the hold time, risk categories and the rubric."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from authoring.forms import ReviewSettingsForm, RiskCategoryForm, RubricCheckForm
from authoring.services.settings import (
    review_settings_update,
    risk_category_add,
    risk_category_remove,
    rubric_check_add,
    rubric_check_toggle,
)
from curation.access import MANAGERS, ProjectAccess, project_view
from curation.errors import DomainError
from curation.models import Project
from curation.requests import AuthenticatedRequest


@require_http_methods(["GET", "POST"])
@project_view(MANAGERS)
def task_settings(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    project = access.project
    # A copy: validating a model form writes its data onto the instance, before the service
    # has recorded what the settings were.
    form = ReviewSettingsForm(request.POST or None, instance=Project.objects.get(pk=project.pk))
    if request.method == "POST" and form.is_valid():
        review_settings_update(actor=request.user, project=project, **form.cleaned_data)
        messages.success(request, "Review settings saved.")
        return redirect("authoring:task_settings", project.slug)
    context = {
        "project": project,
        "access": access,
        "form": form,
        "category_form": RiskCategoryForm(),
        "check_form": RubricCheckForm(),
        "categories": project.risk_categories.all(),
        "checks": project.rubric_checks.all(),
    }
    return render(request, "authoring/settings.html", context)


@require_POST
@project_view(MANAGERS)
def risk_category_create(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    form = RiskCategoryForm(request.POST)
    if form.is_valid():
        try:
            risk_category_add(actor=request.user, project=access.project, **form.cleaned_data)
        except DomainError as error:
            messages.error(request, error.message)
    else:
        messages.error(request, "Name the new risk category.")
    return redirect("authoring:task_settings", access.project.slug)


@require_POST
@project_view(MANAGERS)
def risk_category_delete(
    request: AuthenticatedRequest, access: ProjectAccess, category_id: int
) -> HttpResponse:
    category = get_object_or_404(access.project.risk_categories, pk=category_id)
    try:
        risk_category_remove(actor=request.user, category=category)
    except DomainError as error:
        messages.error(request, error.message)
    return redirect("authoring:task_settings", access.project.slug)


@require_POST
@project_view(MANAGERS)
def rubric_check_create(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    form = RubricCheckForm(request.POST)
    if form.is_valid():
        rubric_check_add(actor=request.user, project=access.project, **form.cleaned_data)
    else:
        messages.error(request, "Write the new check.")
    return redirect("authoring:task_settings", access.project.slug)


@require_POST
@project_view(MANAGERS)
def rubric_check_switch(
    request: AuthenticatedRequest, access: ProjectAccess, check_id: int
) -> HttpResponse:
    check = get_object_or_404(access.project.rubric_checks, pk=check_id)
    rubric_check_toggle(actor=request.user, check=check)
    return redirect("authoring:task_settings", access.project.slug)
