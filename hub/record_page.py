"""The record page as the hub, for reviewers and managers: everything said and done about one
record, from every domain below the hub.

Its labels (annotation), the consensus and final label by the project's one rule, who settled
it and why (review), every run's verdict (judging), its disagreements (review), and its history
(curation's audit log). Annotators never come here: the page sends them to their own label
(hub/views.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Model, Q

from annotation.consensus import consensus_of
from annotation.models import Annotation
from curation.models import AuditEvent, Record
from hub.history import HistoryLine, history_lines
from review.models import Adjudication
from review.selectors import ADJUDICATED, RecordOpinions, record_opinions

# The newest events of a record's history that its page shows.
HISTORY_EVENTS = 100


@dataclass(frozen=True)
class RecordHub:
    opinions: RecordOpinions
    # The consensus by the project's rule, or why there is none.
    consensus: str
    no_consensus: str
    # The adjudication that gave the final label, if a reviewer settled the record.
    settled_by: Adjudication | None
    labels_needed: int
    history: list[HistoryLine]

    @property
    def open_disagreements(self) -> int:
        return sum(d.state == d.State.OPEN for d in self.opinions.disagreements)


def record_hub(record: Record) -> RecordHub:
    project = record.project
    opinions = record_opinions(record)
    consensus, no_consensus = consensus_of(
        [annotation.verdict for annotation in opinions.annotations],
        project.overlap,
        rule=project.consensus_rule,
    )
    settled = opinions.final is not None and opinions.final[1] == ADJUDICATED
    return RecordHub(
        opinions=opinions,
        consensus=consensus,
        no_consensus=no_consensus,
        settled_by=opinions.adjudications[0] if settled else None,
        labels_needed=project.overlap + record.extra_labels,
        history=history_lines(record_history(record, opinions)),
    )


def record_history(record: Record, opinions: RecordOpinions) -> list[AuditEvent]:
    """The audit events of the record, of its labels and of its adjudications, newest first."""

    def about(model: type[Model], ids: list[int]) -> Q:
        return Q(object_type=model._meta.label_lower, object_id__in=[str(pk) for pk in ids])

    events = AuditEvent.objects.filter(
        about(Record, [record.pk])
        | about(Annotation, [annotation.pk for annotation in opinions.annotations])
        | about(Adjudication, [adjudication.pk for adjudication in opinions.adjudications])
    )
    return list(events.select_related("actor").order_by("-created_at", "-id")[:HISTORY_EVENTS])
