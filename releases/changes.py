"""What changed between a release and the one before it: records added, removed, relabelled."""

from __future__ import annotations

from dataclasses import dataclass

from releases.models import Release

# Records listed by name on the page and in the dataset card, per kind of change.
LISTED = 200


@dataclass(frozen=True)
class Changes:
    previous: Release | None
    # External ids of the records, in id order.
    added: list[str]
    removed: list[str]
    # (external id, label before, label now)
    relabelled: list[tuple[str, str, str]]

    @property
    def any(self) -> bool:
        return bool(self.added or self.removed or self.relabelled)


def _labels(release: Release) -> dict[int, tuple[str, str]]:
    """{record id: (external id, label)} of the records the release includes."""
    rows = (
        release.records.filter(included=True)
        .order_by()
        .values_list("record_id", "record__external_id", "label")
    )
    return {record_id: (external_id, label) for record_id, external_id, label in rows.iterator()}


def release_changes(release: Release) -> Changes:
    """The release against its previous one (everything is added when there is none)."""
    now = _labels(release)
    previous = release.previous
    before = _labels(previous) if previous is not None else {}
    added = [now[pk][0] for pk in sorted(now.keys() - before.keys())]
    removed = [before[pk][0] for pk in sorted(before.keys() - now.keys())]
    relabelled = [
        (now[pk][0], before[pk][1], now[pk][1])
        for pk in sorted(now.keys() & before.keys())
        if now[pk][1] != before[pk][1]
    ]
    return Changes(previous=previous, added=added, removed=removed, relabelled=relabelled)
