"""Writing normalised records, fast on PostgreSQL and on SQLite.

There are two paths because the databases differ where it matters. PostgreSQL takes rows through
COPY many times faster than through INSERTs, and takes them while the importer is still reading:
the database works on one core while Python parses on the other. SQLite, the embedded setup, has
no COPY: prepared INSERTs, many rows a call, do there, and index the records' words as they go.

Both write only new records: the importer skips ids the project has already, and the import
service holds a per-project lock, so no other import can add the same ids meanwhile.
"""

from __future__ import annotations

import queue
import threading
from contextlib import ExitStack
from typing import TYPE_CHECKING, NamedTuple, Protocol

import orjson
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.utils import timezone
from psycopg.types.json import Jsonb

from curation.formats.rjudge import NormalisedRecord
from curation.models import ImportBatch, Record, RecordSearchText
from curation.search_text import FTS_TABLE, search_text_of

if TYPE_CHECKING:
    from django.db.backends.base.base import BaseDatabaseWrapper
    from psycopg import Copy


class ImportAbandoned(Exception):
    """Ends a COPY whose rows must not be kept."""


# A records table row's values, as the INSERT binds them: text, numbers and NULLs.
RecordValues = tuple[str | int | None, ...]


class RecordRow(NamedTuple):
    record: NormalisedRecord
    category_id: int
    scenario_id: int
    source_path: str
    source_position: int


class RecordWriter(Protocol):
    # Whether the records' words wait on the import's connection, to be indexed by
    # `index_kept_words` once the records are stored (else a job indexes them).
    keeps_words: bool

    def write(self, row: RecordRow) -> None: ...

    def pause(self) -> None:
        """Let other statements run on the connection; the next write resumes."""
        ...

    def finish(self) -> int:
        """Store what was written; return how many records were created."""
        ...

    def abandon(self) -> None:
        """Stop writing because the import failed; the caller rolls back what was written."""
        ...


def record_writer(batch: ImportBatch) -> RecordWriter:
    if connection.vendor == "postgresql":
        return CopyWriter(batch)
    return ExecuteManyWriter(batch)


# The columns COPY writes, with the types their values are sent as. COPY takes them in binary
# form: PostgreSQL reads each value by its length instead of scanning every character of the
# text form for escapes and delimiters, and psycopg writes the strings as they are. For 100,000
# records of R-Judge's size, 0.7 s less CPU in PostgreSQL and 0.4 s less in Python (see
# docs/benchmarks.md, Import).
_COLUMNS = {
    "created_at": "timestamptz",
    "updated_at": "timestamptz",
    "project_id": "int8",
    "batch_id": "int8",
    "external_id": "text",
    "category_id": "int8",
    "scenario_id": "int8",
    "source_format": "text",
    "source_path": "text",
    "source_position": "int4",
    "profile": "text",
    "goal": "text",
    "preview": "text",
    "attack_type": "text",
    "gold_label": "text",
    "gold_risk_description": "text",
    "content_hash": "text",
    "raw": "text",
    "metadata": "jsonb",
    "source_agent": "text",
    "source_emulator": "text",
    "source_case": "text",
    "source_case_index": "int4",
    "source_replicate": "text",
}


class CopyWriter:
    """COPY straight into the records table, in the import's transaction."""

    # PostgreSQL's text vectors cost more than the rest of the import: a job makes them after.
    keeps_words = False

    def __init__(self, batch: ImportBatch) -> None:
        self.batch = batch
        self.now = timezone.now()
        self.written = 0
        self.cursor = connection.cursor()
        self.stream = ExitStack()
        self.copy: Copy | None = None
        # Django makes foreign keys DEFERRABLE INITIALLY DEFERRED, which queues a check for
        # every row until commit. Immediate, they are checked at the end of each COPY instead:
        # a queue per statement rather than one for the whole import, and a broken key fails
        # the statement that wrote it. Either way PostgreSQL checks them after the rows, while
        # Python waits (about 1 s of an import of 100,000 records; docs/benchmarks.md).
        self.cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")

    def write(self, row: RecordRow) -> None:
        if self.copy is None:
            statement = (
                f"COPY {Record._meta.db_table} ({', '.join(_COLUMNS)}) FROM STDIN (FORMAT BINARY)"
            )
            self.copy = self.stream.enter_context(self.cursor.copy(statement))
            self.copy.set_types(list(_COLUMNS.values()))
        record = row.record
        self.copy.write_row(
            (
                self.now,
                self.now,
                self.batch.project_id,
                self.batch.pk,
                record.external_id,
                row.category_id,
                row.scenario_id,
                record.source_format,
                row.source_path,
                row.source_position,
                record.profile,
                record.goal,
                record.preview,
                record.attack_type,
                record.gold_label,
                record.gold_risk_description,
                record.content_hash,
                record.raw,
                Jsonb(record.metadata, dumps=orjson.dumps),
                record.source_agent,
                record.source_emulator,
                record.source_case,
                record.source_case_index,
                record.source_replicate,
            )
        )
        self.written += 1

    def pause(self) -> None:
        self.stream.close()
        self.copy = None

    def finish(self) -> int:
        self.pause()
        self.cursor.close()
        return self.written

    def abandon(self) -> None:
        # Ending the COPY with an error makes psycopg cancel it rather than commit the rows, and
        # leaves the connection usable for the rollback.
        self.stream.__exit__(ImportAbandoned, ImportAbandoned(), None)
        self.copy = None
        self.cursor.close()


class ExecuteManyWriter:
    """Prepared INSERTs into the records table, a few thousand rows a call, in the import's
    transaction: SQLite has no COPY, and building a model instance a row (what bulk_create
    does) cost four times the parsing (see docs/benchmarks.md, The embedded default). sqlite3
    prepares each statement once per call and binds each row's values.

    Each record's words are made from the record in hand (the job that indexes them after an
    import would read and parse every record again, which took three times as long as
    indexing the text itself) and wait, by record id, in a temporary table of the import's
    connection. Once the records are stored, `index_kept_words` has SQLite index them in a few
    statements of its own C code: FTS5's tokenizer and index took more of SQLite's time than
    the records' rows and their indexes, and the records are now stored that much sooner.

    The statements run in a thread of their own, on the import's connection, while the
    importer parses the next chunk: SQLite has no server process to work on the other core, as
    PostgreSQL has, and sqlite3 lets go of the GIL while SQLite writes. One chunk at most waits
    for the thread, so that memory holds two chunks, not the whole import.
    """

    BATCH_SIZE = 2000
    keeps_words = True

    def __init__(self, batch: ImportBatch) -> None:
        self.batch = batch
        # As Django stores an aware datetime in SQLite: UTC text.
        now = connection.ops.adapt_datetimefield_value(timezone.now())
        self.constants = (now, now, batch.project_id, batch.pk)
        self.rows: list[RecordValues] = []
        self.texts: list[str] = []
        self.written = 0
        self.chunks: queue.Queue[tuple[list[RecordValues], list[str]] | None] = queue.Queue(
            maxsize=1
        )
        self.error: BaseException | None = None
        self.thread: threading.Thread | None = None
        # Django's connection of this thread, which the writing thread borrows.
        self.connection = connections[DEFAULT_DB_ALIAS]
        with self.connection.cursor() as cursor:
            # Words an earlier import on this connection left (it stopped before indexing
            # them) belong to no record of this one.
            cursor.execute(_FORGET_KEPT_WORDS)
            cursor.execute(_CREATE_KEPT_WORDS)

    def write(self, row: RecordRow) -> None:
        record = row.record
        self.rows.append(
            (
                *self.constants,
                record.external_id,
                row.category_id,
                row.scenario_id,
                record.source_format,
                row.source_path,
                row.source_position,
                record.profile,
                record.goal,
                record.preview,
                record.attack_type,
                record.gold_label,
                record.gold_risk_description,
                record.content_hash,
                record.raw,
                orjson.dumps(record.metadata).decode(),
                record.source_agent,
                record.source_emulator,
                record.source_case,
                record.source_case_index,
                record.source_replicate,
            )
        )
        self.texts.append(
            search_text_of(
                external_id=record.external_id,
                profile=record.profile,
                goal=record.goal,
                turns=record.turns,
            )
        )
        if len(self.rows) >= self.BATCH_SIZE:
            self._send()

    def _send(self) -> None:
        """Hand the chunk in hand to the writing thread, started with the first."""
        if not self.rows:
            return
        if self.thread is None:
            self.connection.inc_thread_sharing()
            self.thread = threading.Thread(target=self._write_chunks, daemon=True)
            self.thread.start()
        self._raise_error()
        self.chunks.put((self.rows, self.texts))
        self.rows = []
        self.texts = []

    def _write_chunks(self) -> None:
        while (chunk := self.chunks.get()) is not None:
            try:
                if self.error is None:
                    self.written += _insert_chunk(self.connection, *chunk)
            except BaseException as error:
                # Raised again in the importer's thread, whose transaction then rolls back.
                self.error = error
            finally:
                self.chunks.task_done()

    def pause(self) -> None:
        """Wait until every row is written: the connection is the caller's again."""
        self._send()
        if self.thread is not None:
            self.chunks.put(None)
            self.thread.join()
            self.thread = None
            self.connection.dec_thread_sharing()
        self._raise_error()

    def finish(self) -> int:
        self.pause()
        return self.written

    def abandon(self) -> None:
        self.rows = []
        self.texts = []
        if self.thread is not None:
            # What waits is dropped unwritten: the caller rolls back what was written.
            self.error = self.error or ImportAbandoned()
            self.chunks.put(None)
            self.thread.join()
            self.thread = None
            self.connection.dec_thread_sharing()

    def _raise_error(self) -> None:
        if self.error is not None:
            raise self.error


def _insert_chunk(database: BaseDatabaseWrapper, rows: list[RecordValues], texts: list[str]) -> int:
    """Insert a chunk's records and keep their words; return how many."""
    with database.cursor() as cursor:
        cursor.executemany(_INSERT_RECORD, rows)
        # The transaction holds SQLite's one write lock (Django's IMMEDIATE mode, see
        # config/settings.py) and the table's ids come from AUTOINCREMENT: the rows just
        # inserted have the ids up to the last one, one after the other.
        cursor.execute("SELECT last_insert_rowid()")
        (last_id,) = cursor.fetchone()
        ids = range(last_id - len(rows) + 1, last_id + 1)
        cursor.executemany(_KEEP_WORDS, list(zip(ids, texts, strict=True)))
    return len(rows)


def index_kept_words(*, project_id: int) -> None:
    """Index the words an import on this connection kept for its records, now stored, in
    transactions of WORDS_CHUNK records, so that other writers wait a moment at most; then
    forget them. A record indexed meanwhile (by the indexing job) is left as it is."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT min(record_id), max(record_id) FROM {_KEPT_WORDS}")  # noqa: S608
        first, last = cursor.fetchone()
        if first is not None:
            for start in range(first, last + 1, WORDS_CHUNK):
                end = start + WORDS_CHUNK - 1
                with transaction.atomic():
                    cursor.execute(_INDEX_KEPT_WORDS, [start, end])
                    cursor.execute(_MARK_SEARCHABLE, [project_id, start, end])
        cursor.execute(_FORGET_KEPT_WORDS)


# Records indexed a transaction by index_kept_words: about half a second of SQLite's time.
WORDS_CHUNK = 10_000
_INSERT_RECORD = (
    f"INSERT INTO {Record._meta.db_table} ({', '.join(_COLUMNS)}) "  # noqa: S608 (constants)
    f"VALUES ({', '.join(['%s'] * len(_COLUMNS))})"
)
# The connection's own: gone with it, and with the import's transaction if that rolls back.
_KEPT_WORDS = "temp.curation_import_words"
_CREATE_KEPT_WORDS = (
    f"CREATE TEMP TABLE {_KEPT_WORDS.removeprefix('temp.')} "
    "(record_id INTEGER PRIMARY KEY, text TEXT NOT NULL)"
)
_KEEP_WORDS = f"INSERT INTO {_KEPT_WORDS} (record_id, text) VALUES (%s, %s)"  # noqa: S608
_NOT_YET_INDEXED = (
    f"NOT EXISTS (SELECT 1 FROM {RecordSearchText._meta.db_table} "  # noqa: S608 (constants)
    "WHERE record_id = kept.record_id)"
)
_INDEX_KEPT_WORDS = (
    f"INSERT INTO {FTS_TABLE} (rowid, text) "  # noqa: S608 (constants)
    f"SELECT record_id, text FROM {_KEPT_WORDS} kept "
    f"WHERE record_id BETWEEN %s AND %s AND {_NOT_YET_INDEXED}"
)
_MARK_SEARCHABLE = (
    f"INSERT INTO {RecordSearchText._meta.db_table} (record_id, project_id) "  # noqa: S608
    f"SELECT record_id, %s FROM {_KEPT_WORDS} kept "
    f"WHERE record_id BETWEEN %s AND %s AND {_NOT_YET_INDEXED}"
)
_FORGET_KEPT_WORDS = f"DROP TABLE IF EXISTS {_KEPT_WORDS}"
