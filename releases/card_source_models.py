"""The dataset card's source models: each evaluator's view of the release's records (mean
safety and helpfulness per source model, the Pareto frontier), frozen into the summary at
creation by the selector the project's page reads, and printed from there."""

from __future__ import annotations

from typing import Any

import numpy as np

from releases.models import Release
from reports.score_sources import chosen_sources
from reports.source_models import source_model_view, source_pairs
from stats.metrics import Estimate, interval_text


def source_models_summary(release: Release) -> list[dict[str, Any]]:
    """Per pair of score sources with scores on the release's records: their names and each
    source model's figures (NaN as None)."""
    project = release.project
    included = list(
        release.records.filter(included=True).values_list("record_id", flat=True).iterator()
    )
    views = []
    for safety, helpfulness in source_pairs(project):
        chosen = chosen_sources(
            project,
            {"safety": ("safety", safety), "helpfulness": ("helpfulness", helpfulness)},
            people=False,
        )
        view = source_model_view(
            project,
            safety=chosen["safety"],
            helpfulness=chosen["helpfulness"],
            record_ids=included,
        )
        if view.models:
            views.append(
                {
                    "safety": view.safety.name,
                    "helpfulness": view.helpfulness.name,
                    "models": [
                        {
                            "model": model.name,
                            "safety_n": model.safety_n,
                            "helpfulness_n": model.helpfulness_n,
                            "safety": _estimate(model.safety),
                            "helpfulness": _estimate(model.helpfulness),
                            "pareto": model.pareto,
                        }
                        for model in view.models
                    ],
                }
            )
    return views


def _estimate(estimate: Estimate) -> dict[str, float | None]:
    return {
        name: round(value, 4) if np.isfinite(value) else None
        for name, value in (
            ("value", estimate.value),
            ("low", estimate.low),
            ("high", estimate.high),
        )
    }


def source_models_lines(views: list[dict[str, Any]]) -> list[str]:
    """The card's section, from the summary's views; none for a release without scores."""
    if not views:
        return []
    lines = [
        "## Source models: safety and helpfulness",
        "",
        "Mean 0-3 scores of each agent (model) that made the release's records, by one pair of "
        "score sources at a time (never averaged across sources), with bootstrap 95% "
        "intervals. A model on the Pareto frontier (*) has no other model at least as safe and "
        "as helpful, and better at one.",
        "",
    ]
    for view in views:
        lines += [
            f"Safety scores from {_cell(view['safety'])}, helpfulness scores from "
            f"{_cell(view['helpfulness'])}.",
            "",
            "| Source model | Records | Mean safety | Mean helpfulness | Frontier |",
            "|---|---:|---|---|---|",
        ]
        for model in view["models"]:
            lines.append(
                f"| {_cell(model['model'])} | {max(model['safety_n'], model['helpfulness_n'])} | "
                f"{_with_interval(model['safety'])} | {_with_interval(model['helpfulness'])} | "
                f"{'*' if model['pareto'] else ''} |"
            )
        lines.append("")
    return lines


def _with_interval(estimate: dict[str, float | None]) -> str:
    if estimate["value"] is None:
        return "n/a"
    interval = interval_text(estimate["low"], estimate["high"])
    return f"{estimate['value']:.2f} ({interval})" if interval else f"{estimate['value']:.2f}"


def _cell(text: str) -> str:
    # Names come from imported files: nothing in them may break the table.
    return text.replace("|", "\\|").replace("\n", " ")
