"""Writing normalised records, fast on PostgreSQL and plainly elsewhere.

There are two paths because the databases differ where it matters. PostgreSQL takes rows through
COPY many times faster than through INSERTs, and takes them while the importer is still reading:
the database works on one core while Python parses on the other. SQLite, the embedded setup, has
no COPY and holds small data, so `bulk_create` does there.

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
from curation.models import ImportBatch, Record

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
    return BulkCreateWriter(batch)


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


class BulkCreateWriter:
    BATCH_SIZE = 500

    def __init__(self, batch: ImportBatch) -> None:
        self.batch = batch
        self.rows: list[Record] = []
        self.written = 0

    def write(self, row: RecordRow) -> None:
        record = row.record
        self.rows.append(
            Record(
                project_id=self.batch.project_id,
                batch=self.batch,
                external_id=record.external_id,
                category_id=row.category_id,
                scenario_id=row.scenario_id,
                source_format=record.source_format,
                source_path=row.source_path,
                source_position=row.source_position,
                profile=record.profile,
                goal=record.goal,
                preview=record.preview,
                attack_type=record.attack_type,
                gold_label=record.gold_label,
                gold_risk_description=record.gold_risk_description,
                content_hash=record.content_hash,
                raw=record.raw,
                metadata=record.metadata,
                source_agent=record.source_agent,
                source_emulator=record.source_emulator,
                source_case=record.source_case,
                source_case_index=record.source_case_index,
                source_replicate=record.source_replicate,
            )
        )
        if len(self.rows) >= self.BATCH_SIZE:
            self.pause()

    def pause(self) -> None:
        Record.objects.bulk_create(self.rows)
        self.written += len(self.rows)
        self.rows = []

    def finish(self) -> int:
        self.pause()
        return self.written

    def abandon(self) -> None:
        self.rows = []
