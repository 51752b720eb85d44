"""A judge's versions: their quality over time, new versions quoting settled cases, the
version runs start with, and evaluations of one version against another.

Reviewers and managers read them; only managers make, choose and evaluate versions.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseStopPolling

from alignment import selectors
from alignment.forms import VersionForm
from alignment.services import judge_evaluation_start, judge_version_activate, judge_version_create
from curation import charts
from curation.access import MANAGERS, RECORD_READERS, ProjectAccess, project_view
from curation.errors import DomainError
from curation.requests import AuthenticatedRequest
from judging.models import Judge, JudgeVersion
from judging.protocols import protocol_for
from judging.services.judges import judge_snapshot
from judging.services.runs import is_finished, run_progress

# Settled cases offered to tick by hand, the most contested first.
OFFERED_CASES = 200


@require_GET
@project_view(RECORD_READERS)
def judge_versions(
    request: AuthenticatedRequest, access: ProjectAccess, judge_id: int
) -> HttpResponse:
    judge = get_object_or_404(access.project.judges, pk=judge_id)
    return _versions_page(request, access, judge, form=None)


@require_POST
@project_view(MANAGERS)
def judge_version_new(
    request: AuthenticatedRequest, access: ProjectAccess, judge_id: int
) -> HttpResponse:
    judge = get_object_or_404(access.project.judges, pk=judge_id)
    form = VersionForm(request.POST, cases=_cases(judge))
    if form.is_valid():
        data = form.cleaned_data
        by_hand = data["picked"] == JudgeVersion.Picked.BY_HAND
        try:
            version = judge_version_create(
                actor=request.user,
                judge=judge,
                record_ids=data["records"] if by_hand else None,
                count=data["count"],
                note=data["note"],
            )
        except DomainError as error:
            form.add_error(None, error.message)
        else:
            messages.success(request, f"Version {version.number} made: evaluate it.")
            return redirect("alignment:judge_versions", access.project.slug, judge.pk)
    return _versions_page(request, access, judge, form=form)


@require_POST
@project_view(MANAGERS)
def judge_version_use(
    request: AuthenticatedRequest, access: ProjectAccess, judge_id: int, number: int
) -> HttpResponse:
    judge = get_object_or_404(access.project.judges, pk=judge_id)
    judge_version_activate(actor=request.user, judge=judge, version=_version(judge, number))
    messages.success(request, f"Runs of {judge.name} start with version {number} from now.")
    return redirect("alignment:judge_versions", access.project.slug, judge.pk)


@require_POST
@project_view(MANAGERS)
def judge_version_evaluate(
    request: AuthenticatedRequest, access: ProjectAccess, judge_id: int, number: int
) -> HttpResponse:
    """Evaluate version `number` against the one chosen (by default the active one)."""
    judge = get_object_or_404(access.project.judges, pk=judge_id)
    candidate = _version(judge, number)
    active = judge.active_version.number if judge.active_version else 1
    try:
        baseline = _version(judge, int(request.POST.get("baseline") or active))
        if candidate is None:
            raise DomainError(
                "Version 1 is the prompt as written: evaluate a later one against it."
            )
        evaluation = judge_evaluation_start(
            actor=request.user, candidate=candidate, baseline=baseline
        )
    except (DomainError, ValueError, Http404) as error:
        messages.error(request, getattr(error, "message", "No such version to compare with."))
        return redirect("alignment:judge_versions", access.project.slug, judge.pk)
    return redirect("alignment:judge_evaluation", access.project.slug, judge.pk, evaluation.pk)


@require_GET
# The same URL answers htmx's polls with the comparison alone: caches must keep them apart.
@vary_on_headers("HX-Request")
@project_view(RECORD_READERS)
def judge_evaluation(
    request: AuthenticatedRequest, access: ProjectAccess, judge_id: int, evaluation_id: int
) -> HttpResponse:
    judge = get_object_or_404(access.project.judges, pk=judge_id)
    evaluation = get_object_or_404(
        judge.evaluations.select_related("baseline", "candidate", "baseline_run", "candidate_run"),
        pk=evaluation_id,
    )
    runs = [evaluation.baseline_run, evaluation.candidate_run]
    finished = all(is_finished(run) for run in runs)
    context = {
        "project": access.project,
        "access": access,
        "judge": judge,
        "evaluation": evaluation,
        "runs": [(run, run_progress(run)) for run in runs],
        "finished": finished,
        "comparison": selectors.comparison(evaluation),
    }
    if request.htmx and not request.htmx.history_restore_request:
        response = render(request, "alignment/evaluation.html#comparison", context)
        return HttpResponseStopPolling(response.content) if finished else response
    return render(request, "alignment/evaluation.html", context)


def _version(judge: Judge, number: int) -> JudgeVersion | None:
    """Version `number` of the judge; None for version 1 (the prompt as written)."""
    if number == 1:
        return None
    return get_object_or_404(judge.versions, number=number)


def _cases(judge: Judge) -> list[selectors.Settled]:
    needs_task = protocol_for(judge_snapshot(judge)).needs_task
    return selectors.settled_cases(judge.project, needs_task=needs_task)[:OFFERED_CASES]


def _versions_page(
    request: AuthenticatedRequest, access: ProjectAccess, judge: Judge, form: VersionForm | None
) -> HttpResponse:
    history = selectors.version_history(judge)
    chart = charts.bar_chart(
        "F1 of each finished run, oldest first (bars: versions)",
        [
            (
                f"v{point.version} · {point.run.created_at:%Y-%m-%d %H:%M}",
                point.quality.scores["f1"].value,
            )
            for point in history
        ],
        maximum=1,
        number_format="{:.2f}",
        intervals=[point.quality.scores["f1"].interval for point in history],
        # The chart has four colours: versions take them in turn.
        series=[(point.version - 1) % 4 for point in history],
        legend=[
            ((n - 1) % 4, f"version {n}") for n in sorted({point.version for point in history})
        ],
    )
    context = {
        "project": access.project,
        "access": access,
        "judge": judge,
        "active": judge.active_version.number if judge.active_version else 1,
        "versions": judge.versions.select_related("created_by"),
        "evaluations": judge.evaluations.select_related("baseline", "candidate")[:20],
        "history": history,
        "chart": chart,
        "form": form or (VersionForm(cases=_cases(judge)) if access.is_manager else None),
    }
    return render(request, "alignment/versions.html", context)
