"""Reads of judging: verdicts as compact arrays, a run's protocol and scale, its top errors,
the runs that give labels or scores, and what the judges cost."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

import numpy as np
from django.db.models import (
    Case,
    Count,
    DateField,
    DecimalField,
    F,
    IntegerField,
    Q,
    QuerySet,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Coalesce, TruncWeek
from django.utils import timezone

from annotation.consensus import HELPFULNESS_SCALE, SAFETY_SCALE, SCALES
from curation.arrays import InArray, int_matrix
from curation.models import Project
from judging.models import SCORE_PROTOCOLS, JudgeRun, Protocol, Verdict, name_shared
from stats import metrics


@dataclass(frozen=True)
class VerdictRows:
    """Verdicts, one element per run and record: the label code (SAFE, UNSAFE, or INVALID for
    an invalid output, an error, or a score) and the score (MISSING for labels)."""

    record: np.ndarray
    run: np.ndarray
    label: np.ndarray
    score: np.ndarray


def verdict_rows(
    *, record_ids: list[int] | None = None, run_ids: list[int] | None = None
) -> VerdictRows:
    """The verdicts on these records, or of these runs, or both (ids of one project)."""
    verdicts = Verdict.objects.all()
    if record_ids is not None:
        verdicts = verdicts.filter(InArray(F("record_id"), record_ids))
    if run_ids is not None:
        verdicts = verdicts.filter(run_id__in=run_ids)
    label = Case(
        When(parse_status=Verdict.Parse.VALID, label="safe", then=Value(metrics.SAFE)),
        When(parse_status=Verdict.Parse.VALID, label="unsafe", then=Value(metrics.UNSAFE)),
        default=Value(metrics.INVALID),
        output_field=IntegerField(),
    )
    score = Case(
        When(parse_status=Verdict.Parse.VALID, score__isnull=False, then="score"),
        default=Value(metrics.MISSING),
        output_field=IntegerField(),
    )
    rows = verdicts.order_by().values_list("record_id", "run_id", label, score)
    m = int_matrix(rows, 4)
    return VerdictRows(record=m[:, 0], run=m[:, 1], label=m[:, 2], score=m[:, 3])


def run_score_scale(protocol: str) -> int:
    """Which 0-3 scale a run's scores are on: helpfulness for ToolEmu's helpfulness evaluator,
    safety for every other protocol that scores."""
    return HELPFULNESS_SCALE if protocol == Protocol.TOOLEMU_HELPFULNESS else SAFETY_SCALE


def run_protocol(run: JudgeRun) -> str:
    """The protocol a run judged with, as the run recorded it at its start."""
    protocol = (run.judge_snapshot or {}).get("protocol")
    if not protocol and run.judge is not None:
        protocol = run.judge.protocol
    return protocol or ""


# The error texts a run shows, most frequent first.
TOP_ERRORS = 5


def run_top_errors(run_id: int, limit: int = TOP_ERRORS) -> list[tuple[str, int]]:
    """The run's most frequent error texts, with how many records each: the client's fixed
    descriptions repeat, so a few lines say why a run went wrong."""
    rows = (
        Verdict.objects.filter(run_id=run_id, parse_status=Verdict.Parse.ERROR)
        .order_by()
        .values_list("error")
        .annotate(n=Count("id"))
        .order_by("-n", "error")
    )
    return list(rows[:limit])


@dataclass(frozen=True)
class ScoreRun:
    """A finished run that gave 0-3 scores: a source of scores that a release may publish."""

    id: int
    # As pages name it (`JudgeRun.display_name`).
    name: str
    # "safety" or "helpfulness": the scale its scores are on.
    scale: str
    # The model that scored and, for imported evaluator files, the metric they name.
    model: str
    metric: str
    scored: int


def score_runs(project: Project) -> list[ScoreRun]:
    """The project's finished runs with at least one valid 0-3 score, oldest first, whatever
    their protocol or how they were made (judged here, imported, or combined)."""
    scored = dict(
        Verdict.objects.filter(
            run__project=project,
            run__state=JudgeRun.State.SUCCEEDED,
            parse_status=Verdict.Parse.VALID,
            score__isnull=False,
        )
        .order_by()
        .values_list("run_id")
        .annotate(n=Count("id"))
    )
    runs = (
        JudgeRun.objects.filter(pk__in=scored)
        .annotate(name_is_shared=name_shared())
        .select_related("judge")
        .order_by("created_at", "id")
    )
    return [
        ScoreRun(
            id=run.pk,
            name=run.display_name,
            scale=SCALES[run_score_scale(run_protocol(run))],
            model=str((run.judge_snapshot or {}).get("model") or ""),
            metric=str((run.judge_snapshot or {}).get("metric") or ""),
            scored=scored[run.pk],
        )
        for run in runs
    ]


@dataclass(frozen=True)
class JudgeCost:
    judge: str
    # The Monday of the week the runs were started in.
    week: date
    cost: Decimal
    runs: int


def judge_costs(project: Project, *, weeks: int = 12) -> list[JudgeCost]:
    """What the project's priced judge runs cost, per judge and per week they were started in,
    over the last `weeks` weeks, oldest first (runs of connections without prices are left
    out: their cost is not known)."""
    money = DecimalField(max_digits=20, decimal_places=6)
    zero = Value(Decimal(0), output_field=money)
    spent = Sum(
        F("tokens_in") * Coalesce("price_in_per_million", zero)
        + F("tokens_out") * Coalesce("price_out_per_million", zero),
        output_field=money,
    )
    rows = (
        JudgeRun.objects.filter(
            project=project,
            source=JudgeRun.Source.JUDGE,
            judge__isnull=False,
            created_at__gte=timezone.now() - timedelta(weeks=weeks),
        )
        .filter(Q(price_in_per_million__isnull=False) | Q(price_out_per_million__isnull=False))
        .annotate(week=TruncWeek("created_at", output_field=DateField()))
        .values("judge__name", "week")
        .annotate(spent=spent, runs=Count("id"))
        .order_by("week", "judge__name")
    )
    return [
        JudgeCost(
            judge=row["judge__name"],
            week=row["week"],
            cost=row["spent"] / 1_000_000,
            runs=row["runs"],
        )
        for row in rows
    ]


def quality_runs(project: Project) -> QuerySet[JudgeRun]:
    """The project's runs that give safety labels (score runs are not compared with labels),
    each knowing whether it shares its name (`JudgeRun.display_name`)."""
    return (
        project.judge_runs.exclude(judge_snapshot__protocol__in=SCORE_PROTOCOLS)
        .annotate(name_is_shared=name_shared())
        .order_by("-created_at")
    )


def runs_named(runs: Iterable[JudgeRun]) -> list[JudgeRun]:
    """The runs, each told in one query for all whether another run of its project shares
    its name, so that naming them (`JudgeRun.display_name`) asks nothing more."""
    runs = list(runs)
    shared = set(
        JudgeRun.objects.filter(
            project_id__in={run.project_id for run in runs}, name__in={run.name for run in runs}
        )
        .order_by()
        .values("project_id", "name")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .values_list("project_id", "name")
    )
    for run in runs:
        run.shares_name = (run.project_id, run.name) in shared
    return runs
