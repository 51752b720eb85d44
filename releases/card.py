"""The dataset card (README.md) of a release, in the form the Hugging Face Hub reads.

Everything it prints comes from the frozen release (its summary, computed at creation, and its
records), never from the project as it is now, so that a rebuild prints the same card.
"""

from __future__ import annotations

from typing import Any

from releases.card_header import card_header, usage_lines
from releases.card_source_models import source_models_lines
from releases.changes import LISTED, release_changes
from releases.models import Release
from releases.scores import release_sources, source_name
from stats.metrics import interval_text

STATISTIC_NAMES = {
    "percent": "Percent agreement",
    "fleiss": "Fleiss' kappa",
    "krippendorff": "Krippendorff's alpha (nominal)",
    "gwet": "Gwet's AC1",
}


def dataset_card(release: Release, files: list[str]) -> str:
    summary = release.summary
    project = release.project
    lines = [
        "---",
        *card_header(release, files, f"{project.name} {release.version}"),
        "---",
        "",
        f"# {project.name} {release.version}",
        "",
    ]
    if project.description:
        lines += [project.description, ""]
    if release.notes:
        lines += ["## Release notes", "", release.notes, ""]
    lines += [
        "## License",
        "",
        release.license,
        "",
        "## Contents",
        "",
        f"- Created on {release.created_at:%Y-%m-%d}.",
        f"- Labels: {release.get_label_basis_display().lower()}.",
        f"- {summary['records']} records, {summary['tasks']} approved tasks.",
        "- Files: " + ", ".join(f"`{name}`" for name in files) + " (sizes and SHA-256 in "
        "`manifest.json`).",
        "",
        *usage_lines(release, files),
        *_counts(summary),
        *_scores(release),
        *_excluded(summary),
        *_agreement(summary.get("agreement") or {}),
        *_judges(summary.get("judges") or []),
        *source_models_lines(summary.get("source_models") or []),
        *_changelog(release),
    ]
    return "\n".join(lines).rstrip() + "\n"


def _counts(summary: dict[str, Any]) -> list[str]:
    lines = ["## Records by category and label", "", "| Category | Safe | Unsafe | All |"]
    lines.append("|---|---:|---:|---:|")
    for row in summary["by_category"]:
        # "records" counts those without a label too (a release of scores alone).
        records = row.get("records", row["safe"] + row["unsafe"])
        lines.append(f"| {_cell(row['category'])} | {row['safe']} | {row['unsafe']} | {records} |")
    labels = summary["labels"]
    lines.append(
        f"| **All** | {labels.get('safe', 0)} | {labels.get('unsafe', 0)} | {summary['records']} |"
    )
    return [*lines, ""]


def _scores(release: Release) -> list[str]:
    """Where the records' 0-3 scores come from, one source per scale, never an average of
    several runs."""
    scored = release.summary.get("scored") or {}
    sources = release_sources(release.options)
    if not any(scored.values()) and all(s.get("source") != "run" for s in sources.values()):
        # Nothing scored and nothing chosen: a release of safe/unsafe labels alone.
        return []
    lines = ["## Scores", ""]
    for scale, source in sources.items():
        lines.append(
            f"- {scale.capitalize()} scores (0-3) from {_cell(source_name(source))}: "
            f"{scored.get(scale, 0)} records."
        )
    return [*lines, ""]


def _excluded(summary: dict[str, Any]) -> list[str]:
    if not summary["excluded"]:
        return []
    lines = ["## Records left out", ""]
    lines += [f"- {reason}: {count}" for reason, count in summary["excluded"].items()]
    return [*lines, ""]


def _agreement(agreement: dict[str, Any]) -> list[str]:
    if not agreement.get("records"):
        return []
    lines = [
        "## Agreement between annotators",
        "",
        f"Verdicts of {agreement['annotators']} annotators on {agreement['records']} records "
        "labelled twice or more, with bootstrap 95% intervals.",
        "",
        "| Statistic | Value | 95% interval |",
        "|---|---:|---|",
    ]
    for key, estimate in agreement["statistics"].items():
        interval = interval_text(estimate["low"], estimate["high"], digits=3) or "n/a"
        lines.append(
            f"| {STATISTIC_NAMES.get(key, key)} | {_number(estimate['value'])} | {interval} |"
        )
    return [*lines, ""]


def _judges(judges: list[dict[str, Any]]) -> list[str]:
    compared = [judge for judge in judges if not _mostly_unanswered(judge)]
    flagged = [judge for judge in judges if _mostly_unanswered(judge)]
    lines = []
    if compared:
        lines += [
            "## Judge quality",
            "",
            "LLM judges against this release's labels, unsafe as the positive class; an invalid "
            "output or an error counts as a wrong answer.",
            "",
            *_judge_table(compared),
        ]
    if flagged:
        lines += [
            "## Judge runs left out",
            "",
            "More than half of these runs' answers on this release's records are invalid or "
            "errors (validity under 0.5): their figures tell of a failing endpoint, not of the "
            "judge, and are not compared with the runs above.",
            "",
            *_judge_table(flagged),
        ]
    return lines


def _mostly_unanswered(judge: dict[str, Any]) -> bool:
    return judge["validity"] is not None and judge["validity"] < 0.5


def _judge_table(judges: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| Run | Records | F1 | Recall | Specificity | Validity |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for judge in judges:
        lines.append(
            f"| {_cell(judge['run'])} | {judge['records']} | {_number(judge['f1'])} | "
            f"{_number(judge['recall'])} | {_number(judge['specificity'])} | "
            f"{_number(judge['validity'])} |"
        )
    return [*lines, ""]


def _changelog(release: Release) -> list[str]:
    changes = release_changes(release)
    if changes.previous is None:
        return ["## Changes", "", "The first release.", ""]
    lines = [
        "## Changes",
        "",
        f"Since {changes.previous.version}: {len(changes.added)} records added, "
        f"{len(changes.removed)} removed, {len(changes.relabelled)} relabelled.",
        "",
    ]
    for heading, ids in (("Added", changes.added), ("Removed", changes.removed)):
        if ids:
            lines.append(f"{heading}: " + ", ".join(f"`{_code(i)}`" for i in ids[:LISTED]))
            lines.append("")
    if changes.relabelled:
        lines.append(
            "Relabelled: "
            + ", ".join(
                f"`{_code(i)}` ({before} to {now})"
                for i, before, now in changes.relabelled[:LISTED]
            )
        )
        lines.append("")
    return lines


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _cell(text: str) -> str:
    # Names come from imported records: nothing in them may break the table.
    return text.replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    return text.replace("`", "'")
