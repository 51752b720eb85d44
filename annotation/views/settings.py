"""Managers' annotation settings: overlap, lease time, the fields asked, and the guidelines."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from annotation.forms import AnnotationSettingsForm, GuidelinesForm
from annotation.models import GuidelineVersion
from annotation.services.guidelines import annotation_settings_update, guidelines_publish
from curation.access import MANAGERS, ProjectAccess, project_view
from curation.errors import DomainError
from curation.requests import AuthenticatedRequest


@require_http_methods(["GET", "POST"])
@project_view(MANAGERS)
def annotation_settings(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    form = AnnotationSettingsForm(request.POST or None, instance=access.project)
    if request.method == "POST" and form.is_valid():
        annotation_settings_update(project=access.project, actor=request.user, **form.cleaned_data)
        messages.success(request, "Annotation settings saved.")
        return redirect("annotation:annotation_settings", access.project.slug)
    return _settings_page(request, access, form, None)


@require_POST
@project_view(MANAGERS)
def guidelines_new(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    form = GuidelinesForm(request.POST)
    if form.is_valid():
        try:
            version = guidelines_publish(
                project=access.project, actor=request.user, text=form.cleaned_data["text"]
            )
        except DomainError as error:
            form.add_error("text", error.message)
        else:
            messages.success(request, f"Guidelines version {version.number} published.")
            return redirect("annotation:annotation_settings", access.project.slug)
    return _settings_page(request, access, AnnotationSettingsForm(instance=access.project), form)


def _settings_page(
    request: AuthenticatedRequest,
    access: ProjectAccess,
    form: AnnotationSettingsForm,
    guidelines_form: GuidelinesForm | None,
) -> HttpResponse:
    versions = GuidelineVersion.objects.filter(project=access.project).select_related("created_by")
    latest = versions.first()
    context = {
        "project": access.project,
        "access": access,
        "form": form,
        "guidelines_form": guidelines_form
        or GuidelinesForm(initial={"text": latest.text if latest else ""}),
        "versions": versions,
    }
    return render(request, "annotation/settings.html", context)
