"""Reads: labels and verdicts as compact arrays, the human consensus, final labels, the queue.

The human consensus is defined here once (`consensus_codes`), and everything that needs it
(disagreement detection, judge quality, agreement, final labels for releases) goes through it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

import numpy as np
from django.contrib.auth import get_user_model
from django.db.models import (
    Case,
    Count,
    DateField,
    DecimalField,
    Exists,
    F,
    IntegerField,
    Min,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Coalesce, TruncWeek
from django.db.models.lookups import Exact, GreaterThan
from django.utils import timezone

from annotation.models import Annotation
from curation.choices import ConsensusRule
from curation.models import Project, Record
from judging import metrics
from judging.arrays import InArray, code_of, int_matrix
from judging.models import Adjudication, Disagreement, JudgeRun, Protocol, Verdict

# Where a final label comes from.
ADJUDICATED = "adjudicated"
CONSENSUS = "consensus"

# The 0-3 scales, in the order of LabelRows.scores' columns.
SCALES: tuple[str, ...] = ("safety", "helpfulness")
SAFETY_SCALE, HELPFULNESS_SCALE = 0, 1

CODE_LABELS: dict[int, str] = {code: label for label, code in metrics.VERDICT_CODES.items()}
# Why a record has no consensus (at most 40 characters: a release keeps it for each record).
NO_LABELS = "no labels"
TOO_FEW_LABELS = "fewer than k labels"
NO_CONSENSUS = {
    ConsensusRule.MAJORITY: "no strict majority for safe or unsafe",
    ConsensusRule.UNANIMITY: "labels not all safe or all unsafe",
}


def ratings(project: Project, scale: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every label on a scale as (record ids, annotator ids, codes): the verdicts' codes for
    "verdict", the 0-3 scores for "safety" and "helpfulness" (where given)."""
    annotations = Annotation.objects.filter(project=project)
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


@dataclass(frozen=True)
class VerdictRows:
    """Verdicts, one element per run and record: the label code (SAFE, UNSAFE, or INVALID for
    an invalid output, an error, or a score) and the score (MISSING for labels)."""

    record: np.ndarray
    run: np.ndarray
    label: np.ndarray
    score: np.ndarray


def verdict_rows(
    *, record_ids: list[int] | None = None, run_ids: list[int] | None = None
) -> VerdictRows:
    """The verdicts on these records, or of these runs, or both (ids of one project)."""
    verdicts = Verdict.objects.all()
    if record_ids is not None:
        verdicts = verdicts.filter(InArray(F("record_id"), record_ids))
    if run_ids is not None:
        verdicts = verdicts.filter(run_id__in=run_ids)
    label = Case(
        When(parse_status=Verdict.Parse.VALID, label="safe", then=Value(metrics.SAFE)),
        When(parse_status=Verdict.Parse.VALID, label="unsafe", then=Value(metrics.UNSAFE)),
        default=Value(metrics.INVALID),
        output_field=IntegerField(),
    )
    score = Case(
        When(parse_status=Verdict.Parse.VALID, score__isnull=False, then="score"),
        default=Value(metrics.MISSING),
        output_field=IntegerField(),
    )
    rows = verdicts.order_by().values_list("record_id", "run_id", label, score)
    m = int_matrix(rows, 4)
    return VerdictRows(record=m[:, 0], run=m[:, 1], label=m[:, 2], score=m[:, 3])


def run_score_scale(protocol: str) -> int:
    """Which 0-3 scale a run's scores are on: helpfulness for ToolEmu's helpfulness evaluator,
    safety for every other protocol that scores."""
    return HELPFULNESS_SCALE if protocol == Protocol.TOOLEMU_HELPFULNESS else SAFETY_SCALE


def run_protocol(run: JudgeRun) -> str:
    """The protocol a run judged with, as the run recorded it at its start."""
    protocol = (run.judge_snapshot or {}).get("protocol")
    if not protocol and run.judge_id is not None:
        protocol = run.judge.protocol
    return protocol or ""


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


def final_condition(project: Project, label: str) -> Q:
    """The records whose final label is `label` ("safe", "unsafe", or "" for none), as
    `final_labels` decides it: the latest adjudication, else the consensus."""
    adjudications = Adjudication.objects.filter(project=project)
    adjudicated = Q(pk__in=adjudications.values("record_id"))
    if not label:
        return ~adjudicated & consensus_condition(project, "")
    later = adjudications.filter(record=OuterRef("record"), created_at__gt=OuterRef("created_at"))
    latest = adjudications.filter(label=label).exclude(Exists(later))
    by_consensus = ~adjudicated & consensus_condition(project, label)
    return Q(pk__in=latest.values("record_id")) | by_consensus


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


def usernames(ids: list[int]) -> dict[int, str]:
    users = get_user_model()
    return dict(users.objects.filter(pk__in=ids).values_list("pk", users.USERNAME_FIELD))


def latest_adjudications(project: Project, record_ids: list[int] | None = None) -> dict[int, str]:
    """{record id: label} of each record's latest adjudication."""
    adjudications = Adjudication.objects.filter(project=project)
    if record_ids is not None:
        adjudications = adjudications.filter(record_id__in=record_ids)
    # Oldest first, so that the latest one of a record overwrites the others.
    rows = adjudications.order_by("record_id", "created_at", "id").values_list("record_id", "label")
    return dict(rows)


def final_labels(
    project: Project, record_ids: list[int] | None = None
) -> dict[int, tuple[str, str]]:
    """{record id: (label, source)}: the label releases use.

    A record's final label is its latest adjudication ("adjudicated") if a reviewer settled it,
    else its human consensus ("consensus", see `consensus_codes`). Records with neither are left
    out: they have no final label yet.
    """
    labels = {
        record: (label, CONSENSUS) for record, label in human_consensus(project, record_ids).items()
    }
    labels.update(
        (record, (label, ADJUDICATED))
        for record, label in latest_adjudications(project, record_ids).items()
    )
    return labels


def open_disagreement_count(project: Project) -> int:
    """How many disagreements wait for a reviewer (an index-only count)."""
    return Disagreement.objects.filter(project=project, state=Disagreement.State.OPEN).count()


def adjudication_queue(project: Project, *, kind: str = "") -> QuerySet[Record]:
    """Records with open disagreements (of `kind`, if given), most contested first: the sum of
    their open disagreements' weights, then the longest waiting. Each carries its open
    disagreements as `open_disagreements`."""
    open_ = Q(disagreements__state=Disagreement.State.OPEN)
    if kind:
        open_ &= Q(disagreements__kind=kind)
    return (
        Record.objects.filter(project=project)
        .filter(open_)
        .annotate(
            contested=Sum("disagreements__weight", filter=open_),
            waiting_since=Min("disagreements__created_at", filter=open_),
        )
        .select_related("category", "scenario")
        .only("external_id", "gold_label", "category__name", "scenario__name")
        .prefetch_related(
            Prefetch(
                "disagreements",
                queryset=Disagreement.objects.filter(state=Disagreement.State.OPEN),
                to_attr="open_disagreements",
            )
        )
        .order_by("-contested", "waiting_since", "id")
    )


def adjudication_next(project: Project, *, kind: str = "", after: Record) -> int | None:
    """The id of the record to settle after `after`: the queue's first other record."""
    queue = adjudication_queue(project, kind=kind).exclude(pk=after.pk)
    return queue.values_list("pk", flat=True).first()


@dataclass(frozen=True)
class RecordOpinions:
    """Everything said about one record, for the reviewer who settles it."""

    annotations: list[Annotation]
    verdicts: list[Verdict]
    disagreements: list[Disagreement]
    adjudications: list[Adjudication]
    consensus: str | None
    final: tuple[str, str] | None

    @property
    def evidence(self) -> dict[int, list[str]]:
        """Turn number -> the annotators whose labels mark it as evidence."""
        marks: dict[int, list[str]] = {}
        for annotation in self.annotations:
            for number in annotation.evidence_turns:
                marks.setdefault(number, []).append(annotation.annotator.get_username())
        return marks


def record_opinions(record: Record) -> RecordOpinions:
    project = record.project
    return RecordOpinions(
        annotations=list(
            record.annotations.select_related("annotator", "guideline_version")
            .prefetch_related("risk_types")
            .order_by("annotator__username")
        ),
        verdicts=list(record.verdicts.select_related("run").order_by("run__created_at", "run_id")),
        disagreements=list(record.disagreements.order_by("state", "-weight", "kind")),
        adjudications=list(record.adjudications.select_related("reviewer").order_by("-created_at")),
        consensus=human_consensus(project, [record.pk]).get(record.pk),
        final=final_labels(project, [record.pk]).get(record.pk),
    )


# The error texts a run shows, most frequent first.
TOP_ERRORS = 5


def run_top_errors(run_id: int, limit: int = TOP_ERRORS) -> list[tuple[str, int]]:
    """The run's most frequent error texts, with how many records each: the client's fixed
    descriptions repeat, so a few lines say why a run went wrong."""
    rows = (
        Verdict.objects.filter(run_id=run_id, parse_status=Verdict.Parse.ERROR)
        .order_by()
        .values_list("error")
        .annotate(n=Count("id"))
        .order_by("-n", "error")
    )
    return list(rows[:limit])


@dataclass(frozen=True)
class ScoreRun:
    """A finished run that gave 0-3 scores: a source of scores that a release may publish."""

    id: int
    name: str
    # "safety" or "helpfulness": the scale its scores are on.
    scale: str
    # The model that scored and, for imported evaluator files, the metric they name.
    model: str
    metric: str
    scored: int


def score_runs(project: Project) -> list[ScoreRun]:
    """The project's finished runs with at least one valid 0-3 score, oldest first, whatever
    their protocol or how they were made (judged here, imported, or combined)."""
    scored = dict(
        Verdict.objects.filter(
            run__project=project,
            run__state=JudgeRun.State.SUCCEEDED,
            parse_status=Verdict.Parse.VALID,
            score__isnull=False,
        )
        .order_by()
        .values_list("run_id")
        .annotate(n=Count("id"))
    )
    runs = (
        JudgeRun.objects.filter(pk__in=scored).select_related("judge").order_by("created_at", "id")
    )
    return [
        ScoreRun(
            id=run.pk,
            name=run.name,
            scale=SCALES[run_score_scale(run_protocol(run))],
            model=str((run.judge_snapshot or {}).get("model") or ""),
            metric=str((run.judge_snapshot or {}).get("metric") or ""),
            scored=scored[run.pk],
        )
        for run in runs
    ]


@dataclass(frozen=True)
class JudgeCost:
    judge: str
    # The Monday of the week the runs were started in.
    week: date
    cost: Decimal
    runs: int


def judge_costs(project: Project, *, weeks: int = 12) -> list[JudgeCost]:
    """What the project's priced judge runs cost, per judge and per week they were started in,
    over the last `weeks` weeks, oldest first (runs of connections without prices are left
    out: their cost is not known)."""
    money = DecimalField(max_digits=20, decimal_places=6)
    zero = Value(Decimal(0), output_field=money)
    spent = Sum(
        F("tokens_in") * Coalesce("price_in_per_million", zero)
        + F("tokens_out") * Coalesce("price_out_per_million", zero),
        output_field=money,
    )
    rows = (
        JudgeRun.objects.filter(
            project=project,
            source=JudgeRun.Source.JUDGE,
            judge__isnull=False,
            created_at__gte=timezone.now() - timedelta(weeks=weeks),
        )
        .filter(Q(price_in_per_million__isnull=False) | Q(price_out_per_million__isnull=False))
        .annotate(week=TruncWeek("created_at", output_field=DateField()))
        .values("judge__name", "week")
        .annotate(spent=spent, runs=Count("id"))
        .order_by("week", "judge__name")
    )
    return [
        JudgeCost(
            judge=row["judge__name"],
            week=row["week"],
            cost=row["spent"] / 1_000_000,
            runs=row["runs"],
        )
        for row in rows
    ]
