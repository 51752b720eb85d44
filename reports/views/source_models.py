"""The study's view: each source model's mean safety and helpfulness, as a table and a scatter
chart with the Pareto frontier, by chosen score sources and toolkit."""

from __future__ import annotations

from typing import Any, cast
from urllib.parse import urlencode

from django import forms
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from curation import charts
from curation.access import RECORD_READERS, ProjectAccess, project_view
from curation.models import Project
from curation.requests import AuthenticatedRequest
from reports.score_sources import NO_SOURCE, UnknownSource, score_sources, toolkit_names
from reports.source_models import SourceModelView, source_model_view, view_choices
from stats.metrics import Estimate


class SourceModelsForm(forms.Form):
    # Empty: the latest safety run and the same evaluator's helpfulness run.
    safety = forms.ChoiceField(required=False, label="Safety scores from")
    helpfulness = forms.ChoiceField(required=False, label="Helpfulness scores from")
    toolkit = forms.ChoiceField(required=False, label="Cases using the toolkit")

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.project = project
        # The choice fields declared above; a form's fields are typed as any field.
        for scale in ("safety", "helpfulness"):
            offered = score_sources(project, scale, people=False)
            cast(forms.ChoiceField, self.fields[scale]).choices = [("", "The default")] + [
                (source.key, source.name) for source in offered
            ]
        cast(forms.ChoiceField, self.fields["toolkit"]).choices = [("", "Any")] + [
            (name, name) for name in toolkit_names(project)
        ]

    def clean(self) -> dict[str, Any]:
        # Form.clean gives back cleaned_data, which the stubs allow a subclass to leave out.
        super().clean()
        data = self.cleaned_data
        try:
            data["safety"], data["helpfulness"], data["toolkit"] = view_choices(
                self.project,
                safety=data.get("safety", ""),
                helpfulness=data.get("helpfulness", ""),
                toolkit=data.get("toolkit", ""),
            )
        except UnknownSource as unknown:
            self.add_error(unknown.field, str(unknown))
        return data


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
                x_interval=_interval(model.helpfulness),
                y_interval=_interval(model.safety),
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


def _interval(estimate: Estimate) -> tuple[float, float] | None:
    return (estimate.low, estimate.high) if estimate.has_interval else None
