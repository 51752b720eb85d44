"""Workflow statistics for managers: where tasks are, how many rounds they take, how fast
reviewers decide, and how often each author's tasks are accepted."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from authoring.selectors import workflow_stats
from curation.access import MANAGERS, ProjectAccess, project_view
from curation.charts import bar_chart, column_chart, hours
from curation.requests import AuthenticatedRequest


@require_GET
@project_view(MANAGERS)
def task_stats(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    stats = workflow_stats(access.project)
    acceptance = [
        (author, 100 * approved / (approved + rejected))
        for author, approved, rejected in stats.outcomes_by_author
    ]
    context = {
        "project": access.project,
        "access": access,
        "stats": stats,
        "per_state": bar_chart("Tasks per state", stats.per_state),
        "rounds": column_chart("Approved tasks by rounds of review", stats.rounds_to_approval),
        "hours": bar_chart(
            "Median hours from submission to decision",
            stats.median_hours_by_decision,
            number_format=hours,
        ),
        "acceptance": bar_chart(
            "Acceptance rate per author (approved of approved or rejected)",
            acceptance,
            maximum=100,
            unit="%",
        ),
    }
    return render(request, "authoring/stats.html", context)
