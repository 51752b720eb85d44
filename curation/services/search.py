"""The record list's text search: each record's words in the database's full-text index
(PostgreSQL's tsvector with a GIN index, SQLite's FTS5; see selectors._text_matches).

On PostgreSQL, filled after an import commits rather than by the import: keeping a text index
of every record's words up to date costs more than the rest of an import (see
docs/benchmarks.md), and records can be browsed and labelled while their text is indexed. On
SQLite the import keeps each record's words as it writes the record and indexes them itself
right after the records are stored (`curation/importers/writers.py`, index_kept_words), so that
the embedded default finds records seconds after they are stored, with no job to wait for;
this module then indexes only what was stored some other way, or what a stopped worker left.
"""

from __future__ import annotations

import queue
import threading
from datetime import datetime

import psycopg
from django.db import connection, transaction
from django.utils import timezone

from curation.job_leases import job_lease
from curation.jobs import job_send_after_commit
from curation.models import ImportBatch, Record, RecordSearchText
from curation.search_text import FTS_TABLE, SEARCH_CONFIG, search_text_of, words_of
from curation.services.import_lock import lock_project_for_import
from curation.services.table_statistics import analyse_after_large_write

# Records indexed per transaction: short transactions, so pages and imports never wait long.
SEARCH_CHUNK = 2000
# Chunks written at once on PostgreSQL, each by a thread on a connection of its own: the
# database's parser is most of the work, and so it runs on two cores while Python reads the
# next chunk's text (see docs/benchmarks.md).
PARALLEL_CHUNKS = 2
# The task that indexes a project's new records, whose lease the indexing holds.
SEARCH_TASK = "curation.tasks.update_search_index"


def search_index_update_held(*, project_id: int) -> int:
    """Index the project's records that have no search text yet, holding the project's
    indexing lease (curation/job_leases.py): the worker's job. A second job for the project
    meanwhile leaves the indexing to the first; one whose worker died is sent again."""
    with job_lease(SEARCH_TASK, project_id) as held:
        return search_index_update(project_id=project_id) if held else 0


def projects_not_searchable(before: datetime) -> list[int]:
    """Projects with an import that succeeded before `before` whose records the text search
    cannot all find yet: indexing them is a job a worker runs, or should."""
    batches = ImportBatch.objects.filter(
        state=ImportBatch.State.SUCCEEDED, searchable_at__isnull=True, finished_at__lt=before
    )
    return list(batches.values_list("project_id", flat=True).distinct())


def search_index_update(*, project_id: int) -> int:
    """Index the project's records that have no search text yet; return how many were.

    Safe to run twice and concurrently: a record indexed meanwhile is left as it is.
    """
    indexed = 0
    after_id = 0
    with _ChunkWriter() as write:
        while True:
            records = list(
                Record.objects.filter(
                    project_id=project_id, id__gt=after_id, search_text__isnull=True
                )
                .order_by("id")
                .only("id", "external_id", "profile", "goal", "source_format", "raw")[:SEARCH_CHUNK]
            )
            if records:
                write(project_id, [record.pk for record in records], list(map(_text, records)))
                indexed += len(records)
                after_id = records[-1].pk
                continue
            write.finish()
            analyse_after_large_write(indexed, RecordSearchText)
            if _mark_batches_searchable(project_id):
                return indexed
            # An import committed meanwhile, perhaps with ids below those indexed: look again.
            after_id = 0


class _ChunkWriter:
    """Writes chunks of search text on PARALLEL_CHUNKS threads, each on one connection of its
    own, or in the caller's thread where other connections would not do: on SQLite (one writer
    at a time), and inside a transaction, whose records other connections cannot see yet."""

    def __init__(self) -> None:
        threaded = connection.vendor == "postgresql" and not connection.in_atomic_block
        # At most this many chunks wait, so that memory holds a few chunks' text, not all.
        self.chunks: queue.Queue[tuple[int, list[int], list[str]] | None] = queue.Queue(
            maxsize=PARALLEL_CHUNKS
        )
        self.errors: list[BaseException] = []
        self.threads = [
            threading.Thread(target=self._write_chunks, daemon=True)
            for _ in range(PARALLEL_CHUNKS if threaded else 0)
        ]
        for thread in self.threads:
            thread.start()

    def __call__(self, project_id: int, ids: list[int], texts: list[str]) -> None:
        if not self.threads:
            _index(project_id, ids, texts)
            return
        self._raise_error()
        self.chunks.put((project_id, ids, texts))

    def finish(self) -> None:
        """Wait until every chunk sent is written, and raise the first error of any."""
        self.chunks.join()
        self._raise_error()

    def _write_chunks(self) -> None:
        try:
            while (chunk := self.chunks.get()) is not None:
                try:
                    if not self.errors:
                        _index(*chunk)
                except BaseException as error:
                    # Raised again in the caller's thread, where the indexing was asked for.
                    self.errors.append(error)
                finally:
                    self.chunks.task_done()
        finally:
            connection.close()

    def _raise_error(self) -> None:
        if self.errors:
            raise self.errors[0]

    def __enter__(self) -> _ChunkWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        for _ in self.threads:
            self.chunks.put(None)
        for thread in self.threads:
            thread.join()


def _index(project_id: int, ids: list[int], texts: list[str]) -> None:
    with transaction.atomic():
        if connection.vendor == "postgresql":
            _index_postgresql(project_id, ids, texts)
            return
        _index_sqlite(project_id, ids, texts)


def _index_postgresql(project_id: int, ids: list[int], texts: list[str]) -> None:
    # One statement for the chunk, its arrays sent apart from it in binary on a cursor of
    # psycopg's own: Django's cursors quote them into the statement, some 4 MB a chunk that
    # Python escapes and PostgreSQL parses back, about 8% of the indexing's CPU (see
    # docs/benchmarks.md).
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(
            f"""
            INSERT INTO {RecordSearchText._meta.db_table} (record_id, project_id, vector)
            SELECT id, %s, to_tsvector(%s::regconfig, text)
            FROM unnest(%b::bigint[], %b::text[]) AS chunk(id, text)
            ON CONFLICT (record_id) DO NOTHING
            """,  # noqa: S608 (a model's table)
            [project_id, SEARCH_CONFIG, ids, [words_of(text) for text in texts]],
        )


def _index_sqlite(project_id: int, ids: list[int], texts: list[str]) -> None:
    with connection.cursor() as cursor:
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
