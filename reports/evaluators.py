"""Two score sources compared on the records both scored on one 0-3 scale: how often they give
the same score, chance-corrected agreement, rank correlation, means and the mean distance,
overall and per case, toolkit and source model, with bootstrap 95% intervals.

Every statistic is a function of the two sources' 4 x 4 table of scores (metrics.py), so the
bootstrap resamples records by resampling that table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from curation.models import Project
from reports.score_sources import RecordGroups, ScoreSource, chosen_sources, first_two, scores_of
from stats import metrics
from stats.metrics import Estimate

SCORES = metrics.SCORE_CATEGORIES
# The statistics in page order, with their names.
STATISTICS: dict[str, str] = {
    "exact": "Exact agreement",
    "kappa": "Cohen's kappa (quadratic weights)",
    "alpha": "Krippendorff's alpha (ordinal)",
    "spearman": "Spearman's rho",
    "mean_first": "Mean score of the first",
    "mean_second": "Mean score of the second",
    "mae": "Mean absolute error",
}
# The breakdowns, in page order: (key, heading).
DIMENSIONS: tuple[tuple[str, str], ...] = (
    ("case", "Case"),
    ("toolkit", "Toolkit"),
    ("source", "Source model"),
)


@dataclass(frozen=True)
class Comparison:
    """The two sources on some records: how many, their table of scores, the statistics."""

    name: str
    n: int
    # table[i, j]: records the first scored i and the second j.
    table: np.ndarray
    statistics: dict[str, Estimate]


@dataclass(frozen=True)
class EvaluatorReport:
    scale: str
    first: ScoreSource
    second: ScoreSource
    overall: Comparison
    # Dimension key -> a Comparison per group that has records scored by both.
    groups: dict[str, list[Comparison]]


def compared_sources(
    project: Project, scale: str, first: str = "", second: str = ""
) -> tuple[ScoreSource, ScoreSource]:
    """The two sources to compare, by their keys (the first two offered where not given);
    UnknownSource names a key that the project does not offer on the scale."""
    default_first, default_second = first_two(project, scale)
    chosen = chosen_sources(
        project,
        {"first": (scale, first or default_first), "second": (scale, second or default_second)},
    )
    return chosen["first"], chosen["second"]


def evaluator_report(
    project: Project,
    *,
    scale: str,
    first: ScoreSource,
    second: ScoreSource,
    resamples: int = metrics.DEFAULT_RESAMPLES,
) -> EvaluatorReport:
    first_ids, first_scores = scores_of(project, first.key, scale)
    second_ids, second_scores = scores_of(project, second.key, scale)
    both, at_first, at_second = np.intersect1d(first_ids, second_ids, return_indices=True)
    a, b = first_scores[at_first], second_scores[at_second]
    records = RecordGroups.load(project)
    index, _ = records.at(both)
    case_tables = _tables(records.case[index], a, b, len(records.cases))
    toolkits = _toolkits(records)
    # membership[c, t]: whether case c uses toolkit t; a record counts in each of its case's.
    membership = np.array(
        [[name in records.toolkits.get(case, ()) for name in toolkits] for case in records.cases],
        dtype=np.int64,
    ).reshape(len(records.cases), len(toolkits))
    groups = {
        "case": _comparisons(records.cases, case_tables, resamples),
        "toolkit": _comparisons(
            toolkits, np.einsum("ct,cij->tij", membership, case_tables), resamples
        ),
        "source": _comparisons(
            records.agents, _tables(records.agent[index], a, b, len(records.agents)), resamples
        ),
    }
    overall = _comparison("All records", metrics.contingency(a, b, SCORES, SCORES), resamples)
    return EvaluatorReport(scale, first, second, overall, groups)


def _toolkits(records: RecordGroups) -> list[str]:
    return sorted({name for case in records.cases for name in records.toolkits.get(case, ())})


def _tables(groups: np.ndarray, a: np.ndarray, b: np.ndarray, size: int) -> np.ndarray:
    """One 4 x 4 table of scores per group code."""
    keys = (groups * SCORES + a) * SCORES + b
    return np.bincount(keys, minlength=size * SCORES * SCORES).reshape(size, SCORES, SCORES)


def _comparisons(names: list[str], tables: np.ndarray, resamples: int) -> list[Comparison]:
    chosen = [(name, table) for name, table in zip(names, tables, strict=True) if table.sum()]
    return [_comparison(name, table, resamples) for name, table in sorted(chosen, key=_natural)]


def _natural(item: tuple[str, np.ndarray]) -> list[object]:
    """Names in the order people count: official_2 before official_10."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", item[0])]


def _comparison(name: str, table: np.ndarray, resamples: int) -> Comparison:
    statistics = metrics.bootstrap(table, metrics.score_agreement, resamples=resamples)
    return Comparison(name=name, n=int(table.sum()), table=table, statistics=statistics)
