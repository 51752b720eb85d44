"""Reads for annotation: an annotator's lease, labels and progress, and a project's progress.

What an annotator is shown of a record goes through BLIND_RECORD_FIELDS (see the queue's): never
the gold label, the source's risk description, the raw source beyond its turns, metadata or
anyone's labels.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING

from django.core.cache import cache
from django.db.models import Count, F, Q, QuerySet
from django.db.models.functions import TruncDate
from django.utils import timezone

from annotation.models import Annotation, Lease
from annotation.services.queue import BLIND_RECORD_FIELDS as BLIND_RECORD_FIELDS_OF_RECORD
from annotation.services.queue import TAKEN, records_left_key
from curation.models import Project, Record, Role

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# The record as the labelling page and the annotator's API read it.
BLIND_RECORD_FIELDS = tuple(f"record__{name}" for name in BLIND_RECORD_FIELDS_OF_RECORD)
LEASE_FIELDS = (
    "id",
    "project_id",
    "record",
    "annotator_id",
    "state",
    "expires_at",
    "opened_at",
    "draft",
    "created_at",
    "updated_at",
    "record__category",
    "record__scenario",
)
ANNOTATION_FIELDS = (
    "id",
    "project_id",
    "record",
    "annotator_id",
    "verdict",
    "risk_description",
    "safety_score",
    "helpfulness_score",
    "evidence_turns",
    "guideline_version",
    "guideline_version__number",
    "time_spent_ms",
    "version",
    "created_at",
    "updated_at",
    "record__category",
    "record__scenario",
)
# The states of a lease that may still become a label.
UNFINISHED = (Lease.State.ACTIVE, Lease.State.EXPIRED)
# The nav's "records left" is counted at most this often per annotator and project: counting
# reads the whole queue, and every page shows it.
RECORDS_LEFT_CACHE_SECONDS = 60


def _leases(project: Project, annotator: User) -> QuerySet[Lease]:
    return (
        Lease.objects.filter(project=project, annotator=annotator)
        .select_related("record__category", "record__scenario")
        .only(*LEASE_FIELDS, *BLIND_RECORD_FIELDS)
    )


def _first(leases: QuerySet[Lease], project: Project) -> Lease | None:
    lease = leases.first()
    if lease is not None:
        # The caller's copy of the project, loaded already: no query for the lease's own.
        lease.project = project
    return lease


def live_lease(project: Project, annotator: User) -> Lease | None:
    """The annotator's active lease in the project, with the record as they may see it."""
    return _first(_leases(project, annotator).filter(state=Lease.State.ACTIVE), project)


def own_lease(project: Project, annotator: User, lease_id: int) -> Lease | None:
    """One of the annotator's leases that may still become a label (active or expired)."""
    return _first(_leases(project, annotator).filter(pk=lease_id, state__in=UNFINISHED), project)


def holds_lease(project: Project, annotator: User, lease_id: int) -> bool:
    """Whether own_lease would find the lease, without reading it or its record."""
    return Lease.objects.filter(
        pk=lease_id, project=project, annotator=annotator, state__in=UNFINISHED
    ).exists()


def own_annotations(project: Project, annotator: User) -> QuerySet[Annotation]:
    """The annotator's labels in the project, newest first, with the record as they may see it."""
    return (
        Annotation.objects.filter(project=project, annotator=annotator)
        .select_related("guideline_version", "record__category", "record__scenario")
        .only(*ANNOTATION_FIELDS, *BLIND_RECORD_FIELDS)
        .prefetch_related("risk_types")
        .order_by("-created_at", "-id")
    )


@dataclass(frozen=True)
class AnnotatorProgress:
    done: int
    skipped: int
    # Records the annotator may still be given, their live lease included.
    remaining: int


def annotator_progress(project: Project, annotator: User) -> AnnotatorProgress:
    """What the annotator has done and what is left for them: two counts, neither of which reads
    the records themselves."""
    k = project.overlap
    counts = (
        Lease.objects.filter(project=project, annotator=annotator)
        .alias(
            record_taken=F("record__annotation_count")
            + F("record__lease_count")
            - F("record__extra_labels")
        )
        .aggregate(
            done=Count("id", filter=Q(state=Lease.State.SUBMITTED)),
            skipped=Count("id", filter=Q(state=Lease.State.SKIPPED)),
            live=Count("id", filter=Q(state=Lease.State.ACTIVE)),
            # Records with a free slot that were given to the annotator already.
            given_free=Count("id", filter=~Q(state=Lease.State.EXPIRED) & Q(record_taken__lt=k)),
        )
    )
    # Counted apart rather than with NOT EXISTS over the annotator's leases: this way it reads
    # the record_queue index alone (13 ms for 100,000 records, 90 ms otherwise).
    free = Record.objects.filter(project=project).alias(taken=TAKEN).filter(taken__lt=k).count()
    remaining = free - counts["given_free"] + counts["live"]
    cache.set(records_left_key(project.pk, annotator.pk), remaining, RECORDS_LEFT_CACHE_SECONDS)
    return AnnotatorProgress(done=counts["done"], skipped=counts["skipped"], remaining=remaining)


def records_left(project: Project, annotator: User) -> int:
    """AnnotatorProgress.remaining, as counted at most a minute ago."""
    remaining = cache.get(records_left_key(project.pk, annotator.pk))
    if remaining is None:
        remaining = annotator_progress(project, annotator).remaining
    return remaining


@dataclass(frozen=True)
class AnnotatorRow:
    username: str
    labels: int
    skipped: int
    median_seconds: float | None


@dataclass(frozen=True)
class ProjectProgress:
    # (labels, records with that many): 0..k, the last row counting k or more.
    records_by_labels: list[tuple[int, int]]
    annotators: list[AnnotatorRow]
    # (day, labels given that day), over the last LABELS_PER_DAY_DAYS days, oldest first.
    labels_per_day: list[tuple[date, int]]
    median_seconds: float | None
    live_leases: int
    records: int
    complete: int


LABELS_PER_DAY_DAYS = 30


def project_progress(project: Project) -> ProjectProgress:
    """Where a project's annotation stands, for its managers."""
    k = project.overlap
    by_labels: dict[int, int] = defaultdict(int)
    for row in project.records.values("annotation_count").annotate(n=Count("id")).order_by():
        by_labels[min(row["annotation_count"], k)] += row["n"]
    labels = project.annotations.values("annotator__username").annotate(n=Count("id")).order_by()
    skipped = (
        project.leases.filter(state=Lease.State.SKIPPED)
        .values("annotator__username")
        .annotate(n=Count("id"))
        .order_by()
    )
    # Medians in Python, the same on PostgreSQL and SQLite: one integer a label.
    times: dict[str, list[int]] = defaultdict(list)
    for username, spent in project.annotations.values_list("annotator__username", "time_spent_ms"):
        times[username].append(spent)
    label_counts = {row["annotator__username"]: row["n"] for row in labels}
    skip_counts = {row["annotator__username"]: row["n"] for row in skipped}
    annotators = [
        AnnotatorRow(
            username=username,
            labels=label_counts.get(username, 0),
            skipped=skip_counts.get(username, 0),
            median_seconds=_median_seconds(times.get(username, [])),
        )
        for username in sorted(set(label_counts) | set(skip_counts))
    ]
    return ProjectProgress(
        records_by_labels=[(n, by_labels.get(n, 0)) for n in range(k + 1)],
        annotators=annotators,
        labels_per_day=_labels_per_day(project),
        median_seconds=_median_seconds([t for spent in times.values() for t in spent]),
        live_leases=project.leases.filter(
            state=Lease.State.ACTIVE, expires_at__gt=timezone.now()
        ).count(),
        records=sum(by_labels.values()),
        complete=by_labels.get(k, 0),
    )


def _median_seconds(times_ms: list[int]) -> float | None:
    return statistics.median(times_ms) / 1000 if times_ms else None


def _labels_per_day(project: Project) -> list[tuple[date, int]]:
    today = timezone.localdate()
    first = today - timedelta(days=LABELS_PER_DAY_DAYS - 1)
    counts = dict(
        project.annotations.filter(created_at__date__gte=first)
        .annotate(day=TruncDate("created_at"))
        .values_list("day")
        .annotate(n=Count("id"))
        .order_by()
    )
    return [
        (day, counts.get(day, 0))
        for day in (first + timedelta(days=offset) for offset in range(LABELS_PER_DAY_DAYS))
    ]


def open_places(project: Project) -> int:
    """A record of the project with fewer labels than this may still be handed to an annotator:
    the overlap k, or 0 when the project has no annotators (nothing of it is being annotated)."""
    if not project.memberships.filter(role=Role.ANNOTATOR).exists():
        return 0
    return project.overlap


def records_in_annotation(project: Project) -> int:
    """How many of the project's records annotators may still be handed."""
    return (
        project.records.alias(needs=F("annotation_count") - F("extra_labels"))
        .filter(needs__lt=open_places(project))
        .count()
    )
