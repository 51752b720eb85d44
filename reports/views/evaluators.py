"""Two score sources compared on 0-3 scores: agreement overall and per case, toolkit and source
model, with the table of score against score as a heat map."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from curation import charts
from curation.access import RECORD_READERS, ProjectAccess, project_view
from curation.choices import ScoreScale
from curation.requests import AuthenticatedRequest
from reports import evaluators as report_of
from reports.forms import EvaluatorsForm, with_defaults

SCORE_NAMES = ["0", "1", "2", "3"]


@require_GET
@project_view(RECORD_READERS)
def evaluators(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    form = EvaluatorsForm(
        with_defaults(request.GET, scale=[ScoreScale.SAFETY]), project=access.project
    )
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
        row_title=f"Score by {report.first.name} (the first)",
        column_title=f"Score by {report.second.name} (the second)",
    )
