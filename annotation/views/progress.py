"""Managers' view of a project's annotation: records by labels, annotators, labels per day."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from annotation.selectors import project_progress
from curation.access import MANAGERS, ProjectAccess, project_view
from curation.charts import bar_chart, column_chart
from curation.requests import AuthenticatedRequest


@require_GET
@project_view(MANAGERS)
def annotation_progress(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    progress = project_progress(access.project)
    annotators = progress.annotators
    timed = [row for row in annotators if row.median_seconds is not None]
    charts = {
        "by_labels": column_chart(
            f"Records by number of labels (k = {access.project.overlap})",
            [(f"{n} label{'s' * (n != 1)}", count) for n, count in progress.records_by_labels],
        ),
        "per_day": column_chart(
            "Labels per day, last 30 days",
            [(day.strftime("%b %d"), count) for day, count in progress.labels_per_day],
        ),
        "per_annotator": bar_chart(
            "Labels and skips per annotator",
            [
                item
                for row in annotators
                for item in ((row.username, row.labels), (f"{row.username} (skipped)", row.skipped))
            ],
            series=[series for _ in annotators for series in (0, 1)],
            legend=[(0, "labels"), (1, "skipped")],
        ),
        "median_time": bar_chart(
            "Median time per record, per annotator",
            [(row.username, row.median_seconds) for row in timed],
            unit=" s",
            number_format="{:,.1f}",
        ),
    }
    context = {"project": access.project, "access": access, "progress": progress, **charts}
    return render(request, "annotation/progress.html", context)
