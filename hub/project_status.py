"""How a project stands, for the people who run it: how far its labelling has come (in all and by
category), what waits for a reviewer (open disagreements by kind, imported changes waiting for a
decision), and its judge runs that are going on or went wrong lately.

Counted from the records' own label counts (`annotation_count`, which the label services keep),
so that the overview of a project of 100,000 records is one grouped statement, not a count of
labels per record.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Count, F, Q, QuerySet
from django.utils import timezone

from curation.models import Project, Record, RecordChange
from curation.selectors import records_not_yet_searchable
from judging.models import JudgeRun, name_shared
from review.models import Disagreement

# Runs that ended badly this recently are shown; older ones are on the runs page.
RECENT_FAILURES = timedelta(days=7)
# At most this many runs of each list.
RUNS_SHOWN = 5
GOING_ON = (JudgeRun.State.PENDING, JudgeRun.State.RUNNING, JudgeRun.State.CANCELLING)
WENT_WRONG = (JudgeRun.State.FAILED, JudgeRun.State.BUDGET_REACHED)


@dataclass(frozen=True)
class Progress:
    """Records by how far their labelling has come: all the labels they need, some, none."""

    name: str
    records: int
    done: int
    started: int

    @property
    def not_started(self) -> int:
        return self.records - self.done - self.started

    @property
    def percent_done(self) -> int:
        return round(100 * self.done / self.records) if self.records else 0


@dataclass(frozen=True)
class OpenDisagreements:
    kind: str
    count: int


@dataclass(frozen=True)
class ProjectStatus:
    overall: Progress
    by_category: list[Progress]
    disagreements: list[OpenDisagreements]
    changes_waiting: int
    not_searchable: int
    runs_going_on: list[JudgeRun]
    runs_gone_wrong: list[JudgeRun]

    @property
    def open_disagreements(self) -> int:
        return sum(row.count for row in self.disagreements)


def project_status(project: Project) -> ProjectStatus:
    by_category = _progress_by_category(project)
    overall = Progress(
        name="All records",
        records=sum(row.records for row in by_category),
        done=sum(row.done for row in by_category),
        started=sum(row.started for row in by_category),
    )
    runs = (
        JudgeRun.objects.filter(project=project)
        .annotate(name_is_shared=name_shared())
        .order_by("-created_at")
    )
    return ProjectStatus(
        overall=overall,
        by_category=by_category,
        disagreements=_open_disagreements(project),
        changes_waiting=RecordChange.objects.filter(
            batch__project=project, state=RecordChange.State.PENDING
        ).count(),
        not_searchable=records_not_yet_searchable(project),
        runs_going_on=list(runs.filter(state__in=GOING_ON)[:RUNS_SHOWN]),
        runs_gone_wrong=list(
            runs.filter(state__in=WENT_WRONG, updated_at__gte=timezone.now() - RECENT_FAILURES)[
                :RUNS_SHOWN
            ]
        ),
    )


def _progress_by_category(project: Project) -> list[Progress]:
    needed = project.overlap + F("extra_labels")
    rows: QuerySet = (
        Record.objects.filter(project=project)
        .values("category__name")
        .annotate(
            records=Count("id"),
            done=Count("id", filter=Q(annotation_count__gte=needed)),
            started=Count("id", filter=Q(annotation_count__gt=0, annotation_count__lt=needed)),
        )
        .order_by("category__name")
    )
    return [
        Progress(
            name=row["category__name"],
            records=row["records"],
            done=row["done"],
            started=row["started"],
        )
        for row in rows
    ]


def _open_disagreements(project: Project) -> list[OpenDisagreements]:
    rows = (
        Disagreement.objects.filter(project=project, state=Disagreement.State.OPEN)
        .values("kind")
        .annotate(count=Count("id"))
        .order_by("-count", "kind")
    )
    labels = dict(Disagreement.Kind.choices)
    return [
        OpenDisagreements(kind=labels.get(row["kind"], row["kind"]), count=row["count"])
        for row in rows
    ]
