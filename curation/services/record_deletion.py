"""Deleting records: those a manager chose in the record list, or those an import created.

What goes with them (labels, verdicts, disagreements, adjudications) is counted first, for the
manager to confirm. A record that a release holds is refused, never taken out of the release:
the release's files and its list of records must keep saying the same thing.

The apps built on curation hold what goes with a record, and curation imports none of them: it
names their rows by the reverse relations they declare on Record (`related_name`), which the
ORM resolves whatever app holds them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from django.db import models, transaction
from django.db.models import ProtectedError, QuerySet, RestrictedError
from django.template.defaultfilters import pluralize

from curation.errors import Conflict, DomainError
from curation.models import ImportBatch, Project, Record
from curation.services.audit import audit_log

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# What a record's deletion takes with it that the manager is told of, by the reverse relation
# that reaches it, with its name in the confirmation.
COUNTED_WITH_RECORDS = (
    ("annotations", "label"),
    ("verdicts", "verdict"),
    ("disagreements", "disagreement"),
    ("adjudications", "adjudication"),
)
# The release of each of a record's entries in releases (releases.ReleaseRecord, PROTECT).
RELEASE_VERSION = "release_entries__release__version"
# The external ids named for each release that refuses a deletion; the others are counted.
IDS_SHOWN = 20


@dataclass(frozen=True)
class RecordDeletion:
    """What deleting some records means: how many, what goes with them, and what stands in the
    way."""

    records: int
    # (name, count) of each kind of row that goes with them, in COUNTED_WITH_RECORDS' order.
    going_with: list[tuple[str, int]]
    # Each release holding some of them: its version, with their external ids.
    in_releases: dict[str, list[str]]

    def described(self) -> str:
        """In words: 3 records, with 5 labels, 2 verdicts, no disagreement and no adjudication."""
        with_them = [
            f"{count:,} {name}{pluralize(count)}" if count else f"no {name}"
            for name, count in self.going_with
        ]
        listed = ", ".join(with_them[:-1]) + " and " + with_them[-1]
        return f"{self.records:,} record{pluralize(self.records)}, with {listed}"

    @property
    def refused(self) -> bool:
        return bool(self.in_releases)

    def held_by_release(self) -> list[str]:
        """Each release with the records it holds: "release 1.0.0: 12, 31 and 480 more"."""
        described = []
        for version, external_ids in self.in_releases.items():
            shown = ", ".join(external_ids[:IDS_SHOWN])
            more = len(external_ids) - IDS_SHOWN
            described.append(
                f"release {version}: {shown}" + (f" and {more:,} more" if more > 0 else "")
            )
        return described

    def refusal(self) -> str:
        return f"Records in a release cannot be deleted ({'; '.join(self.held_by_release())})."


def records_deletion_count(records: QuerySet[Record]) -> RecordDeletion:
    """What deleting `records` would delete with them, and the releases that refuse it."""
    # A subquery, not a list: an import may have created a hundred thousand records.
    ids = records.values("id")
    going_with = []
    for relation, name in COUNTED_WITH_RECORDS:
        # A reverse relation, as COUNTED_WITH_RECORDS names only those.
        related = cast("models.ForeignObjectRel", Record._meta.get_field(relation))
        rows = related.related_model._default_manager.filter(
            **{f"{related.field.name}__in": ids}
        ).count()
        going_with.append((name, rows))
    in_releases: dict[str, list[str]] = {}
    held = (
        Record.objects.filter(pk__in=ids, release_entries__isnull=False)
        .values_list(RELEASE_VERSION, "external_id")
        .order_by(RELEASE_VERSION, "external_id")
    )
    for version, external_id in held:
        in_releases.setdefault(version, []).append(external_id)
    return RecordDeletion(records=records.count(), going_with=going_with, in_releases=in_releases)


@transaction.atomic
def records_delete(
    *,
    actor: User,
    project: Project,
    records: QuerySet[Record],
    action: str = "curation.records.deleted",
    obj: models.Model | None = None,
) -> RecordDeletion:
    """Delete the project's `records` with all that hangs on them; refuse (Conflict) if a
    release holds any. One audit event names the records by external id, with the counts."""
    # Locked, so that no release takes one of them in between the check and the deletion.
    chosen = Record.objects.filter(project=project, pk__in=records.values("id")).order_by("id")
    external_ids = list(chosen.select_for_update().values_list("external_id", flat=True))
    if not external_ids:
        raise DomainError("Choose the records to delete.")
    deletion = records_deletion_count(chosen)
    if deletion.refused:
        raise Conflict(deletion.refusal())
    try:
        chosen.delete()
    except (ProtectedError, RestrictedError) as error:
        # A relation added since this was written: say what it is rather than fail.
        raise Conflict(f"These records cannot be deleted: {error.args[0]}") from error
    audit_log(
        actor=actor,
        action=action,
        project=project,
        obj=obj,
        before={
            "records": external_ids,
            **{f"{name}s": count for name, count in deletion.going_with},
        },
    )
    return deletion


def import_undo(*, actor: User, batch: ImportBatch) -> RecordDeletion:
    """Delete the records `batch` created, as records_delete does; those it found already in
    the project, which it only matched, stay."""
    if not batch.is_finished:
        raise Conflict("The import is still running: undo it once it has finished.")
    return records_delete(
        actor=actor,
        project=batch.project,
        records=batch.records.all(),
        action="curation.import.undone",
        obj=batch,
    )
