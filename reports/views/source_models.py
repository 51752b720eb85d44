"""The study's view: each source model's mean safety and helpfulness, as a table and a scatter
chart with the Pareto frontier, by chosen score sources and toolkit."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from curation import charts
from curation.access import RECORD_READERS, ProjectAccess, project_view
from curation.models import Project
from curation.requests import AuthenticatedRequest
from reports.forms import SourceModelsForm
from reports.score_sources import NO_SOURCE
from reports.source_models import SourceModelView, source_model_view


@require_GET
@project_view(RECORD_READERS)
def source_models(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    form = SourceModelsForm(request.GET, project=access.project)
    view = None
    if form.is_valid():
        view = source_model_view(access.project, **form.cleaned_data)
    context = {
        "project": access.project,
        "access": access,
        "form": form,
        "view": view,
        "chart": _chart(access.project, view) if view else None,
    }
    status = 400 if form.errors else 200
    return render(request, "reports/source_models.html", context, status=status)


def _chart(project: Project, view: SourceModelView) -> charts.ScatterChart:
    records = reverse("hub:record_list", args=[project.slug])
    return charts.scatter_chart(
        f"Mean safety ({view.safety.name}) and helpfulness ({view.helpfulness.name})",
        [
            charts.ScatterItem(
                label=model.name,
                x=model.helpfulness.value,
                y=model.safety.value,
                x_interval=model.helpfulness.interval,
                y_interval=model.safety.interval,
                frontier=model.pareto,
                # The model's records; those without a source agent have no filter to name.
                href=records
                if model.name == NO_SOURCE
                else f"{records}?{urlencode({'agent': model.name})}",
            )
            for model in view.models
        ],
        x_title="Mean helpfulness",
        y_title="Mean safety",
    )
