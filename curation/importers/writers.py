"""Writing normalised records, fast on PostgreSQL and on SQLite.

There are two paths because the databases differ where it matters. PostgreSQL takes rows through
COPY many times faster than through INSERTs, and takes them while the importer is still reading:
the database works on one core while Python parses on the other. SQLite, the embedded setup, has
no COPY: prepared INSERTs, many rows a call, do there, and index the records' words as they go.

Both write only new records: the importer skips ids the project has already, and the import
service holds a per-project lock, so no other import can add the same ids meanwhile.
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import TYPE_CHECKING, NamedTuple, Protocol

import orjson
from django.db import connection
from django.utils import timezone
from psycopg.types.json import Jsonb

from curation.formats.rjudge import NormalisedRecord
from curation.models import ImportBatch, Record, RecordSearchText
from curation.search_text import FTS_TABLE, search_text_of

if TYPE_CHECKING:
    from psycopg import Copy


class ImportAbandoned(Exception):
    """Ends a COPY whose rows must not be kept."""


class RecordRow(NamedTuple):
    record: NormalisedRecord
    category_id: int
    scenario_id: int
    source_path: str
    source_position: int


class RecordWriter(Protocol):
    # Whether the records written are indexed for the text search too (else a job does it).
    indexes_search: bool

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
    indexes_search = False

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

    The records' words go into the FTS5 index at once, from the records in hand: the job that
    indexes them after an import would read and parse every record again, which took three
    times as long as indexing the text itself.
    """

    BATCH_SIZE = 2000
    indexes_search = True

    def __init__(self, batch: ImportBatch) -> None:
        self.batch = batch
        # As Django stores an aware datetime in SQLite: UTC text.
        now = connection.ops.adapt_datetimefield_value(timezone.now())
        self.constants = (now, now, batch.project_id, batch.pk)
        self.rows: list[tuple[object, ...]] = []
        self.texts: list[str] = []
        self.written = 0

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
            self.pause()

    def pause(self) -> None:
        if not self.rows:
            return
        with connection.cursor() as cursor:
            cursor.executemany(_INSERT_RECORD, self.rows)
            # The transaction holds SQLite's one write lock (Django's IMMEDIATE mode, see
            # config/settings.py) and the table's ids come from AUTOINCREMENT: the rows just
            # inserted have the ids up to the last one, one after the other.
            cursor.execute("SELECT last_insert_rowid()")
            (last_id,) = cursor.fetchone()
            ids = range(last_id - len(self.rows) + 1, last_id + 1)
            cursor.executemany(_INSERT_WORDS, list(zip(ids, self.texts, strict=True)))
            project_id = self.batch.project_id
            cursor.executemany(_INSERT_SEARCHABLE, [(pk, project_id) for pk in ids])
        self.written += len(self.rows)
        self.rows = []
        self.texts = []

    def finish(self) -> int:
        self.pause()
        return self.written

    def abandon(self) -> None:
        self.rows = []
        self.texts = []


_INSERT_RECORD = (
    f"INSERT INTO {Record._meta.db_table} ({', '.join(_COLUMNS)}) "  # noqa: S608 (constants)
    f"VALUES ({', '.join(['%s'] * len(_COLUMNS))})"
)
_INSERT_WORDS = f"INSERT INTO {FTS_TABLE} (rowid, text) VALUES (%s, %s)"  # noqa: S608
_INSERT_SEARCHABLE = (
    f"INSERT INTO {RecordSearchText._meta.db_table} (record_id, project_id) "  # noqa: S608
    "VALUES (%s, %s)"
)
