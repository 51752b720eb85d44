"""Reads of review: final labels, the adjudication queue, and all that was said of a record.

A record's final label is its latest adjudication, else its human consensus
(`annotation.consensus`); `final_condition` is the same rule written as SQL for the record list.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Exists, Min, OuterRef, Prefetch, Q, QuerySet, Sum

from annotation.consensus import SCALES, consensus_condition, human_consensus
from annotation.models import Annotation
from curation.models import Project, Record
from judging.models import Verdict
from judging.selectors import runs_named
from review.models import Adjudication, Disagreement, ScoreAdjudication

# Where a final label comes from.
ADJUDICATED = "adjudicated"


CONSENSUS = "consensus"


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


def settled_scores(
    project: Project, record_ids: list[int] | None = None
) -> dict[int, dict[str, int]]:
    """{record id: {scale: its latest settled score}}: the people's final score on a scale,
    which a record has once a reviewer settled it."""
    settled = ScoreAdjudication.objects.filter(project=project)
    if record_ids is not None:
        settled = settled.filter(record_id__in=record_ids)
    latest: dict[int, dict[str, int]] = {}
    # Oldest first: a scale's latest settled score overwrites the earlier ones.
    rows = settled.order_by("record_id", "created_at", "id").values_list(
        "record_id", "scale", "score"
    )
    for record_id, scale, score in rows.iterator():
        latest.setdefault(record_id, {})[scale] = score
    return latest


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
    # Settled 0-3 scores, newest first, and the latest of each scale.
    score_adjudications: list[ScoreAdjudication]

    @property
    def settled_scores(self) -> dict[str, ScoreAdjudication]:
        latest: dict[str, ScoreAdjudication] = {}
        for settled in self.score_adjudications:
            latest.setdefault(settled.scale, settled)
        return latest

    @property
    def disputed_scales(self) -> tuple[str, ...]:
        """The scales of the record's open "scores far apart" disagreement, in scale order."""
        disputed = {
            entry["scale"]
            for disagreement in self.disagreements
            if disagreement.kind == Disagreement.Kind.SCORE_GAP
            and disagreement.state == Disagreement.State.OPEN
            for entry in disagreement.labels
            if entry.get("scale")
        }
        return tuple(scale for scale in SCALES if scale in disputed)

    @property
    def scales_to_settle(self) -> tuple[str, ...]:
        """The scales the settle page offers a score on: those disputed, and those settled
        before (so that a settled score can be settled again)."""
        offered = {*self.disputed_scales, *self.settled_scores}
        return tuple(scale for scale in SCALES if scale in offered)

    @property
    def evidence(self) -> dict[int, list[str]]:
        """Turn number -> the annotators whose labels mark it as evidence."""
        marks: dict[int, list[str]] = {}
        for annotation in self.annotations:
            for number in annotation.evidence_turns:
                marks.setdefault(number, []).append(annotation.annotator.get_username())
        return marks


def _with_runs_named(verdicts: QuerySet[Verdict]) -> list[Verdict]:
    """The verdicts, their runs told apart where two share a name, in one query for all."""
    listed = list(verdicts)
    runs_named([verdict.run for verdict in listed])
    return listed


def record_opinions(record: Record) -> RecordOpinions:
    project = record.project
    return RecordOpinions(
        annotations=list(
            record.annotations.select_related("annotator", "guideline_version")
            .prefetch_related("risk_types")
            .order_by("annotator__username")
        ),
        verdicts=_with_runs_named(
            record.verdicts.select_related("run").order_by("run__created_at", "run_id")
        ),
        disagreements=list(record.disagreements.order_by("state", "-weight", "kind")),
        adjudications=list(record.adjudications.select_related("reviewer").order_by("-created_at")),
        consensus=human_consensus(project, [record.pk]).get(record.pk),
        final=final_labels(project, [record.pk]).get(record.pk),
        score_adjudications=list(
            record.score_adjudications.select_related("reviewer").order_by("-created_at", "-id")
        ),
    )
