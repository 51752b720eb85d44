"""Records imported again with other content: held, shown, and taken or kept by a manager.

An import never overwrites a stored record: labels were given and judges ran on what it says.
Nor does it drop the new version without a word. It keeps the new version beside the record
(RecordChange), the import's report lists what changed, and a manager takes the new versions or
keeps the stored ones; taking one is audited with the stored version in the history. A ToolEmu
evaluator's score imported again with another value is held the same way (the judging app holds
it, and replaces the verdict when it is taken).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson
from django.db import transaction
from django.utils import timezone

from curation.choices import SourceFormat
from curation.errors import Conflict
from curation.formats.rjudge import NormalisedRecord, normalise_record
from curation.formats.toolemu import read_trajectory, trajectory_file
from curation.models import ImportBatch, Record, RecordChange, RecordSearchText
from curation.services.audit import audit_log
from curation.services.search import search_index_update_later
from curation.signals import verdict_changes_taken

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# Changed records listed with an import's report (pages and API); the rest are counted.
CHANGES_LISTED = 200
# The record's columns that its source text decides (an import writes them; so does taking a
# new version). Category and scenario stay: they are the record's place, not its content.
CONTENT_FIELDS = (
    "profile",
    "goal",
    "attack_type",
    "gold_label",
    "gold_risk_description",
    "content_hash",
    "raw",
    "metadata",
)


def record_changes_hold(batch: ImportBatch, changed: list[tuple[str, str]]) -> None:
    """Keep the new versions of the batch's changed records for a manager's decision."""
    stored = dict(
        Record.objects.filter(
            project_id=batch.project_id, external_id__in=[external_id for external_id, _ in changed]
        ).values_list("external_id", "pk")
    )
    raws = dict(Record.objects.filter(pk__in=stored.values()).values_list("pk", "raw"))
    RecordChange.objects.bulk_create(
        RecordChange(
            batch=batch,
            record_id=stored[external_id],
            raw=raw,
            fields=_changed_fields(raws[stored[external_id]], raw),
        )
        for external_id, raw in changed
    )


def _changed_fields(stored_raw: str, new_raw: str) -> list[str]:
    stored, new = orjson.loads(stored_raw), orjson.loads(new_raw)
    keys = (stored.keys() | new.keys()) - {"id"}
    return sorted(key for key in keys if stored.get(key) != new.get(key))


@transaction.atomic
def record_changes_decide(*, actor: User, batch: ImportBatch, take: bool) -> int:
    """Take the batch's pending new versions, or keep the stored ones; return how many."""
    pending = list(
        batch.changes.select_for_update()
        .filter(state=RecordChange.State.PENDING)
        .select_related("record")
    )
    if not pending:
        raise Conflict("These changes were decided already.")
    now = timezone.now()
    for change in pending:
        change.state = RecordChange.State.TAKEN if take else RecordChange.State.KEPT
        change.decided_by, change.decided_at = actor, now
        if take and not change.verdict_of:
            _take(actor, batch, change)
    RecordChange.objects.bulk_update(pending, ["state", "decided_by", "decided_at", "updated_at"])
    audit_log(
        actor=actor,
        action="curation.import.changes_taken" if take else "curation.import.changes_kept",
        project=batch.project,
        obj=batch,
        after={
            "records": [change.record.external_id for change in pending if not change.verdict_of],
            "verdicts": [
                [change.verdict_of, change.record.external_id]
                for change in pending
                if change.verdict_of
            ],
        },
    )
    if take:
        verdicts = [change for change in pending if change.verdict_of]
        if verdicts:
            verdict_changes_taken.send(RecordChange, actor=actor, batch=batch, changes=verdicts)
        records = [change.record for change in pending if not change.verdict_of]
        if records:
            # The changed records are found by their new text once the worker has indexed it.
            RecordSearchText.objects.filter(record__in=records).delete()
            search_index_update_later(project_id=batch.project_id)
    return len(pending)


def _take(actor: User, batch: ImportBatch, change: RecordChange) -> None:
    record = change.record
    before = {name: getattr(record, name) for name in CONTENT_FIELDS}
    new = _normalised(record, change.raw)
    record.profile, record.goal, record.attack_type = new.profile, new.goal, new.attack_type
    record.gold_label = new.gold_label
    record.gold_risk_description = new.gold_risk_description
    record.content_hash, record.raw, record.metadata = new.content_hash, new.raw, new.metadata
    record.preview = new.preview
    record.save(update_fields=[*CONTENT_FIELDS, "preview", "updated_at"])
    audit_log(
        actor=actor,
        action="curation.record.changed",
        project=batch.project,
        obj=record,
        before=before,
        after={"import": batch.pk, "fields": change.fields},
    )


def _normalised(record: Record, raw: str) -> NormalisedRecord:
    """The new version read as its record's format reads it (checked when it was imported)."""
    trajectories = trajectory_file(record.source_path)
    if record.source_format == SourceFormat.TOOLEMU and trajectories is not None:
        return read_trajectory(orjson.loads(raw), raw=raw, file=trajectories)
    return normalise_record(orjson.loads(raw), raw=raw)
