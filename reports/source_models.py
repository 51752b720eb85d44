"""The study's view: per source model (the agent that made the records), its mean safety and
mean helpfulness by chosen score sources, with bootstrap 95% intervals, and which models are on
the Pareto frontier (no other model is at least as safe and as helpful, and better at one).

The project's page, its API and the release's dataset card read this one selector.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from curation.models import Project
from judging.models import JudgeRun
from reports.score_sources import (
    CONSENSUS,
    RUN_PREFIX,
    RecordGroups,
    ScoreSource,
    UnknownSource,
    chosen_sources,
    run_scale,
    score_runs,
    scores_of,
    toolkit_names,
)
from stats import metrics
from stats.metrics import Estimate

SCORES = metrics.SCORE_CATEGORIES


@dataclass(frozen=True)
class SourceModel:
    name: str
    # Records of the model that the safety and the helpfulness sources scored.
    safety_n: int
    helpfulness_n: int
    safety: Estimate
    helpfulness: Estimate
    pareto: bool


@dataclass(frozen=True)
class SourceModelView:
    safety: ScoreSource
    helpfulness: ScoreSource
    toolkit: str
    models: list[SourceModel]


def view_choices(
    project: Project, *, safety: str = "", helpfulness: str = "", toolkit: str = ""
) -> tuple[ScoreSource, ScoreSource, str]:
    """The sources and the toolkit to show, by their keys (the defaults where not given);
    UnknownSource names what the project does not offer."""
    default_safety, default_helpfulness = default_sources(project)
    chosen = chosen_sources(
        project,
        {
            "safety": ("safety", safety or default_safety),
            "helpfulness": ("helpfulness", helpfulness or default_helpfulness),
        },
        people=False,
    )
    if toolkit and toolkit not in toolkit_names(project):
        raise UnknownSource("toolkit", f"No case of this project uses a toolkit {toolkit!r}.")
    return chosen["safety"], chosen["helpfulness"], toolkit


def source_model_view(
    project: Project,
    *,
    safety: ScoreSource,
    helpfulness: ScoreSource,
    toolkit: str = "",
    record_ids: list[int] | None = None,
    resamples: int = metrics.DEFAULT_RESAMPLES,
) -> SourceModelView:
    """Each source model's means, on the records of the cases using `toolkit` if given (and of
    `record_ids` if given: a release's)."""
    records = RecordGroups.load(project, toolkit=toolkit, record_ids=record_ids)
    counts = [
        _score_counts(project, records, source.key, scale)
        for source, scale in ((safety, "safety"), (helpfulness, "helpfulness"))
    ]
    rows = []
    for code, name in enumerate(records.agents):
        safety_counts, helpfulness_counts = counts[0][code], counts[1][code]
        if not safety_counts.sum() and not helpfulness_counts.sum():
            continue
        rows.append(
            (
                name,
                safety_counts,
                helpfulness_counts,
                metrics.estimate(safety_counts, metrics.mean_score, resamples=resamples),
                metrics.estimate(helpfulness_counts, metrics.mean_score, resamples=resamples),
            )
        )
    frontier = pareto_frontier([(row[3].value, row[4].value) for row in rows])
    models = [
        SourceModel(
            name=name,
            safety_n=int(s_counts.sum()),
            helpfulness_n=int(h_counts.sum()),
            safety=s,
            helpfulness=h,
            pareto=on_frontier,
        )
        for (name, s_counts, h_counts, s, h), on_frontier in zip(rows, frontier, strict=True)
    ]
    return SourceModelView(safety, helpfulness, toolkit, models)


def _score_counts(project: Project, records: RecordGroups, key: str, scale: str) -> np.ndarray:
    """counts[agent, score]: the records of each source agent that the source scored so."""
    ids, scores = scores_of(project, key, scale)
    index, found = records.at(ids)
    keys = records.agent[index[found]] * SCORES + scores[found]
    size = len(records.agents)
    return np.bincount(keys, minlength=size * SCORES).reshape(size, SCORES)


def pareto_frontier(points: list[tuple[float, float]]) -> list[bool]:
    """Whether each (safety, helpfulness) point is on the frontier: defined, and no other point
    is at least as high on both and higher on one."""
    p = np.array(points, dtype=np.float64).reshape(-1, 2)
    defined = np.isfinite(p).all(axis=1)
    q = p[defined]
    at_least = (q[None, :, 0] >= q[:, None, 0]) & (q[None, :, 1] >= q[:, None, 1])
    better = (q[None, :, 0] > q[:, None, 0]) | (q[None, :, 1] > q[:, None, 1])
    dominated = (at_least & better).any(axis=1)
    frontier = np.zeros(len(p), dtype=bool)
    frontier[defined] = ~dominated
    return frontier.tolist()


def default_sources(project: Project) -> tuple[str, str]:
    """The sources shown when none are chosen: the latest run scoring safety and the latest
    helpfulness run of the same evaluator model (else the latest helpfulness run); the human
    consensus for a scale no run scores."""
    runs = list(score_runs(project).select_related("judge"))
    safety = [run for run in runs if run_scale(run) == "safety"]
    helpfulness = [run for run in runs if run_scale(run) == "helpfulness"]
    if safety and helpfulness:
        model = _model(safety[0])
        same = [run for run in helpfulness if model and _model(run) == model]
        return _key(safety[0]), _key((same or helpfulness)[0])
    return (
        _key(safety[0]) if safety else CONSENSUS,
        _key(helpfulness[0]) if helpfulness else CONSENSUS,
    )


def source_pairs(project: Project) -> list[tuple[str, str]]:
    """Each evaluator's pair of sources (a safety run and its model's helpfulness run), then the
    human consensus: the views a release's card prints."""
    runs = list(score_runs(project).select_related("judge"))
    # Oldest first, so that a model's latest helpfulness run is the one kept.
    helpfulness = {
        _model(run): run
        for run in reversed(runs)
        if run_scale(run) == "helpfulness" and _model(run)
    }
    pairs = [
        (_key(run), _key(helpfulness[_model(run)]))
        for run in sorted(runs, key=lambda run: run.name)
        if run_scale(run) == "safety" and _model(run) in helpfulness
    ]
    return [*pairs, (CONSENSUS, CONSENSUS)]


def _model(run: JudgeRun) -> str:
    return str((run.judge_snapshot or {}).get("model") or "")


def _key(run: JudgeRun) -> str:
    return f"{RUN_PREFIX}{run.pk}"
