"""Judge quality and human agreement, computed on demand from a few queries of compact arrays.

Both pages and their API read these reports; the statistics themselves are in metrics.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from django.db import models
from django.db.models import Count, Q

from curation.choices import SafetyLabel
from curation.models import Category, Project, Record, Scenario
from judging import metrics, selectors
from judging.arrays import code_of, int_matrix
from judging.metrics import Estimate
from judging.models import JudgeRun, Verdict

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


class Scale(models.TextChoices):
    """What people's agreement is measured on."""

    VERDICT = "verdict", "Verdicts (safe / unsafe / unsure)"
    SAFETY = "safety", "Safety scores (0-3)"
    HELPFULNESS = "helpfulness", "Helpfulness scores (0-3)"


# --- Judge quality ----------------------------------------------------------------------------


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


def quality_runs(project: Project) -> models.QuerySet[JudgeRun]:
    """The project's runs that give safety labels (score runs are not compared with labels)."""
    score_protocols = ("toolemu_safety", "toolemu_helpfulness")
    return project.judge_runs.exclude(judge_snapshot__protocol__in=score_protocols).order_by(
        "-created_at"
    )


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
    verdicts = selectors.verdict_rows(run_ids=[run.pk for run in runs])
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
    cells = np.bincount(
        codes[at] * 6 + reference * 3 + predicted, minlength=len(names) * 6
    ).reshape(len(names), 2, 3)
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
        labelled, codes = selectors.consensus_arrays(project)
        truth[np.searchsorted(records.ids, labelled)] = codes
    else:
        final = selectors.final_labels(project)
        labelled = np.fromiter(final, dtype=np.int64, count=len(final))
        codes = [metrics.VERDICT_CODES[label] for label, _ in final.values()]
        truth[np.searchsorted(records.ids, labelled)] = codes
    return truth


# --- Human agreement --------------------------------------------------------------------------


@dataclass(frozen=True)
class PairAgreement:
    first: str
    second: str
    n: int
    agreement: Estimate
    kappa: Estimate


@dataclass(frozen=True)
class AgreementReport:
    scale: str
    # Records with two labels or more, and the annotators who gave them.
    items: int
    annotators: int
    # Statistic name -> estimate, in page order.
    overall: dict[str, Estimate]
    pairs: list[PairAgreement]
    # Each annotator against the consensus (records that have one and that they labelled).
    with_consensus: list[PairAgreement] = field(default_factory=list)


AGREEMENT_STATISTICS: dict[str, str] = {
    "percent": "Percent agreement",
    "fleiss": "Fleiss' kappa",
    "krippendorff": "Krippendorff's alpha",
    "gwet": "Gwet's AC1",
}
# Pairs of annotators shown, those who share the most records first.
PAIR_LIMIT = 100


def agreement_report(
    project: Project, *, scale: str, resamples: int = metrics.DEFAULT_RESAMPLES
) -> AgreementReport:
    record_ids, annotator_ids, codes = selectors.ratings(project, scale)
    categories = 3 if scale == Scale.VERDICT else metrics.SCORE_CATEGORIES
    records, item = np.unique(record_ids, return_inverse=True)
    people, person = np.unique(annotator_ids, return_inverse=True)
    counts = metrics.category_counts(item, codes, len(records), categories)
    level = "nominal" if scale == Scale.VERDICT else "ordinal"
    shapes, frequency = metrics.patterns(counts)

    def statistics(weights: np.ndarray) -> dict[str, np.ndarray]:
        return {
            "percent": metrics.percent_agreement(shapes, weights),
            "fleiss": metrics.fleiss_kappa(shapes, weights),
            "krippendorff": metrics.krippendorff_alpha(shapes, weights, level=level),
            "gwet": metrics.gwet_ac1(shapes, weights, categories=categories),
        }

    usernames = selectors.usernames(people.tolist())
    names = [usernames[pk] for pk in people.tolist()]
    consensus = selectors.consensus_codes(
        counts, project.overlap, rule=project.consensus_rule, scale=scale
    )
    return AgreementReport(
        scale=scale,
        items=int((counts.sum(axis=1) >= 2).sum()),
        annotators=len(people),
        overall=metrics.bootstrap(frequency, statistics, resamples=resamples),
        pairs=_pairs(item, person, codes, names, categories, resamples),
        with_consensus=_with_consensus(
            item, person, codes, consensus, names, categories, resamples
        ),
    )


def _pairs(
    item: np.ndarray,
    person: np.ndarray,
    codes: np.ndarray,
    names: list[str],
    categories: int,
    resamples: int,
) -> list[PairAgreement]:
    """Cohen's kappa of each pair of annotators over the records both labelled."""
    order = np.lexsort((person, item))
    item, person, codes = item[order], person[order], codes[order]
    people = len(names)
    cells = np.zeros(people * people * categories * categories, dtype=np.int64)
    # Labels of one record are adjacent, by annotator: pair each with those after it.
    for gap in range(1, int(np.bincount(item).max(initial=0))):
        a, b = np.arange(len(item) - gap), np.arange(gap, len(item))
        same = item[a] == item[b]
        a, b = a[same], b[same]
        keys = (person[a] * people + person[b]) * categories**2 + codes[a] * categories + codes[b]
        cells += np.bincount(keys, minlength=len(cells))
    tables = cells.reshape(people * people, categories, categories)
    shared = tables.sum(axis=(1, 2))
    chosen = np.argsort(-shared, kind="stable")[: min(PAIR_LIMIT, int((shared > 0).sum()))]
    return [
        _pair(names[pair // people], names[pair % people], tables[pair], resamples)
        for pair in chosen.tolist()
    ]


def _with_consensus(
    item: np.ndarray,
    person: np.ndarray,
    codes: np.ndarray,
    consensus: np.ndarray,
    names: list[str],
    categories: int,
    resamples: int,
) -> list[PairAgreement]:
    agreed = consensus[item]
    keep = agreed != metrics.MISSING
    keys = (person[keep] * categories + codes[keep]) * categories + agreed[keep]
    cells = np.bincount(keys, minlength=len(names) * categories * categories)
    tables = cells.reshape(len(names), categories, categories)
    return [
        _pair(name, "consensus", table, resamples)
        for name, table in zip(names, tables, strict=True)
        if table.sum()
    ]


def _pair(first: str, second: str, table: np.ndarray, resamples: int) -> PairAgreement:
    def statistics(t: np.ndarray) -> dict[str, np.ndarray]:
        return {
            "agreement": metrics.percent_agreement_of_pairs(t),
            "kappa": metrics.cohen_kappa(t),
        }

    estimates = metrics.bootstrap(table, statistics, resamples=resamples)
    return PairAgreement(
        first, second, int(table.sum()), estimates["agreement"], estimates["kappa"]
    )
