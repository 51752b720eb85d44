"""Agreement between annotators: chance-corrected statistics over a project's labels, on the
verdict or on a 0-3 score, overall, per pair of annotators, and each against the consensus.

Computed on demand from one query of compact arrays; the statistics are in `stats.metrics`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from django.db import models

from annotation.consensus import consensus_codes, ratings
from curation.models import Project
from curation.selectors import usernames
from stats import metrics
from stats.metrics import Estimate


class Scale(models.TextChoices):
    """What people's agreement is measured on."""

    VERDICT = "verdict", "Verdicts (safe / unsafe / unsure)"
    SAFETY = "safety", "Safety scores (0-3)"
    HELPFULNESS = "helpfulness", "Helpfulness scores (0-3)"


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
    record_ids, annotator_ids, codes = ratings(project, scale)
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

    names_of = usernames(people.tolist())
    names = [names_of[pk] for pk in people.tolist()]
    consensus = consensus_codes(counts, project.overlap, rule=project.consensus_rule, scale=scale)
    overall = metrics.bootstrap(frequency, statistics, resamples=resamples)
    pairs = _pairs(item, person, codes, names, categories, resamples)
    if len(people) == 2 and pairs:
        # Two annotators: the percent agreement of all the labels is their pair's, over the
        # same records. Resampled as patterns of labels it would get an interval of its own
        # beside the pair's on the same page; it is the pair's estimate, computed once.
        overall["percent"] = pairs[0].agreement
    return AgreementReport(
        scale=scale,
        items=int((counts.sum(axis=1) >= 2).sum()),
        annotators=len(people),
        overall=overall,
        pairs=pairs,
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
