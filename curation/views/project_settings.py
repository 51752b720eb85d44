"""A project's settings page: its name, description and license, and the way to every other
setting of the project, for its managers."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from curation.access import MANAGERS, ProjectAccess, project_view
from curation.forms import ProjectSettingsForm
from curation.requests import AuthenticatedRequest
from curation.services.projects import project_update


@require_http_methods(["GET", "POST"])
@project_view(MANAGERS)
def project_settings(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    form = ProjectSettingsForm(request.POST or None, instance=access.project)
    if request.method == "POST" and form.is_valid():
        project_update(actor=request.user, project=access.project, **form.cleaned_data)
        messages.success(request, "Project settings saved.")
        return redirect("curation:project_settings", access.project.slug)
    # A refused form has written its values into the instance: the page's heading and
    # navigation keep the stored name.
    access.project.refresh_from_db()
    context = {"project": access.project, "access": access, "form": form}
    return render(request, "curation/project_settings.html", context)
