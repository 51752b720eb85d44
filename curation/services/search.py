"""The record list's text search: each record's words in the database's full-text index
(PostgreSQL's tsvector with a GIN index, SQLite's FTS5; see selectors._text_matches).

Filled after an import commits rather than by the import: keeping a text index of every
record's words up to date costs more than the rest of an import (see docs/benchmarks.md), and
records can be browsed and labelled while their text is indexed.
"""

from __future__ import annotations

from django.db import connection, transaction
from django.utils import timezone

from curation.jobs import job_send_after_commit
from curation.models import ImportBatch, Record, RecordSearchText
from curation.search_text import FTS_TABLE, SEARCH_CONFIG, search_text_of, words_of
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
    ids = [record.pk for record in records]
    texts = [_text(record) for record in records]
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # One statement for the chunk.
            cursor.execute(
                f"""
                INSERT INTO {RecordSearchText._meta.db_table} (record_id, project_id, vector)
                SELECT id, %s, to_tsvector(%s::regconfig, text)
                FROM unnest(%s::bigint[], %s::text[]) AS chunk(id, text)
                ON CONFLICT (record_id) DO NOTHING
                """,  # noqa: S608 (a model's table)
                [project_id, SEARCH_CONFIG, ids, [words_of(text) for text in texts]],
            )
            return
        # A record indexed meanwhile keeps its row in the FTS table, which allows one a record.
        cursor.executemany(
            f"INSERT INTO {FTS_TABLE} (rowid, text) SELECT %s, %s WHERE NOT EXISTS "  # noqa: S608
            f"(SELECT 1 FROM {RecordSearchText._meta.db_table} WHERE record_id = %s)",
            [(record_id, text, record_id) for record_id, text in zip(ids, texts, strict=True)],
        )
        RecordSearchText.objects.bulk_create(
            (RecordSearchText(record_id=record_id, project_id=project_id) for record_id in ids),
            ignore_conflicts=True,
        )


def _text(record: Record) -> str:
    return search_text_of(
        external_id=record.external_id, profile=record.profile, goal=record.goal, turns=record.turns
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
