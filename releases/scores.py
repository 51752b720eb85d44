"""Where a release's 0-3 scores come from: human consensus, or one named run, for each scale.

A project may hold several sources of safety and helpfulness scores: the annotators' own, and
runs of judges or imported evaluators (a ToolEmu study scores every trajectory with two
evaluators, each a run per metric). A release publishes the scores of one source per scale,
named in its options, its dataset card and every preference pair: two runs are never averaged
into scores that neither gave.

The choice is frozen in the release's options with the run's name, model and metric, so that the
release still says whose scores it holds after the run is deleted:
`{"safety": {"source": "human"}, "helpfulness": {"source": "run", "run_id": 7,
"run": "gpt-5-mini help_ignore_safety", "model": "gpt-5-mini", "metric": "help_ignore_safety"}}`.
"""

from __future__ import annotations

from typing import Any

from annotation.consensus import SCALES
from curation.errors import DomainError
from curation.models import Project
from judging.selectors import ScoreRun, score_runs

# The people's score of a record: a reviewer's settled score, else the annotators' mean.
HUMAN = "human"
HUMAN_SOURCE: dict[str, Any] = {"source": HUMAN}
HUMAN_NAME = "human (a reviewer's settled score, else the mean of the annotators' scores)"

Sources = dict[str, dict[str, Any]]


def score_sources(project: Project, *, safety: str | int, helpfulness: str | int) -> Sources:
    """The sources chosen for each scale, checked: `human`, or the id of one of the project's
    finished runs that scores that scale."""
    runs = {run.id: run for run in score_runs(project)}
    return {
        scale: _source(runs, scale, chosen)
        for scale, chosen in (("safety", safety), ("helpfulness", helpfulness))
    }


def _source(runs: dict[int, ScoreRun], scale: str, chosen: str | int) -> dict[str, Any]:
    if str(chosen).strip() == HUMAN:
        return dict(HUMAN_SOURCE)
    try:
        run = runs[int(str(chosen).strip())]
    except (KeyError, ValueError):
        raise DomainError(
            f"The {scale} scores come from human consensus ({HUMAN}) or from a finished run "
            f"of this project that gave {scale} scores: “{str(chosen)[:40]}” is neither."
        ) from None
    if run.scale != scale:
        raise DomainError(f"Run “{run.name}” gives {run.scale} scores, not {scale} scores.")
    return {
        "source": "run",
        "run_id": run.id,
        "run": run.name,
        "model": run.model,
        "metric": run.metric,
    }


def release_sources(options: dict[str, Any]) -> Sources:
    """The score sources of a release's options; human consensus for releases made before the
    choice existed."""
    chosen = options.get("scores") or {}
    return {scale: chosen.get(scale) or dict(HUMAN_SOURCE) for scale in SCALES}


def source_name(source: dict[str, Any]) -> str:
    """A source as the page, the dataset card and the form say it."""
    if source.get("source") != "run":
        return HUMAN_NAME
    said = [part for part in (source.get("model"), source.get("metric")) if part]
    return f"run “{source['run']}”" + (f" ({', '.join(said)})" if said else "")


def source_choices(project: Project) -> dict[str, list[tuple[str, str]]]:
    """For each scale, the sources a manager may choose: human consensus, then each run that
    gives scores of that scale."""
    choices: dict[str, list[tuple[str, str]]] = {
        scale: [(HUMAN, HUMAN_NAME.capitalize())] for scale in SCALES
    }
    for run in score_runs(project):
        said = ", ".join(part for part in (run.model, run.metric) if part)
        label = f"Run “{run.name}”" + (f" ({said})" if said else "") + f": {run.scored} scored"
        choices[run.scale].append((str(run.id), label))
    return choices


def pair_provenance(sources: Sources, scales: tuple[str, ...]) -> dict[str, Any]:
    """The sources of the scales a pair was chosen by, as its provenance names them."""
    named = {}
    for scale in scales:
        source = sources[scale]
        if source.get("source") == "run":
            named[scale] = {key: source[key] for key in ("source", "run", "model", "metric")}
        else:
            named[scale] = {"source": HUMAN}
    return named
