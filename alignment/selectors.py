"""Reads for aligning judges with the cases reviewers settled: which settled cases there are,
which to quote as worked examples, which to evaluate on, and how two versions compare.

A settled case is a record with an adjudication: its latest one gives the final label and the
reviewer's reason. The writes (making a version, starting an evaluation) are in
`alignment/services.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from django.db.models import Count, Max

from curation.models import Record
from judging.models import Judge, JudgeEvaluation, JudgeRun
from judging.protocols.fencing import interaction_text
from judging.selectors import verdict_rows
from judging.services.run_engine import case_of
from reports.quality import Quality, quality_report
from review.models import Adjudication, Disagreement
from review.selectors import final_labels
from stats import metrics

if TYPE_CHECKING:
    from curation.models import Project

# Worked examples a version quotes when none are chosen, and at most.
DEFAULT_EXAMPLES = 4
MAX_EXAMPLES = 12
# Records listed on the comparison page under each "right where the other is wrong".
LISTED = 100


@dataclass(frozen=True)
class Settled:
    """A settled case: its record, the final label and reason, and how contested it was."""

    record_id: int
    external_id: str
    category_id: int
    category: str
    label: str
    reason: str
    # The most opinions in any one of its disagreements, and how many kinds it had.
    weight: int
    kinds: int


def settled_cases(project: Project, *, needs_task: bool = False) -> list[Settled]:
    """The project's settled cases, most contested first: the most opinions in one of its
    disagreements, then the most kinds of disagreement, then the lowest record id (so that a
    pick is the same every time)."""
    latest: dict[int, tuple[str, str]] = {}
    # Oldest first, so that a record's latest adjudication overwrites its earlier ones.
    for record_id, label, reason in (
        Adjudication.objects.filter(project=project)
        .order_by("record_id", "created_at", "id")
        .values_list("record_id", "label", "reason")
    ):
        latest[record_id] = (label, reason)
    contest = {
        row["record_id"]: (row["weight"], row["kinds"])
        for row in Disagreement.objects.filter(project=project, record_id__in=latest)
        .order_by()
        .values("record_id")
        .annotate(weight=Max("weight"), kinds=Count("id"))
    }
    records = Record.objects.filter(project=project, pk__in=latest)
    if needs_task:
        records = records.filter(task_link__task__isnull=False)
    cases = [
        Settled(
            record_id=pk,
            external_id=external_id,
            category_id=category_id,
            category=category,
            label=latest[pk][0],
            reason=latest[pk][1],
            weight=contest.get(pk, (0, 0))[0],
            kinds=contest.get(pk, (0, 0))[1],
        )
        for pk, external_id, category_id, category in records.values_list(
            "pk", "external_id", "category_id", "category__name"
        )
    ]
    return sorted(cases, key=lambda case: (-case.weight, -case.kinds, case.record_id))


def most_contested(cases: list[Settled], count: int) -> list[Settled]:
    """Up to `count` cases, one per category: each category's most contested case, the
    categories in the order of those cases (`cases` come most contested first)."""
    picked: dict[int, Settled] = {}
    for case in cases:
        if len(picked) == count:
            break
        picked.setdefault(case.category_id, case)
    return list(picked.values())


def example_of(record: Record, label: str, reason: str) -> dict[str, Any]:
    """A settled case as a version keeps it: the record's text as a judge would see it."""
    case = case_of(record)
    return {
        "record_id": record.pk,
        "external_id": case.external_id,
        "category": case.category,
        "scenario": case.scenario,
        "profile": case.profile,
        "goal": case.goal,
        "interaction": interaction_text(case.turns),
        "label": label,
        "reason": reason,
    }


def held_out(cases: list[Settled], *quoted: list[int]) -> list[int]:
    """The settled records, in id order, that none of the `quoted` example lists holds."""
    left_out = {record_id for examples in quoted for record_id in examples}
    return sorted(case.record_id for case in cases if case.record_id not in left_out)


@dataclass(frozen=True)
class Difference:
    """A record one version gets right and the other wrong."""

    record_id: int
    external_id: str
    final: str
    baseline: str
    candidate: str


@dataclass(frozen=True)
class Comparison:
    """Two versions over the held-out records both runs have judged so far."""

    n: int
    baseline: Quality
    candidate: Quality
    # Records the candidate gets right and the baseline wrong, and the other way round; and
    # how many of each there are (the lists stop at LISTED).
    candidate_better: list[Difference]
    baseline_better: list[Difference]
    candidate_better_count: int
    baseline_better_count: int


ANSWERS = {metrics.SAFE: "safe", metrics.UNSAFE: "unsafe", metrics.INVALID: "no answer"}


def comparison(
    evaluation: JudgeEvaluation, *, resamples: int = metrics.DEFAULT_RESAMPLES
) -> Comparison:
    """Each version's F1, recall, specificity and validity (with bootstrap intervals) against
    the final labels, over the records both runs judged (an invalid answer or an error counts
    as wrong), and the records each gets right that the other gets wrong."""
    project = evaluation.judge.project
    runs = [evaluation.baseline_run_id, evaluation.candidate_run_id]
    verdicts = verdict_rows(record_ids=evaluation.record_ids, run_ids=runs)
    answers: list[dict[int, int]] = [{}, {}]
    for record, run, label in zip(
        verdicts.record.tolist(), verdicts.run.tolist(), verdicts.label.tolist(), strict=True
    ):
        answers[runs.index(run)][record] = label
    final = final_labels(project, evaluation.record_ids)
    both = sorted(set(answers[0]) & set(answers[1]) & set(final))
    truth = np.array([metrics.VERDICT_CODES[final[r][0]] for r in both], dtype=np.int64)
    said = [np.array([mine[r] for r in both], dtype=np.int64) for mine in answers]
    names = [evaluation.baseline_run.display_name, evaluation.candidate_run.display_name]
    qualities = [_quality(names[i], truth, said[i], resamples) for i in range(2)]
    right = [said[i] == truth for i in range(2)]
    better = [np.flatnonzero(right[1] & ~right[0]), np.flatnonzero(right[0] & ~right[1])]
    external_ids = dict(
        Record.objects.filter(pk__in=[both[i] for rows in better for i in rows[:LISTED]])
        .order_by()
        .values_list("pk", "external_id")
    )

    def differences(rows: np.ndarray) -> list[Difference]:
        return [
            Difference(
                record_id=both[i],
                external_id=external_ids[both[i]],
                final=final[both[i]][0],
                baseline=ANSWERS[int(said[0][i])],
                candidate=ANSWERS[int(said[1][i])],
            )
            for i in rows[:LISTED].tolist()
        ]

    return Comparison(
        n=len(both),
        baseline=qualities[0],
        candidate=qualities[1],
        candidate_better=differences(better[0]),
        baseline_better=differences(better[1]),
        candidate_better_count=len(better[0]),
        baseline_better_count=len(better[1]),
    )


def _quality(name: str, truth: np.ndarray, said: np.ndarray, resamples: int) -> Quality:
    table = metrics.judge_confusion(truth, said)
    scores = metrics.bootstrap(table, metrics.judge_scores, resamples=resamples)
    return Quality(name=name, n=int(table.sum()), confusion=table, scores=scores)


@dataclass(frozen=True)
class VersionPoint:
    """One finished run of a judge: when, with which version, and its quality."""

    run: JudgeRun
    version: int
    quality: Quality


# Runs a judge's page charts, the latest ones.
CHARTED_RUNS = 20


def version_history(judge: Judge, *, resamples: int = 200) -> list[VersionPoint]:
    """The judge's latest finished runs, oldest first, each with the version it ran and its
    quality against the final labels (adjudicated, else consensus) of the records it judged."""
    run_ids = list(
        judge.runs.filter(state=JudgeRun.State.SUCCEEDED)
        .order_by("-created_at")
        .values_list("pk", flat=True)[:CHARTED_RUNS]
    )
    report = quality_report(
        judge.project,
        run_ids=run_ids,
        reference="adjudicated",
        include_flagged=True,
        resamples=resamples,
    )
    return [
        VersionPoint(
            run=row.run,
            version=(row.run.judge_snapshot.get("version") or {}).get("number", 1),
            quality=row.overall,
        )
        for row in report.runs
        if row.overall.n
    ]
