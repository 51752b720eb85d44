"""The human consensus: the one rule that turns a record's labels into its consensus label.

Defined here once (`consensus_codes`), and everything that needs it (disagreement detection,
judge quality, agreement, final labels for releases, the record list's filters) goes through
it: in arrays for whole projects, for one record (`consensus_of`), and in SQL
(`consensus_condition`). Labels are read as compact arrays (`label_rows`, `ratings`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.db.models import Case, Count, F, Q
from django.db.models.functions import Coalesce
from django.db.models.lookups import Exact, GreaterThan

from annotation.models import Annotation
from curation.arrays import InArray, code_of, int_matrix
from curation.choices import ConsensusRule, ScoreScale
from curation.models import Project
from stats import metrics

# The 0-3 scales, in the order of LabelRows.scores' columns.
SCALES: tuple[str, ...] = tuple(ScoreScale.values)
SAFETY_SCALE, HELPFULNESS_SCALE = (
    SCALES.index(ScoreScale.SAFETY),
    SCALES.index(ScoreScale.HELPFULNESS),
)


CODE_LABELS: dict[int, str] = {code: label for label, code in metrics.VERDICT_CODES.items()}


# Why a record has no consensus (at most 40 characters: a release keeps it for each record).
NO_LABELS = "no labels"


TOO_FEW_LABELS = "fewer than k labels"


# Keyed by the rule as text, as a project stores it and callers pass it.
NO_CONSENSUS: dict[str, str] = {
    ConsensusRule.MAJORITY: "no strict majority for safe or unsafe",
    ConsensusRule.UNANIMITY: "labels not all safe or all unsafe",
}


def ratings(project: Project, scale: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every label on a scale as (record ids, annotator ids, codes): the verdicts' codes for
    "verdict", the 0-3 scores for "safety" and "helpfulness" (where given)."""
    annotations = Annotation.objects.filter(project=project)
    value: Case | F
    if scale == "verdict":
        value = code_of("verdict", metrics.VERDICT_CODES, metrics.MISSING)
    else:
        value = F(f"{scale}_score")
        annotations = annotations.filter(**{f"{scale}_score__isnull": False})
    m = int_matrix(annotations.order_by().values_list("record_id", "annotator_id", value), 3)
    return m[:, 0], m[:, 1], m[:, 2]


@dataclass(frozen=True)
class LabelRows:
    """Submitted annotations, one element per label: record, annotator, verdict code, scores."""

    record: np.ndarray
    annotator: np.ndarray
    verdict: np.ndarray
    # (n, 2): the safety and helpfulness scores, MISSING where not given.
    scores: np.ndarray


def label_rows(project_id: int, record_ids: list[int] | None = None) -> LabelRows:
    annotations = Annotation.objects.filter(project_id=project_id)
    if record_ids is not None:
        annotations = annotations.filter(InArray(F("record_id"), record_ids))
    rows = annotations.order_by().values_list(
        "record_id",
        "annotator_id",
        code_of("verdict", metrics.VERDICT_CODES, metrics.MISSING),
        Coalesce("safety_score", metrics.MISSING),
        Coalesce("helpfulness_score", metrics.MISSING),
    )
    m = int_matrix(rows, 5)
    return LabelRows(record=m[:, 0], annotator=m[:, 1], verdict=m[:, 2], scores=m[:, 3:5])


def consensus_codes(
    counts: np.ndarray, overlap: int, *, rule: str, scale: str = "verdict"
) -> np.ndarray:
    """The human consensus per record from its label counts (n, categories), by the project's
    rule: the label a strict majority of its submitted annotations give, or that all of them
    give, once at least `overlap` (k) exist; "unsure" counts as a vote but never wins. MISSING
    where there is none. On a 0-3 scale, the score, likewise."""
    abstain = metrics.UNSURE if scale == "verdict" else None
    agree = metrics.unanimous if rule == ConsensusRule.UNANIMITY else metrics.majority
    return agree(counts, minimum=overlap, abstain=abstain)


def consensus_of(verdicts: list[str], overlap: int, *, rule: str) -> tuple[str, str]:
    """One record's consensus from its labels' verdicts: (label, "") or ("", why there is none,
    in the words that pages and releases use)."""
    if not verdicts:
        return "", NO_LABELS
    if len(verdicts) < overlap:
        return "", TOO_FEW_LABELS
    counts = np.array([[verdicts.count(label) for label in metrics.VERDICT_CODES]])
    code = int(consensus_codes(counts, overlap, rule=rule)[0])
    if code == metrics.MISSING:
        return "", NO_CONSENSUS[rule]
    return CODE_LABELS[code], ""


def consensus_condition(project: Project, label: str) -> Q:
    """The records whose consensus is `label` ("safe", "unsafe", or "" for none) by the
    project's rule, as a filter on the vote counts each record keeps (`annotation_count`,
    `safe_votes`, `unsafe_votes`): `consensus_codes` in SQL, so that the record list filters
    100,000 records without counting their labels (tests/judging/test_record_list_filters.py
    checks the two agree)."""
    if not label:
        return ~(consensus_condition(project, "safe") | consensus_condition(project, "unsafe"))
    votes, labels = F(f"{label}_votes"), F("annotation_count")
    enough = Q(annotation_count__gte=max(project.overlap, 1))
    if project.consensus_rule == ConsensusRule.UNANIMITY:
        return enough & Q(Exact(votes, labels))
    return enough & Q(GreaterThan(votes * 2, labels))


def consensus_arrays(
    project: Project, record_ids: list[int] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The labelled records' ids (sorted) and their consensus codes (MISSING for none)."""
    annotations = Annotation.objects.filter(project=project)
    if record_ids is not None:
        annotations = annotations.filter(InArray(F("record_id"), record_ids))
    votes = {label: Count("id", filter=Q(verdict=label)) for label in metrics.VERDICT_CODES}
    rows = annotations.order_by().values("record_id").annotate(**votes)
    m = int_matrix(rows.values_list("record_id", *votes), 1 + len(votes))
    order = np.argsort(m[:, 0])
    return m[order, 0], consensus_codes(m[order, 1:], project.overlap, rule=project.consensus_rule)


def human_consensus(project: Project, record_ids: list[int] | None = None) -> dict[int, str]:
    """{record id: "safe" | "unsafe"} for the records that have a human consensus."""
    records, codes = consensus_arrays(project, record_ids)
    return {
        record: CODE_LABELS[code]
        for record, code in zip(records.tolist(), codes.tolist(), strict=True)
        if code != metrics.MISSING
    }
