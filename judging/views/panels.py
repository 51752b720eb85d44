"""Panels (managers): several ended runs combined into one verdict per record."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from curation.access import MANAGERS, ProjectAccess, project_view
from curation.errors import DomainError
from curation.requests import AuthenticatedRequest
from judging.forms import PanelForm
from judging.models import JudgeRun
from judging.selectors import quality_runs
from judging.services.panels import ENDED, panel_create


@require_http_methods(["GET", "POST"])
@project_view(MANAGERS)
def panel_new(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    runs = (
        quality_runs(access.project)
        .filter(state__in=ENDED)
        .exclude(source=JudgeRun.Source.PANEL)
        .defer("record_ids", "report")
    )
    form = PanelForm(request.POST or None, runs=runs)
    if request.method == "POST" and form.is_valid():
        try:
            run = panel_create(
                actor=request.user,
                project=access.project,
                members=list(form.cleaned_data["members"]),
                rule=form.cleaned_data["rule"],
                name=form.cleaned_data["name"],
            )
        except DomainError as error:
            form.add_error(None, error.message)
        else:
            messages.success(
                request,
                f"Panel “{run.display_name}” over {run.total} records: a worker is combining them.",
            )
            return redirect("judging:run_detail", access.project.slug, run.pk)
    context = {"project": access.project, "access": access, "form": form}
    return render(request, "judging/panels_new.html", context)
