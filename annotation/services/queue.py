"""The annotation queue: records handed to annotators under leases, k annotators a record.

A record has k slots (the project's overlap), and as many more as a manager asked of it
(`extra_labels`, see `records_labels_request`). A submitted label takes one for good, a live lease
takes one until it is submitted, skipped or expires. The record's own row counts both
(`annotation_count`, `lease_count`), so that taking a slot is a lock on that one row and a
conditional update of it: on PostgreSQL, a claim that waited for the row's lock re-checks
`annotation_count + lease_count < k` on the row's newest version, which a count over the lease
and annotation tables would not get. Every service that creates, ends or expires a lease moves
the counts in the same transaction, so they stay exact.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from contextlib import nullcontext
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.core.cache import cache
from django.db import IntegrityError, connection, transaction
from django.db.models import Case, Exists, F, OuterRef, Value, When
from django.utils import timezone

from annotation.models import Lease
from annotation.services.rows import instance_from_row
from curation.errors import Conflict, DomainError
from curation.models import Category, Project, Record, Scenario
from curation.services.audit import audit_log

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# Slots taken on a record, less the extra labels asked of it, so that it compares with k: the
# expression of the record_queue index, which the claim walks.
TAKEN = F("annotation_count") + F("lease_count") - F("extra_labels")
# Overdue leases expired per claim: enough for any backlog, few enough to keep the claim short.
RECLAIM_BATCH = 100
# A claim that loses a race (another claim of the same annotator) starts over this many times.
CLAIM_ATTEMPTS = 3
# How long a claim keeps looking while every record left is locked by other claims, which hold
# such a lock for milliseconds; it then finds nothing left.
ALL_LOCKED_SECONDS = 2.0
SKIP_REASON_MAX_LENGTH = 500
# What an annotator is shown of a record: never its gold label, the source's risk description,
# its metadata or anyone's labels. `raw` is read for the turns alone (it holds the source's label
# too: nothing else of it is shown). CLAIM_IN_ONE_STATEMENT reads the same columns.
BLIND_RECORD_FIELDS = (
    "id",
    "project_id",
    "external_id",
    "source_format",
    "profile",
    "goal",
    "raw",
    "category__name",
    "scenario__name",
)


def records_left_key(project_id: int, annotator_id: int) -> str:
    """The cache key of the number of records left for an annotator (see selectors_annotation)."""
    return f"annotation:records-left:{project_id}:{annotator_id}"


def records_left_forget(*, project_id: int, annotator_id: int) -> None:
    """Have the number of records left counted afresh once the annotator's change commits."""
    key = records_left_key(project_id, annotator_id)
    transaction.on_commit(lambda: cache.delete(key))


def leases_reclaim(*, project: Project) -> int:
    """Expire the project's leases past their time and free their slots; return how many.

    Leases that another transaction holds (being submitted, skipped or reclaimed) are left to
    it. An expired lease keeps its draft: the record may come back to the same annotator.
    """
    now = timezone.now()
    overdue_leases = Lease.objects.filter(
        project=project, state=Lease.State.ACTIVE, expires_at__lte=now
    ).order_by("expires_at")
    # Most claims find nothing overdue: a look without a lock spares them a transaction.
    if not overdue_leases.exists():
        return 0
    with transaction.atomic():
        overdue = list(
            overdue_leases.select_for_update(skip_locked=True).values_list("id", "record_id")[
                :RECLAIM_BATCH
            ]
        )
        if not overdue:
            return 0
        Lease.objects.filter(id__in=[lease_id for lease_id, _ in overdue]).update(
            state=Lease.State.EXPIRED, updated_at=now
        )
        # In id order, as every reclaim does: two reclaims that expired leases of the same
        # records lock them in the same order, and never wait for each other in a cycle.
        for record_id, leases in sorted(Counter(record_id for _, record_id in overdue).items()):
            Record.objects.filter(pk=record_id).update(lease_count=F("lease_count") - leases)
    return len(overdue)


def lease_next_record(*, project: Project, annotator: User) -> Lease | None:
    """The annotator's live lease, or a new one on the next record they may label, with the
    record as the annotator may see it (BLIND_RECORD_FIELDS); None when no record is left for
    them.

    The next record is one they have not labelled or skipped, with a free slot, closest to
    completion first (most slots taken), then in id order. On PostgreSQL the common case is one
    statement (CLAIM_IN_ONE_STATEMENT), which reads the record too. Otherwise overdue leases are
    reclaimed first, in a transaction of their own, and the claim follows in one transaction.
    """
    if connection.vendor == "postgresql":
        lease = _lease_next_in_one_statement(project, annotator)
        if lease is not None:
            return lease
    lease = _lease_next_in_transaction(project, annotator)
    if lease is not None:
        lease.project = project
        lease.record = (
            Record.objects.select_related("category", "scenario")
            .only(*BLIND_RECORD_FIELDS)
            .get(pk=lease.record_id)
        )
    return lease


def _lease_next_in_transaction(project: Project, annotator: User) -> Lease | None:
    """lease_next_record's claim in steps, without the record."""
    leases_reclaim(project=project)
    races_lost = 0
    all_locked_until = time.monotonic() + ALL_LOCKED_SECONDS
    while races_lost < CLAIM_ATTEMPTS:
        try:
            with transaction.atomic():
                lease = _live_lease(project, annotator)
                if lease is not None:
                    return lease
                free = _free_record(project, annotator)
                if free is None:
                    return None
                record_id, revive = free
                if _take_slot(record_id, project.overlap):
                    return _lease_open(project, record_id, annotator, revive=revive)
        except _AllLocked:
            # Other claims are taking the records left this instant: whether one stays free
            # shows once they commit, a few milliseconds from now.
            if time.monotonic() > all_locked_until:
                return None
            time.sleep(random.uniform(0.002, 0.01))  # noqa: S311 (a pause, not a secret)
        except (IntegrityError, _LeaseBusy):
            # The same annotator claimed, or labelled their expired lease, in another request
            # at the same moment (a double click, two tabs): the next round sees the outcome.
            races_lost += 1
    return None


# The plain claim in one statement, which PostgreSQL runs as a transaction of its own: the same
# steps as the claim below (the next free record, locked, skipping those other claims hold; its
# slot taken; a lease opened; the record read as the annotator may see it), in one round trip
# instead of eight. The record's columns are those the statement's snapshot holds, from before
# its slot was taken: the counts are not among them. It is plain when the annotator
# holds no live lease, no lease of the project is overdue, and the next record is new to the
# annotator; otherwise it takes nothing, and the claim below does the work. In particular it
# never takes up an expired lease: that lease may be locked by a submit waiting for the record,
# which this statement holds (the claim below takes it up without waiting).
CLAIM_IN_ONE_STATEMENT = """
WITH free AS (
    SELECT record.id
    FROM curation_record record
    WHERE record.project_id = %(project)s
      AND record.annotation_count + record.lease_count - record.extra_labels < %(overlap)s
      AND NOT EXISTS (
          SELECT 1 FROM curation_lease mine
          WHERE mine.record_id = record.id AND mine.annotator_id = %(annotator)s
            AND mine.state <> 'expired'
          -- OFFSET 0 keeps this a look-up by lease_once_per_annotator for each record walked,
          -- whatever the table's statistics: without them (a table not analyzed yet),
          -- PostgreSQL planned it as a join against all of the annotator's leases, compared
          -- for every record walked, and a claim took 30 ms after 200 labels instead of 0.8.
          OFFSET 0
      )
      AND NOT EXISTS (
          SELECT 1 FROM curation_lease live
          WHERE live.project_id = %(project)s AND live.annotator_id = %(annotator)s
            AND live.state = 'active'
      )
      AND NOT EXISTS (
          SELECT 1 FROM curation_lease overdue
          WHERE overdue.project_id = %(project)s AND overdue.state = 'active'
            AND overdue.expires_at <= %(now)s
      )
    ORDER BY record.annotation_count + record.lease_count - record.extra_labels DESC, record.id
    LIMIT 1
    FOR UPDATE OF record SKIP LOCKED
), taken AS (
    UPDATE curation_record record SET lease_count = record.lease_count + 1
    FROM free
    WHERE record.id = free.id
      AND record.annotation_count + record.lease_count - record.extra_labels < %(overlap)s
      AND NOT EXISTS (
          SELECT 1 FROM curation_lease expired
          WHERE expired.record_id = free.id AND expired.annotator_id = %(annotator)s
      )
    RETURNING record.id
), opened AS (
    INSERT INTO curation_lease (
        created_at, updated_at, project_id, record_id, annotator_id, state, expires_at,
        skip_reason, draft, opened_at
    )
    SELECT %(now)s, %(now)s, %(project)s, taken.id, %(annotator)s, 'active', %(expires_at)s,
        '', '{}', %(now)s
    FROM taken
    RETURNING *
)
SELECT opened.*,
    record.external_id AS record__external_id,
    record.source_format AS record__source_format,
    record.profile AS record__profile,
    record.goal AS record__goal,
    record.raw AS record__raw,
    record.category_id AS record__category_id,
    record.scenario_id AS record__scenario_id,
    category.name AS category__name,
    scenario.name AS scenario__name
FROM opened
JOIN curation_record record ON record.id = opened.record_id
JOIN curation_category category ON category.id = record.category_id
JOIN curation_scenario scenario ON scenario.id = record.scenario_id
"""


def _lease_next_in_one_statement(project: Project, annotator: User) -> Lease | None:
    """The plain claim in one statement (PostgreSQL); None when it is not plain, or when it
    lost a race that the claim below sorts out (the same annotator claiming twice at once, which
    the lease table's unique constraints refuse)."""
    now = timezone.now()
    params = {
        "project": project.pk,
        "annotator": annotator.pk,
        "overlap": project.overlap,
        "now": now,
        "expires_at": now + timedelta(minutes=project.lease_minutes),
    }
    # Outside a transaction the statement is one of its own; inside one (a caller's atomic
    # block), a savepoint keeps a statement that failed from breaking it.
    guard = transaction.atomic() if connection.in_atomic_block else nullcontext()
    try:
        with guard:
            leases = list(Lease.objects.raw(CLAIM_IN_ONE_STATEMENT, params))
    except IntegrityError:
        return None
    if not leases:
        return None
    lease = leases[0]
    lease.project = project
    lease.record = instance_from_row(
        Record, lease, "record", id=lease.record_id, project_id=project.pk
    )
    # The record's category_id and scenario_id came with it, from the record__ columns.
    lease.record.category = instance_from_row(
        Category, lease, "category", id=lease.record.category_id
    )
    lease.record.scenario = instance_from_row(
        Scenario, lease, "scenario", id=lease.record.scenario_id
    )
    return lease


class _AllLocked(Exception):
    """Every record left for the annotator is locked by another claim at this instant."""


class _LeaseBusy(Exception):
    """The annotator's expired lease on the chosen record is being changed by another request."""


def _live_lease(project: Project, annotator: User) -> Lease | None:
    """The annotator's lease if it is still within its time. One past its time is expired here
    and now (waiting for a reclaim that holds it), so that it is never handed out as live while
    a reclaim frees its slot; the claim may then take it up again with its draft."""
    lease = (
        Lease.objects.select_for_update()
        .filter(project=project, annotator=annotator, state=Lease.State.ACTIVE)
        .first()
    )
    if lease is None or lease.expires_at > timezone.now():
        return lease
    Lease.objects.filter(pk=lease.pk).update(state=Lease.State.EXPIRED, updated_at=timezone.now())
    Record.objects.filter(pk=lease.record_id).update(lease_count=F("lease_count") - 1)
    return None


def _free_record(project: Project, annotator: User) -> tuple[int, bool] | None:
    """The next record for the annotator, locked until the transaction ends: its id, and
    whether the annotator holds an expired lease on it.

    Records that other claims hold locked are skipped, so that concurrent claims spread over
    different records instead of queueing for the first one. When every candidate is locked,
    _AllLocked has the claim look again after a pause, rather than wait for a lock here: this
    transaction may hold a lock already (of a lease it expired), and waiting while holding one
    can close a cycle with other claims, submits and reclaims.
    """
    mine = Lease.objects.filter(record=OuterRef("pk"), annotator=annotator)
    candidates = (
        Record.objects.filter(project=project)
        .alias(taken=TAKEN)
        .filter(taken__lt=project.overlap)
        .exclude(Exists(mine.exclude(state=Lease.State.EXPIRED)))
        .annotate(revive=Exists(mine))
        .order_by(F("taken").desc(), "id")
        .values_list("id", "revive")
    )
    free = candidates.select_for_update(skip_locked=True).first()
    if free is None and candidates.exists():
        raise _AllLocked
    return free


def _take_slot(record_id: int, overlap: int) -> bool:
    """Take a slot of the record if it still has one free: always so on PostgreSQL, whose lock
    re-checked it; on SQLite the write lock of the transaction stands in for the row lock."""
    return bool(
        Record.objects.filter(pk=record_id)
        .alias(taken=TAKEN)
        .filter(taken__lt=overlap)
        .update(lease_count=F("lease_count") + 1)
    )


def _lease_open(project: Project, record_id: int, annotator: User, *, revive: bool) -> Lease:
    """A lease on the record whose slot the annotator just took: their expired lease on it taken
    up again (with its draft), or a new one."""
    now = timezone.now()
    expires_at = now + timedelta(minutes=project.lease_minutes)
    if revive:
        # Without waiting: a submit of this lease holds it and waits for the record's lock,
        # which this claim holds.
        lease = (
            Lease.objects.select_for_update(skip_locked=True)
            .filter(record_id=record_id, annotator=annotator, state=Lease.State.EXPIRED)
            .first()
        )
        if lease is None:
            raise _LeaseBusy
        lease.state, lease.expires_at, lease.opened_at = Lease.State.ACTIVE, expires_at, now
        lease.save(update_fields=["state", "expires_at", "opened_at", "updated_at"])
        return lease
    return Lease.objects.create(
        project=project,
        record_id=record_id,
        annotator=annotator,
        expires_at=expires_at,
        opened_at=now,
    )


def lease_draft_save(*, lease: Lease, draft: dict[str, Any]) -> bool:
    """Keep the label being written on the server; False if the lease has ended meanwhile.

    Saving a draft is a sign of work: it extends a live lease by the project's lease time.
    """
    expires_at = timezone.now() + timedelta(minutes=lease.project.lease_minutes)
    return bool(
        Lease.objects.filter(
            pk=lease.pk,
            annotator_id=lease.annotator_id,
            state__in=[Lease.State.ACTIVE, Lease.State.EXPIRED],
        ).update(
            draft=draft,
            updated_at=timezone.now(),
            expires_at=Case(
                When(state=Lease.State.ACTIVE, then=Value(expires_at)), default=F("expires_at")
            ),
        )
    )


def lease_skip(*, lease: Lease, actor: User, reason: str) -> Lease:
    """The annotator gives the record up, saying why; it is never offered to them again."""
    reason = reason.strip()
    if not reason:
        raise DomainError("Say why you skip this record.")
    if len(reason) > SKIP_REASON_MAX_LENGTH:
        raise DomainError(f"Keep the reason under {SKIP_REASON_MAX_LENGTH} characters.")
    with transaction.atomic():
        lease = (
            Lease.objects.select_for_update(of=("self",))
            .select_related("record", "project")
            .get(pk=lease.pk)
        )
        if lease.annotator_id != actor.pk or lease.state not in (
            Lease.State.ACTIVE,
            Lease.State.EXPIRED,
        ):
            raise Conflict("This record is no longer yours to skip.")
        if lease.state == Lease.State.ACTIVE:
            Record.objects.filter(pk=lease.record_id).update(lease_count=F("lease_count") - 1)
        lease.state = Lease.State.SKIPPED
        lease.skip_reason = reason
        lease.save(update_fields=["state", "skip_reason", "updated_at"])
        records_left_forget(project_id=lease.project_id, annotator_id=actor.pk)
        audit_log(
            actor=actor,
            action="curation.lease.skipped",
            project=lease.project,
            obj=lease,
            after={"record": lease.record.external_id, "reason": reason},
        )
    return lease


# The most labels a manager may ask for beyond k at once.
MORE_LABELS_MAX = 10


def records_labels_request(
    *, actor: User, project: Project, record_ids: list[int], more: int
) -> int:
    """Have `more` annotators beyond those the records had been asked for label each of these
    records of the project; return how many records were asked.

    The records take that many more slots (`extra_labels`): the queue offers them again, to
    annotators who have not seen them, closest to completion first as always.
    """
    if not 1 <= more <= MORE_LABELS_MAX:
        raise DomainError(f"Ask for 1 to {MORE_LABELS_MAX} more labels.")
    with transaction.atomic():
        # In id order, as every change of record counts is made: no lock cycle with claims.
        records = list(
            Record.objects.select_for_update()
            .filter(project=project, pk__in=record_ids)
            .order_by("id")
            .only("external_id", "extra_labels")
        )
        if not records:
            raise DomainError("Choose the records that need more labels.")
        Record.objects.filter(pk__in=[record.pk for record in records]).update(
            extra_labels=F("extra_labels") + more
        )
        for record in records:
            audit_log(
                actor=actor,
                action="annotation.record.labels_requested",
                project=project,
                obj=record,
                before={"extra_labels": record.extra_labels},
                after={
                    "extra_labels": record.extra_labels + more,
                    "labels_needed": project.overlap + record.extra_labels + more,
                },
            )
    return len(records)
