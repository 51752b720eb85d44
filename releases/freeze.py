"""What goes into a release, decided once at creation and copied into its own rows.

Each record of the project gets a ReleaseRecord: in the release with its final label, or left out
with the reason. Later labels, adjudications and runs never change a release, because its files
are built from these copies (and from the records' source text, which imports never change).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import batched
from statistics import fmean
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import numpy as np
import orjson
from django.db import connection
from django.db.models import F

from annotation.consensus import SCALES, consensus_of
from annotation.models import Annotation
from annotation.selectors import open_places
from authoring.models import Task, TaskRevision
from curation.choices import SafetyLabel
from curation.models import Project, Record
from judging.models import JudgeRun, Verdict
from judging.selectors import quality_runs
from releases.card_source_models import source_models_summary
from releases.models import LabelBasis, Release, ReleaseRecord, ReleaseTask
from releases.scores import release_sources

if TYPE_CHECKING:
    from django.db.models import Field
from reports.agreement import Scale, agreement_report
from review.models import Adjudication, ScoreAdjudication
from stats import metrics

# Why a record is left out of a release.
NO_GOLD_LABEL = "no gold label"
IN_ANNOTATION = "still being annotated"
NO_SCORE = "no score from the chosen sources"
# Where an included record's label comes from.
ADJUDICATED = "adjudicated"
CONSENSUS = "consensus"
GOLD = "gold"
SCORED = "scores"

# A judge's answer -> its column in the confusion table.
ANSWER_COLUMNS = {"safe": metrics.SAFE, "unsafe": metrics.UNSAFE}
ROWS_PER_INSERT = 5000
# Bootstrap resamples for the agreement intervals that the dataset card prints.
CARD_RESAMPLES = 500


@dataclass
class _Labels:
    """A record's submitted annotations, in the order they were made."""

    verdicts: list[str] = field(default_factory=list)
    risk_descriptions: list[str] = field(default_factory=list)
    safety: list[int] = field(default_factory=list)
    helpfulness: list[int] = field(default_factory=list)
    anonymous: list[dict[str, Any]] = field(default_factory=list)


def release_freeze(release: Release) -> dict[str, Any]:
    """Write the release's records and tasks; return the summary of what went in.

    The records, their labels, verdicts and judges' scores are read as parallel streams in
    record order and merged, so that memory stays flat whatever the size of the project.
    """
    project = release.project
    adjudicated = _latest_adjudications(project)
    streams = _RecordStreams(release)
    # {category: {label: records, "records": all}} of the records in the release, counted as
    # they go in (a release of scores alone has records but no labels).
    by_category: dict[str, dict[str, int]] = defaultdict(
        lambda: dict.fromkeys([*SafetyLabel.values, "records"], 0)
    )
    labels: dict[str, int] = defaultdict(int)
    scored = dict.fromkeys(SCALES, 0)
    excluded: dict[str, int] = defaultdict(int)
    places = open_places(project)
    in_annotation = 0
    for chunk in batched(_records(project), ROWS_PER_INSERT):
        rows = [_release_record(release, record, streams, adjudicated, places) for record in chunk]
        _insert_records(rows)
        for row, record in zip(rows, chunk, strict=True):
            if row.included:
                by_category[row.category]["records"] += 1
                if row.label:
                    by_category[row.category][row.label] += 1
                    labels[row.label] += 1
                scored["safety"] += row.safety_score is not None
                scored["helpfulness"] += row.helpfulness_score is not None
                in_annotation += record[-1] < places
            else:
                excluded[row.label_source] += 1
    return {
        "records": sum(counts["records"] for counts in by_category.values()),
        "labels": {label: count for label, count in sorted(labels.items()) if count},
        # Records with a score of each scale, from the release's source of that scale.
        "scored": scored,
        "excluded": dict(sorted(excluded.items())),
        # Records in the release that annotators may still be handed: publishing the release
        # would show them its labels and verdicts before they give their own.
        "in_annotation": in_annotation,
        "tasks": _freeze_tasks(release),
        "by_category": [{"category": name, **by_category[name]} for name in sorted(by_category)],
        "agreement": _agreement(project),
        "judges": _judge_quality(release),
        "source_models": source_models_summary(release),
    }


class ReleasePreview(NamedTuple):
    """What a release made now with these choices would hold: its records, and how many are
    left out for each reason."""

    records: int
    excluded: dict[str, int]


def release_preview(release: Release) -> ReleasePreview:
    """What release_freeze would put in an unsaved release, counted without writing a row."""
    streams = _RecordStreams(release)
    adjudicated = _latest_adjudications(release.project)
    places = open_places(release.project)
    records = 0
    excluded: dict[str, int] = defaultdict(int)
    for record in _records(release.project):
        row = _release_record(release, record, streams, adjudicated, places)
        if row.included:
            records += 1
        else:
            excluded[row.label_source] += 1
    return ReleasePreview(records, dict(sorted(excluded.items())))


def _records(project: Project) -> Iterator[tuple]:
    return (
        Record.objects.filter(project=project)
        .order_by("id")
        .values_list(
            "id",
            "category__name",
            "scenario__name",
            "gold_label",
            "gold_risk_description",
            # Measured against k: a record asked for extra labels is in annotation until it
            # has them.
            F("annotation_count") - F("extra_labels"),
        )
        .iterator(chunk_size=ROWS_PER_INSERT)
    )


class _ByRecord:
    """Rows of a stream ordered by record id (their first value), taken record by record."""

    def __init__(self, rows: Iterator[tuple]) -> None:
        self.rows = rows
        self.head = next(self.rows, None)

    def take(self, record_id: int) -> list[tuple]:
        taken = []
        while self.head is not None and self.head[0] <= record_id:
            if self.head[0] == record_id:
                taken.append(self.head)
            self.head = next(self.rows, None)
        return taken


class _RecordStreams:
    """Each record's labels, verdicts and judges' scores, as the records go by in id order."""

    def __init__(self, release: Release) -> None:
        project = release.project
        self.labels = _ByRecord(_annotation_rows(project))
        self.verdicts = _ByRecord(
            _verdict_rows(project) if release.options.get("verdicts") else iter(())
        )
        self.sources = release_sources(release.options)
        # Whether what the release publishes comes from the annotators at all: a release of
        # runs' scores alone publishes nothing they are still giving, so records they have not
        # finished are not "still being annotated" for it.
        self.published_from_people = release.label_basis != LabelBasis.SCORES or any(
            source.get("source") != "run" for source in self.sources.values()
        )
        self.run_scores = _ByRecord(_run_score_rows(self.sources))
        self.settled_scores = _ByRecord(_settled_score_rows(release.project))
        # Annotators are numbered annotator_1..n in the order they first appear.
        self.names: dict[int, str] = {}
        self.with_annotators = bool(release.options.get("annotator_labels"))

    def labels_of(self, record_id: int) -> _Labels:
        mine = _Labels()
        for _, annotator_id, verdict, description, safety, helpfulness in self.labels.take(
            record_id
        ):
            mine.verdicts.append(verdict)
            mine.risk_descriptions.append(description if verdict == SafetyLabel.UNSAFE else "")
            if safety is not None:
                mine.safety.append(safety)
            if helpfulness is not None:
                mine.helpfulness.append(helpfulness)
            if self.with_annotators:
                name = self.names.setdefault(annotator_id, f"annotator_{len(self.names) + 1}")
                mine.anonymous.append(
                    {
                        "annotator": name,
                        "verdict": verdict,
                        "safety_score": safety,
                        "helpfulness_score": helpfulness,
                    }
                )
        return mine

    def verdicts_of(self, record_id: int) -> list[dict[str, Any]]:
        return [
            {"run": run, "label": label, "score": score, "parse_status": status}
            for _, run, label, score, status in self.verdicts.take(record_id)
        ]

    def scores_of(self, record_id: int, labels: _Labels) -> dict[str, float | None]:
        """The record's score on each scale from that scale's source: the chosen run's score
        (a run scores a record once), or the final human score: a reviewer's settled score,
        else the mean of the annotators' scores."""
        by_run = {scale: score for _, scale, score in self.run_scores.take(record_id)}
        # Oldest first: a scale's latest settled score overwrites the earlier ones.
        settled = {scale: float(score) for _, scale, score in self.settled_scores.take(record_id)}
        people = {"safety": labels.safety, "helpfulness": labels.helpfulness}
        return {
            scale: by_run.get(scale)
            if self.sources[scale].get("source") == "run"
            else settled.get(scale, _mean(people[scale]))
            for scale in SCALES
        }


def _annotation_rows(project: Project) -> Iterator[tuple]:
    rows = (
        Annotation.objects.filter(project=project)
        .order_by("record_id", "created_at", "id")
        .values_list(
            "record_id",
            "annotator_id",
            "verdict",
            "risk_description",
            "safety_score",
            "helpfulness_score",
        )
    )
    return rows.iterator(chunk_size=ROWS_PER_INSERT)


def _settled_score_rows(project: Project) -> Iterator[tuple]:
    """(record id, scale, score) of the reviewers' settled scores, oldest first by record."""
    rows = (
        ScoreAdjudication.objects.filter(project=project)
        .order_by("record_id", "created_at", "id")
        .values_list("record_id", "scale", "score")
    )
    return rows.iterator(chunk_size=ROWS_PER_INSERT)


def _latest_adjudications(project: Project) -> dict[int, tuple[str, str]]:
    rows = Adjudication.objects.filter(project=project).order_by("record_id", "created_at", "id")
    # Oldest first, so that a record's latest adjudication overwrites the others.
    return {
        record_id: (label, description)
        for record_id, label, description in rows.values_list(
            "record_id", "label", "risk_description"
        )
    }


def _finished_runs(project: Project) -> list[tuple[int, str]]:
    runs = JudgeRun.objects.filter(project=project, state=JudgeRun.State.SUCCEEDED)
    return list(runs.order_by("created_at", "id").values_list("id", "name"))


def _verdict_rows(project: Project) -> Iterator[tuple]:
    runs = dict(_finished_runs(project))
    rows = (
        Verdict.objects.filter(run_id__in=runs)
        .order_by("record_id", "run_id")
        .values_list("record_id", "run_id", "label", "score", "parse_status")
    )
    return (
        (record_id, runs[run_id], label, score, status)
        for record_id, run_id, label, score, status in rows.iterator(chunk_size=ROWS_PER_INSERT)
    )


def _run_score_rows(sources: dict[str, dict[str, Any]]) -> Iterator[tuple]:
    """(record id, scale, score) of the valid scores of the runs chosen as score sources."""
    scale_of_run = {
        source["run_id"]: scale
        for scale, source in sources.items()
        if source.get("source") == "run"
    }
    rows = (
        Verdict.objects.filter(
            run_id__in=scale_of_run, parse_status=Verdict.Parse.VALID, score__isnull=False
        )
        .order_by("record_id", "run_id")
        .values_list("record_id", "run_id", "score")
    )
    return (
        (record_id, scale_of_run[run_id], score)
        for record_id, run_id, score in rows.iterator(chunk_size=ROWS_PER_INSERT)
    )


class FrozenRecord(NamedTuple):
    """A ReleaseRecord row, as plain values: cheaper to make by the hundred thousand."""

    release_id: int
    record_id: int
    included: bool
    label: str
    label_source: str
    risk_description: str
    category: str
    scenario: str
    # As the model takes them; COPY is given them as JSON text (_insert_records).
    annotator_labels: list[dict[str, Any]] | str
    verdicts: list[dict[str, Any]] | str
    safety_score: float | None
    helpfulness_score: float | None


def _release_record(
    release: Release,
    record: tuple,
    streams: _RecordStreams,
    adjudicated: dict[int, tuple[str, str]],
    places: int,
) -> FrozenRecord:
    record_id, category, scenario, gold_label, gold_description, labels_against_k = record
    mine = streams.labels_of(record_id)
    scores = streams.scores_of(record_id, mine)
    if (
        release.options.get("leave_out_in_annotation")
        and labels_against_k < places
        and streams.published_from_people
    ):
        label, source, description = "", IN_ANNOTATION, ""
    elif release.label_basis == LabelBasis.SCORES:
        scored = any(score is not None for score in scores.values())
        label, source, description = "", SCORED if scored else NO_SCORE, ""
    elif release.label_basis == LabelBasis.GOLD:
        label, source, description = _gold(gold_label, gold_description)
    else:
        label, source, description = _final(mine, adjudicated.get(record_id), release.project)
    return FrozenRecord(
        release_id=release.pk,
        record_id=record_id,
        included=bool(label) or source == SCORED,
        label=label,
        label_source=source,
        risk_description=description,
        category=category,
        scenario=scenario,
        annotator_labels=mine.anonymous,
        verdicts=streams.verdicts_of(record_id),
        safety_score=scores["safety"],
        helpfulness_score=scores["helpfulness"],
    )


def _insert_records(rows: list[FrozenRecord]) -> None:
    """Insert a chunk of rows: with COPY on PostgreSQL, which is several times faster than an
    INSERT for rows this wide; with bulk_create elsewhere (the embedded SQLite)."""
    if connection.vendor != "postgresql":
        ReleaseRecord.objects.bulk_create(ReleaseRecord(**row._asdict()) for row in rows)
        return
    fields = FrozenRecord._fields
    # Each of FrozenRecord's fields is a concrete field of ReleaseRecord (a foreign key by its
    # attname), stored in a column: the stubs allow for a reverse relation and for no column.
    columns = ", ".join(
        cast(str, cast("Field[Any, Any]", ReleaseRecord._meta.get_field(name)).column)
        for name in fields
    )
    statement = f"COPY {ReleaseRecord._meta.db_table} ({columns}) FROM STDIN"
    with connection.cursor() as cursor, cursor.copy(statement) as copy:
        for row in rows:
            copy.write_row(
                row._replace(
                    annotator_labels=orjson.dumps(row.annotator_labels).decode(),
                    verdicts=orjson.dumps(row.verdicts).decode(),
                )
            )


def _gold(gold_label: str, gold_description: str) -> tuple[str, str, str]:
    if not gold_label:
        return "", NO_GOLD_LABEL, ""
    return gold_label, GOLD, gold_description


def _final(
    labels: _Labels, adjudication: tuple[str, str] | None, project: Project
) -> tuple[str, str, str]:
    """(label, source, risk description), or ("", why it is left out, ""): the final label
    that every page and report gives the record, by the project's consensus rule."""
    if adjudication is not None:
        return adjudication[0], ADJUDICATED, adjudication[1]
    label, missing = consensus_of(labels.verdicts, project.overlap, rule=project.consensus_rule)
    if not label:
        return "", missing, ""
    # The first risk description among the labels that agree with the consensus.
    descriptions = (
        d for v, d in zip(labels.verdicts, labels.risk_descriptions, strict=True) if v == label
    )
    return label, CONSENSUS, next((d for d in descriptions if d), "")


def _mean(scores: list[int]) -> float | None:
    return round(fmean(scores), 4) if scores else None


def _freeze_tasks(release: Release) -> int:
    """The approved tasks, each as its latest revision (the one that was approved), copied in
    one statement."""
    table, task, revision = (model._meta.db_table for model in (ReleaseTask, Task, TaskRevision))
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {table} (release_id, task_id, revision_id)
            SELECT %s, task.id, MAX(revision.id)
            FROM {task} task JOIN {revision} revision ON revision.task_id = task.id
            WHERE task.project_id = %s AND task.state = %s
            GROUP BY task.id
            """,  # noqa: S608 (table names from the models; values as parameters)
            [release.pk, release.project_id, Task.State.APPROVED],
        )
        return cursor.rowcount


def _agreement(project: Project) -> dict[str, Any]:
    """Agreement of the annotators on verdicts, as the card prints it (NaN as None)."""
    report = agreement_report(project, scale=Scale.VERDICT, resamples=CARD_RESAMPLES)

    def number(value: float) -> float | None:
        return round(float(value), 4) if np.isfinite(value) else None

    return {
        "records": report.items,
        "annotators": report.annotators,
        "statistics": {
            name: {
                "value": number(estimate.value),
                "low": number(estimate.low),
                "high": number(estimate.high),
            }
            for name, estimate in report.overall.items()
        },
    }


def _judge_quality(release: Release) -> list[dict[str, Any]]:
    """Each finished labelling run against the release's own labels (an invalid output or an
    error counts as a wrong answer, as in R-Judge)."""
    labelled = release.records.filter(included=True).exclude(label="")
    label_of = dict(labelled.values_list("record_id", "label").iterator())
    runs = quality_runs(release.project).filter(state=JudgeRun.State.SUCCEEDED)
    judges = []
    for run_id, name in runs.order_by("created_at", "id").values_list("id", "name"):
        rows = Verdict.objects.filter(run_id=run_id).values_list(
            "record_id", "label", "parse_status"
        )
        table = np.zeros((2, 3), dtype=np.int64)
        for record_id, label, status in rows.iterator(chunk_size=ROWS_PER_INSERT):
            reference = label_of.get(record_id)
            if reference is None:
                continue
            valid = status == Verdict.Parse.VALID and label in ANSWER_COLUMNS
            table[
                metrics.VERDICT_CODES[reference],
                ANSWER_COLUMNS[label] if valid else metrics.INVALID,
            ] += 1
        if table.sum():
            scores = metrics.judge_scores(table)
            judges.append(
                {
                    "run": name,
                    "records": int(table.sum()),
                    **{key: _rounded(value) for key, value in scores.items()},
                }
            )
    return judges


def _rounded(value: np.ndarray) -> float | None:
    number = float(value)
    return round(number, 4) if np.isfinite(number) else None
