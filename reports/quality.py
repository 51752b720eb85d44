"""Judge quality: a run's labels against a reference (gold, consensus or final labels), with
R-Judge's metrics overall and by category, scenario and attack type, computed on demand from a
few queries of compact arrays.

The page and its API read this report; the statistics themselves are in `stats.metrics`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from django.db import models
from django.db.models import Count, Q

from annotation.consensus import consensus_arrays
from curation.arrays import code_of, int_matrix
from curation.choices import SafetyLabel
from curation.models import Category, Project, Record, Scenario
from judging.models import JudgeRun, Verdict
from judging.selectors import quality_runs, verdict_rows
from review.selectors import final_labels
from stats import metrics
from stats.metrics import Estimate

# A confusion table's shape: the reference is safe or unsafe, a judge's prediction safe, unsafe
# or invalid (stats.metrics.SAFE, UNSAFE, INVALID).
REFERENCE_LABELS, PREDICTED_LABELS = 2, 3
# Runs compared when none are chosen: the latest ones (of as many candidates).
DEFAULT_RUNS = 2
DEFAULT_CANDIDATES = 20
# The breakdowns of judge quality, in page order: (key, heading).
DIMENSIONS: tuple[tuple[str, str], ...] = (
    ("category", "Category"),
    ("scenario", "Scenario"),
    ("attack_type", "Attack type"),
)


class Reference(models.TextChoices):
    """What a judge's labels are compared with."""

    GOLD = "gold", "The source's gold labels"
    CONSENSUS = "consensus", "Human consensus"
    ADJUDICATED = "adjudicated", "Final labels (adjudicated, else consensus)"


@dataclass(frozen=True)
class Quality:
    """A judge's metrics over some records: how many, the confusion table, the scores."""

    name: str
    n: int
    confusion: np.ndarray
    scores: dict[str, Estimate]


@dataclass(frozen=True)
class Usability:
    """How many of a run's verdicts there are, and how many are invalid or errors."""

    verdicts: int
    unusable: int

    @property
    def flagged(self) -> bool:
        """More than half of the run's answers are invalid or errors: its figures say more
        about the endpoint than about the judge, so comparisons leave it out unless asked."""
        return self.unusable * 2 > self.verdicts


@dataclass(frozen=True)
class RunQuality:
    run: JudgeRun
    overall: Quality
    # Dimension key -> one Quality per group (a category, a scenario, an attack type).
    groups: dict[str, list[Quality]]
    usability: Usability


@dataclass(frozen=True)
class LeftOut:
    """A run asked for but left out of the comparison: mostly invalid or errors."""

    run: JudgeRun
    usability: Usability


@dataclass(frozen=True)
class QualityReport:
    reference: str
    runs: list[RunQuality]
    left_out: list[LeftOut] = field(default_factory=list)

    def side_by_side(self, dimension: str) -> list[tuple[str, list[Quality | None]]]:
        """Rows of (group, the runs' Quality for it), for comparing runs group by group."""
        names = sorted({q.name for run in self.runs for q in run.groups[dimension]})
        by_run = [{q.name: q for q in run.groups[dimension]} for run in self.runs]
        return [(name, [groups.get(name) for groups in by_run]) for name in names]


def run_usability(run_ids: list[int]) -> dict[int, Usability]:
    """Each run's verdicts, and those that gave no safety label (invalid, an error)."""
    answered = Q(parse_status=Verdict.Parse.VALID, label__in=[SafetyLabel.SAFE, SafetyLabel.UNSAFE])
    rows = (
        Verdict.objects.filter(run_id__in=run_ids)
        .order_by()
        .values("run_id")
        .annotate(verdicts=Count("id"), unusable=Count("id", filter=~answered))
    )
    counts = {row["run_id"]: Usability(row["verdicts"], row["unusable"]) for row in rows}
    return {run_id: counts.get(run_id, Usability(0, 0)) for run_id in run_ids}


def default_quality_runs(project: Project, *, include_flagged: bool) -> list[int]:
    """The runs compared when none are chosen: the latest ones, of those not flagged unless
    flagged runs are asked for."""
    latest = list(quality_runs(project).values_list("pk", flat=True)[:DEFAULT_CANDIDATES])
    usability = run_usability(latest)
    kept = [pk for pk in latest if include_flagged or not usability[pk].flagged]
    return kept[:DEFAULT_RUNS]


def quality_report(
    project: Project,
    *,
    run_ids: list[int],
    reference: str,
    include_flagged: bool = False,
    resamples: int = metrics.DEFAULT_RESAMPLES,
) -> QualityReport:
    """The runs' quality against `reference`, over the records that have one and that the
    run judged (an invalid output or an error counts as a wrong answer). Runs whose answers
    are mostly invalid or errors are left out unless `include_flagged`."""
    chosen = list(quality_runs(project).filter(pk__in=run_ids).order_by("created_at", "id"))
    usability = run_usability([run.pk for run in chosen])
    runs = [run for run in chosen if include_flagged or not usability[run.pk].flagged]
    left_out = [LeftOut(run, usability[run.pk]) for run in chosen if run not in runs]
    records = _RecordFacts.load(project)
    truth = _reference_codes(project, records, reference)
    verdicts = verdict_rows(run_ids=[run.pk for run in runs])
    index = np.searchsorted(records.ids, verdicts.record)
    expected = truth[index]
    reports = []
    for run in runs:
        mine = (verdicts.run == run.pk) & (expected != metrics.MISSING)
        ref, predicted, at = expected[mine], verdicts.label[mine], index[mine]
        groups = {
            key: _group_quality(records.groups[key], at, ref, predicted, resamples)
            for key, _ in DIMENSIONS
        }
        overall = _quality("All records", metrics.judge_confusion(ref, predicted), resamples)
        reports.append(
            RunQuality(run=run, overall=overall, groups=groups, usability=usability[run.pk])
        )
    return QualityReport(reference=reference, runs=reports, left_out=left_out)


def _quality(name: str, table: np.ndarray, resamples: int) -> Quality:
    scores = metrics.bootstrap(table, metrics.judge_scores, resamples=resamples)
    return Quality(name=name, n=int(table.sum()), confusion=table, scores=scores)


def _group_quality(
    grouping: tuple[np.ndarray, list[str]],
    at: np.ndarray,
    reference: np.ndarray,
    predicted: np.ndarray,
    resamples: int,
) -> list[Quality]:
    codes, names = grouping
    # One confusion table per group, counted in one pass: each record's (group, reference,
    # prediction) is numbered as a cell of a (groups, 2, 3) array, the reference being safe or
    # unsafe (2) and the prediction safe, unsafe or invalid (3), so that a group's table is its
    # 2 x 3 = 6 consecutive cells.
    cells_per_group = REFERENCE_LABELS * PREDICTED_LABELS
    cell = codes[at] * cells_per_group + reference * PREDICTED_LABELS + predicted
    cells = np.bincount(cell, minlength=len(names) * cells_per_group).reshape(
        len(names), REFERENCE_LABELS, PREDICTED_LABELS
    )
    return [
        _quality(name, table, resamples)
        for name, table in zip(names, cells, strict=True)
        if table.sum()
    ]


@dataclass(frozen=True)
class _RecordFacts:
    """The project's records in id order, with their gold label and group codes."""

    ids: np.ndarray
    gold: np.ndarray
    # Dimension key -> (a group code per record, the groups' names).
    groups: dict[str, tuple[np.ndarray, list[str]]]

    @classmethod
    def load(cls, project: Project) -> _RecordFacts:
        records = Record.objects.filter(project=project)
        attack_types = list(
            records.order_by("attack_type").values_list("attack_type", flat=True).distinct()
        )
        codes = int_matrix(
            records.order_by("id").values_list(
                "id",
                code_of("gold_label", metrics.VERDICT_CODES, metrics.MISSING),
                "category_id",
                "scenario_id",
                code_of("attack_type", {a: i for i, a in enumerate(attack_types)}, 0),
            ),
            5,
        )
        category_names = dict(Category.objects.filter(project=project).values_list("id", "name"))
        scenario_names = {
            s.pk: f"{s.category.name} / {s.name}" if s.name else s.category.name
            for s in Scenario.objects.filter(category__project=project).select_related("category")
        }
        attack_names = {i: attack or "none" for i, attack in enumerate(attack_types)}
        return cls(
            ids=codes[:, 0],
            gold=codes[:, 1],
            groups={
                "category": _codes(codes[:, 2], category_names),
                "scenario": _codes(codes[:, 3], scenario_names),
                "attack_type": _codes(codes[:, 4], attack_names),
            },
        )


def _codes(values: np.ndarray, names: dict[int, str]) -> tuple[np.ndarray, list[str]]:
    """A group code per record (0, 1, ...), and the groups' names."""
    distinct, codes = np.unique(values, return_inverse=True)
    return codes.astype(np.int64), [names[value] for value in distinct.tolist()]


def _reference_codes(project: Project, records: _RecordFacts, reference: str) -> np.ndarray:
    """The reference label's code for each record (MISSING where it has none)."""
    if reference == Reference.GOLD:
        return records.gold
    truth = np.full(len(records.ids), metrics.MISSING, dtype=np.int64)
    if reference == Reference.CONSENSUS:
        labelled, codes = consensus_arrays(project)
        truth[np.searchsorted(records.ids, labelled)] = codes
    else:
        final = final_labels(project)
        labelled = np.fromiter(final, dtype=np.int64, count=len(final))
        final_codes = [metrics.VERDICT_CODES[label] for label, _ in final.values()]
        truth[np.searchsorted(records.ids, labelled)] = final_codes
    return truth
