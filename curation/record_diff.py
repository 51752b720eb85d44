"""What changed in a record or a label, field by field, as pages show it: the value before and
after, cut to a length a page can hold."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from curation.models import AuditEvent, RecordChange

# A value longer than this is cut, with its whole in the record or the label it came from.
VALUE_CHARS = 300


@dataclass(frozen=True)
class FieldChange:
    """One field of a label or of a record: its value before (empty for a new one) and after."""

    name: str
    before: str
    after: str


def shown(value: Any) -> str:
    """A value as the page shows it: text as it is, lists joined, nothing as a dash."""
    if value is None or value == "" or value == []:
        return "-"
    if isinstance(value, list):
        text = ", ".join(str(item) for item in value)
    elif isinstance(value, str):
        text = value
    else:
        text = orjson.dumps(value).decode() if isinstance(value, dict) else str(value)
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def source_field_changes(before_raw: str, after_raw: str, names: list[str]) -> list[FieldChange]:
    """The named fields of a record's source (its file's JSON object) before and after."""
    try:
        before, after = orjson.loads(before_raw), orjson.loads(after_raw)
    except orjson.JSONDecodeError:
        return []
    if not isinstance(before, dict) or not isinstance(after, dict):
        return []
    return [FieldChange(name, shown(before.get(name)), shown(after.get(name))) for name in names]


def record_change_values(changes: list[RecordChange]) -> dict[int, list[FieldChange]]:
    """The changed source fields of an import's changes of records' content, each from the
    stored version to the imported one: the record as it is for a change not taken, the
    version the audit log kept for one taken. Verdict changes are left out (their fields
    name the evaluation's, not the record's)."""
    content = [change for change in changes if not change.verdict_of]
    taken = [change for change in content if change.state == RecordChange.State.TAKEN]
    kept_before: dict[tuple[int, str], str] = {}
    if taken:
        events = AuditEvent.objects.filter(
            action="curation.record.changed",
            object_id__in=[str(change.record_id) for change in taken],
        ).values_list("object_id", "before", "after")
        for record_id, before, after in events:
            if before and after:
                kept_before[(after.get("import"), record_id)] = before.get("raw") or "{}"
    values = {}
    for change in content:
        if change.state == RecordChange.State.TAKEN:
            before_raw = kept_before.get((change.batch_id, str(change.record_id)))
            if before_raw is None:
                continue
        else:
            before_raw = change.record.raw
        values[change.pk] = source_field_changes(before_raw, change.raw, list(change.fields))
    return values
