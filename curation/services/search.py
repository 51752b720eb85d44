"""The record list's text search: each record's text, lower-cased, and its word pairs (which
the trigram index is on, see selectors._text_matches) in a table of their own.

Filled after an import commits rather than by the import: keeping a trigram index of every
record's words up to date costs several times more than the rest of an import (see
docs/benchmarks.md), and records can be browsed and labelled while their text is indexed.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from curation.jobs import job_send_after_commit
from curation.models import ImportBatch, Record, RecordSearchText
from curation.search_text import search_text_of, word_pairs_of
from curation.services.import_lock import lock_project_for_import

# Records indexed per transaction: short transactions, so pages and imports never wait long.
SEARCH_CHUNK = 2000


def search_index_update(*, project_id: int) -> int:
    """Index the project's records that have no search text yet; return how many were.

    Safe to run twice and concurrently: a record indexed meanwhile is left as it is.
    """
    indexed = 0
    after_id = 0
    while True:
        records = list(
            Record.objects.filter(project_id=project_id, id__gt=after_id, search_text__isnull=True)
            .order_by("id")
            .only("id", "external_id", "profile", "goal", "source_format", "raw")[:SEARCH_CHUNK]
        )
        if records:
            _index(project_id, records)
            indexed += len(records)
            after_id = records[-1].pk
        elif _mark_batches_searchable(project_id):
            return indexed
        else:
            # An import committed meanwhile, perhaps with ids below those indexed: look again.
            after_id = 0


def _index(project_id: int, records: list[Record]) -> None:
    with transaction.atomic():
        RecordSearchText.objects.bulk_create(
            (_search_text(project_id, record) for record in records), ignore_conflicts=True
        )


def _search_text(project_id: int, record: Record) -> RecordSearchText:
    text = search_text_of(
        external_id=record.external_id, profile=record.profile, goal=record.goal, turns=record.turns
    )
    return RecordSearchText(
        record=record, project_id=project_id, text=text, word_pairs=word_pairs_of(text)
    )


def _mark_batches_searchable(project_id: int) -> bool:
    """Mark the project's imports searchable if none of its records lacks search text.

    Holds the imports' project lock meanwhile, so that no import can commit between the check
    and the marking.
    """
    with transaction.atomic():
        lock_project_for_import(project_id)
        if Record.objects.filter(project_id=project_id, search_text__isnull=True).exists():
            return False
        ImportBatch.objects.filter(
            project_id=project_id,
            state=ImportBatch.State.SUCCEEDED,
            searchable_at__isnull=True,
        ).update(searchable_at=timezone.now())
    return True


def search_index_update_later(*, project_id: int) -> None:
    """Have a worker index the project's new records once the current transaction commits."""
    job_send_after_commit("curation.tasks.update_search_index", project_id)
