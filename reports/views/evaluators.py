"""Two score sources compared on 0-3 scores: agreement overall and per case, toolkit and source
model, with the table of score against score as a heat map."""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from curation import charts
from curation.access import RECORD_READERS, ProjectAccess, project_view
from curation.models import Project
from curation.requests import AuthenticatedRequest
from reports import evaluators as report_of
from reports.score_sources import UnknownSource, score_sources
from reports.serializers import SCALES
from reports.views.quality import with_defaults

SCORE_NAMES = ["0", "1", "2", "3"]


class EvaluatorsForm(forms.Form):
    scale = forms.ChoiceField(choices=SCALES, initial="safety")
    # Empty: the first two sources offered (the latest runs).
    first = forms.ChoiceField(required=False, label="First source")
    second = forms.ChoiceField(required=False, label="Second source")

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.project = project
        asked = self.data.get("scale")
        scale = asked if asked in dict(SCALES) else "safety"
        offered = [("", "The default")] + [(s.key, s.name) for s in score_sources(project, scale)]
        # The choice fields declared above; a form's fields are typed as any field.
        first = cast(forms.ChoiceField, self.fields["first"])
        second = cast(forms.ChoiceField, self.fields["second"])
        first.choices = second.choices = offered

    def clean(self) -> dict[str, Any]:
        # Form.clean gives back cleaned_data, which the stubs allow a subclass to leave out.
        super().clean()
        data = self.cleaned_data
        if "scale" in data:
            try:
                data["first"], data["second"] = report_of.compared_sources(
                    self.project, data["scale"], data.get("first", ""), data.get("second", "")
                )
            except UnknownSource as unknown:
                self.add_error(unknown.field, str(unknown))
        return data


@require_GET
@project_view(RECORD_READERS)
def evaluators(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    form = EvaluatorsForm(with_defaults(request.GET, scale=["safety"]), project=access.project)
    report = None
    if form.is_valid():
        data = form.cleaned_data
        report = report_of.evaluator_report(
            access.project, scale=data["scale"], first=data["first"], second=data["second"]
        )
    context = {
        "project": access.project,
        "access": access,
        "form": form,
        "report": report,
        "statistic_names": list(report_of.STATISTICS.values()),
        "overall": _named(report.overall) if report else [],
        "breakdowns": [(key, heading, report.groups[key]) for key, heading in report_of.DIMENSIONS]
        if report
        else [],
        "heatmap": _heatmap(report) if report else None,
    }
    status = 400 if form.errors else 200
    return render(request, "reports/evaluators.html", context, status=status)


def _named(comparison: report_of.Comparison) -> list[tuple[str, object]]:
    return [(report_of.STATISTICS[key], e) for key, e in comparison.statistics.items()]


def _heatmap(report: report_of.EvaluatorReport) -> charts.Heatmap:
    return charts.heatmap(
        f"{report.scale.capitalize()} scores: {report.first.name} against {report.second.name}",
        SCORE_NAMES,
        SCORE_NAMES,
        report.overall.table.tolist(),
        row_title=report.first.name,
        column_title=report.second.name,
    )
