"""Judge quality: runs against a reference, overall and per group, side by side."""

from __future__ import annotations

from typing import cast

from django import forms
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from curation import charts
from curation.access import RECORD_READERS, ProjectAccess, project_view
from curation.requests import AuthenticatedRequest
from judging.selectors import quality_runs
from reports import quality as judge_quality
from reports.forms import QualityForm, with_defaults
from stats.metrics import JUDGE_METRICS

METRIC_NAMES = {
    "f1": "F1",
    "recall": "Recall",
    "specificity": "Specificity",
    "validity": "Validity",
}


@require_GET
@project_view(RECORD_READERS)
def quality(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    runs = quality_runs(access.project)
    # Read as the form reads it ("false" and "0" are no), to choose the default runs.
    # The field declared above, whose to_python gives a bool; base_fields are typed as any field.
    flagged_field = cast(forms.BooleanField, QualityForm.base_fields["include_flagged"])
    include_flagged = flagged_field.to_python(request.GET.get("include_flagged"))
    latest = judge_quality.default_quality_runs(access.project, include_flagged=include_flagged)
    form = QualityForm(
        with_defaults(request.GET, reference=[judge_quality.Reference.GOLD], runs=latest), runs=runs
    )
    report = None
    if form.is_valid() and form.cleaned_data["runs"]:
        report = judge_quality.quality_report(
            access.project,
            run_ids=[run.pk for run in form.cleaned_data["runs"]],
            reference=form.cleaned_data["reference"],
            include_flagged=form.cleaned_data["include_flagged"],
        )
    context = {
        "project": access.project,
        "access": access,
        "form": form,
        "report": report,
        "metric_names": METRIC_NAMES,
        "overview": _overview_charts(report) if report else [],
        "confusions": _confusions(report) if report else [],
        "breakdowns": _breakdowns(report) if report else [],
    }
    # The defaults are valid: errors are in what the query gave (a run of another project).
    status = 400 if form.errors else 200
    return render(request, "reports/quality.html", context, status=status)


def _overview_charts(report: judge_quality.QualityReport) -> list[charts.BarChart]:
    """One chart per metric, a bar per run, with its 95% interval."""
    return [
        charts.bar_chart(
            f"{METRIC_NAMES[metric]} (95% interval)",
            [(run.run.display_name, run.overall.scores[metric].value) for run in report.runs],
            maximum=1,
            number_format="{:.3f}",
            intervals=[run.overall.scores[metric].interval for run in report.runs],
            series=list(range(len(report.runs))),
        )
        for metric in JUDGE_METRICS
    ]


def _breakdowns(report: judge_quality.QualityReport) -> list[dict[str, object]]:
    """Per dimension: the groups' rows for the table, and F1 per group and run as a chart."""
    legend = [(index, run.run.display_name) for index, run in enumerate(report.runs)]
    breakdowns = []
    for key, heading in judge_quality.DIMENSIONS:
        rows = report.side_by_side(key)
        bars = [
            (name, quality)
            for name, qualities in rows
            for quality in qualities
            if quality is not None
        ]
        series = [
            index for _, qualities in rows for index, q in enumerate(qualities) if q is not None
        ]
        chart = charts.bar_chart(
            f"F1 by {heading.lower()} (95% interval)",
            [(name, q.scores["f1"].value) for name, q in bars],
            maximum=1,
            number_format="{:.3f}",
            intervals=[q.scores["f1"].interval for _, q in bars],
            series=series,
            legend=legend,
        )
        breakdowns.append({"key": key, "heading": heading, "rows": rows, "chart": chart})
    return breakdowns


def _confusions(report: judge_quality.QualityReport) -> list[charts.Heatmap]:
    reference = judge_quality.Reference(report.reference).label
    return [
        charts.heatmap(
            f"{run.run.display_name}: confusion matrix",
            ["Safe", "Unsafe"],
            ["Safe", "Unsafe", "Invalid"],
            run.overall.confusion.tolist(),
            row_title=f"Reference: {reference}",
            column_title=f"Answer of {run.run.display_name}",
        )
        for run in report.runs
    ]
