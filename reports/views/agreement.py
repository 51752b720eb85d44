"""Agreement between annotators: chance-corrected statistics, pairs, each against the consensus."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from curation import charts
from curation.access import RECORD_READERS, ProjectAccess, project_view
from curation.requests import AuthenticatedRequest
from reports import agreement as annotator_agreement
from reports.forms import AgreementForm, with_defaults
from stats.metrics import Estimate

# Pairs of annotators drawn in the chart (the table lists them all).
CHART_PAIRS = 20


@require_GET
@project_view(RECORD_READERS)
def agreement(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    form = AgreementForm(with_defaults(request.GET, scale=[annotator_agreement.Scale.VERDICT]))
    report = None
    if form.is_valid():
        report = annotator_agreement.agreement_report(
            access.project, scale=form.cleaned_data["scale"]
        )
    context = {
        "project": access.project,
        "access": access,
        "form": form,
        "report": report,
        "overall": _named(report) if report else [],
        "charts": _charts(report) if report else [],
    }
    status = 400 if form.errors else 200
    return render(request, "reports/agreement.html", context, status=status)


def _named(report: annotator_agreement.AgreementReport) -> list[tuple[str, Estimate]]:
    return [(annotator_agreement.AGREEMENT_STATISTICS[key], e) for key, e in report.overall.items()]


def _charts(report: annotator_agreement.AgreementReport) -> list[charts.BarChart]:
    overall = _named(report)
    pairs = [(f"{p.first} & {p.second}", p.kappa) for p in report.pairs[:CHART_PAIRS]]
    people = [(p.first, p.kappa) for p in report.with_consensus]
    return [
        _bars("Agreement (95% interval)", overall),
        _bars("Cohen's kappa, pairs sharing the most records", pairs),
        _bars("Cohen's kappa of each annotator with the consensus", people),
    ]


def _bars(title: str, items: list[tuple[str, Estimate]]) -> charts.BarChart:
    # Below zero is worse than chance: drawn left of zero. Undefined (no variation) is "-".
    return charts.bar_chart(
        title,
        [(name, estimate.value) for name, estimate in items],
        maximum=1,
        number_format="{:.3f}",
        intervals=[e.interval for _, e in items],
    )
