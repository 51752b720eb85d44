"""A record's history in people's words: "ann1 labelled it unsafe", "rev1 settled it as safe",
with what changed from what to what.

The audit log keeps events for machines (an action such as `curation.annotation.updated`, the
object's internal id, snapshots before and after); the record page reads them as sentences
about the record it shows. An action this module does not know is still shown, named in words.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import PurePath

from curation.choices import ScoreScale
from curation.models import AuditEvent, ImportBatch, RecordChange
from curation.record_diff import FieldChange, shown, source_field_changes

# What a label's snapshot keys are called on the page, in the order they are listed.
LABEL_FIELDS = {
    "verdict": "verdict",
    "risk_types": "risk types",
    "risk_description": "risk description",
    "safety_score": "safety score",
    "helpfulness_score": "helpfulness score",
    "evidence_turns": "evidence turns",
}


@dataclass(frozen=True)
class HistoryLine:
    at: datetime
    # The person who did it, or "The studio" for the worker and the command line.
    who: str
    # What they did, after their name: "labelled it unsafe".
    what: str
    changes: list[FieldChange] = field(default_factory=list)


def history_lines(events: list[AuditEvent]) -> list[HistoryLine]:
    """The events as sentences, in the order given."""
    return [_line(event) for event in events]


def _line(event: AuditEvent) -> HistoryLine:
    who = event.actor.get_username() if event.actor is not None else "The studio"
    describe = DESCRIPTIONS.get(event.action, _in_words)
    what, changes = describe(event)
    return HistoryLine(at=event.created_at, who=who, what=what, changes=changes)


Description = tuple[str, list[FieldChange]]


def _label_created(event: AuditEvent) -> Description:
    after = event.after or {}
    changes = [
        FieldChange(name, "", shown(after.get(key)))
        for key, name in LABEL_FIELDS.items()
        if key != "verdict" and after.get(key) not in (None, "", [])
    ]
    return f"labelled it {shown(after.get('verdict'))}", changes


def _label_updated(event: AuditEvent) -> Description:
    before, after = event.before or {}, event.after or {}
    changes = [
        FieldChange(name, shown(before.get(key)), shown(after.get(key)))
        for key, name in LABEL_FIELDS.items()
        if before.get(key) != after.get(key)
    ]
    return "changed their label", changes


def _settled(event: AuditEvent) -> Description:
    before, after = event.before or {}, event.after or {}
    final_before = (before.get("final_label") or [None])[0]
    final_after = (after.get("final_label") or [None])[0]
    changes = [FieldChange("final label", shown(final_before), shown(final_after))]
    if after.get("reason"):
        changes.append(FieldChange("reason", "", shown(after["reason"])))
    if after.get("risk_description"):
        changes.append(FieldChange("risk description", "", shown(after["risk_description"])))
    return f"settled it as {shown(final_after)}", changes


def _scores_settled(event: AuditEvent) -> Description:
    after = event.after or {}
    scores = after.get("settled_scores") or {}
    # In the scales' own order: the audit log's JSON may keep its keys in any.
    order = [scale for scale in ScoreScale.values if scale in scores]
    order += sorted(scale for scale in scores if scale not in order)
    named = ", ".join(f"{scale} {scores[scale]}" for scale in order)
    changes = [FieldChange("reason", "", shown(after["reason"]))] if after.get("reason") else []
    return f"settled its scores: {named}", changes


def _record_changed(event: AuditEvent) -> Description:
    """A new version taken from an import: the source fields it changed, from the version
    the event kept to the one the import held."""
    before, after = event.before or {}, event.after or {}
    names = list(after.get("fields") or [])
    batch_id = after.get("import") or 0
    held = (
        RecordChange.objects.filter(batch_id=batch_id, record_id=event.object_id, verdict_of="")
        .values_list("raw", flat=True)
        .first()
    )
    changes = source_field_changes(before.get("raw") or "{}", held, names) if held else []
    if not changes:
        changes = [FieldChange(name, "", "changed") for name in names]
    source = ImportBatch.objects.filter(pk=batch_id).values_list("source_name", flat=True).first()
    # A command's import is named by its whole path; the file's name says enough here.
    named = f" of {PurePath(source).name}" if source else ""
    return f"took its new version from import {batch_id}{named}", changes


def _labels_requested(event: AuditEvent) -> Description:
    before, after = event.before or {}, event.after or {}
    more = (after.get("extra_labels") or 0) - (before.get("extra_labels") or 0)
    needed = after.get("labels_needed")
    return f"asked for {more} more label{'s' if more != 1 else ''} ({needed} in all)", []


def _sent_to_adjudication(event: AuditEvent) -> Description:
    return "sent it to adjudication", []


def _in_words(event: AuditEvent) -> Description:
    """An action without a sentence of its own: `judging.run.cancelled` as "run cancelled"."""
    parts = event.action.split(".")
    words = " ".join(parts[1:] if len(parts) > 1 else parts).replace("_", " ")
    return words + (f": {event.object_repr}" if event.object_repr else ""), []


DESCRIPTIONS: dict[str, Callable[[AuditEvent], Description]] = {
    "curation.annotation.created": _label_created,
    "curation.annotation.updated": _label_updated,
    "judging.adjudication.created": _settled,
    "review.score_adjudication.created": _scores_settled,
    "curation.record.changed": _record_changed,
    "annotation.record.labels_requested": _labels_requested,
    "judging.record.sent_to_adjudication": _sent_to_adjudication,
}
