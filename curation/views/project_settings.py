"""A project's settings page: its name, description and license, and the way to every other
setting of the project, for its managers."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from curation.access import MANAGERS, ProjectAccess, project_view
from curation.errors import DomainError
from curation.forms import ProjectDeleteForm, ProjectSettingsForm
from curation.requests import AuthenticatedRequest
from curation.services.project_deletion import project_delete
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


@require_http_methods(["GET", "POST"])
@project_view(MANAGERS)
def project_delete_view(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    """The project and everything of it deleted, once its name is typed; refused while it
    has releases."""
    form = ProjectDeleteForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        name = access.project.name
        try:
            project_delete(
                actor=request.user, project=access.project, typed_name=form.cleaned_data["name"]
            )
        except DomainError as error:
            form.add_error("name", error.message)
        else:
            messages.success(request, f"Project “{name}” deleted, with everything of it.")
            return redirect("home")
    context = {"project": access.project, "access": access, "form": form}
    return render(request, "curation/project_delete.html", context)
