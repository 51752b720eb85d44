"""Writing normalised records, fast on PostgreSQL and plainly elsewhere.

There are two paths because the databases differ where it matters. PostgreSQL takes rows through
COPY many times faster than through INSERTs, and `INSERT ... ON CONFLICT DO NOTHING` from a
temporary table skips records that already exist even while another import adds the same ones.
SQLite, the embedded setup, has no COPY and holds small data, so `bulk_create` does there.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

import orjson
from django.db import connection

from curation.importers.records import NormalisedRecord
from curation.models import ImportBatch, Record


class RecordRow(NamedTuple):
    record: NormalisedRecord
    category_id: int
    scenario_id: int
    source_path: str
    source_position: int


class RecordWriter(Protocol):
    def write(self, rows: list[RecordRow]) -> None: ...

    def finish(self) -> int:
        """Store what was written; return how many records were created."""
        ...


def record_writer(batch: ImportBatch) -> RecordWriter:
    if connection.vendor == "postgresql":
        return CopyWriter(batch)
    return BulkCreateWriter(batch)


# The staging table's columns, in the order CopyWriter sends them.
_STAGED = (
    ("external_id", "text"),
    ("category_id", "bigint"),
    ("scenario_id", "bigint"),
    ("source_path", "text"),
    ("source_position", "integer"),
    ("profile", "text"),
    ("goal", "text"),
    ("turns", "text"),
    ("attack_type", "text"),
    ("gold_label", "text"),
    ("gold_risk_description", "text"),
    ("content_hash", "text"),
    ("raw", "text"),
    ("metadata", "text"),
    ("search_text", "text"),
)
_JSON_COLUMNS = ("turns", "metadata")


class CopyWriter:
    """COPY into a temporary table, then one INSERT ... SELECT that skips existing records."""

    def __init__(self, batch: ImportBatch) -> None:
        self.batch = batch
        # Named after the batch: a test may run two imports in one transaction.
        self.table = f"import_rows_{int(batch.pk)}"
        columns = ", ".join(f"{name} {kind}" for name, kind in _STAGED)
        with connection.cursor() as cursor:
            cursor.execute(f"CREATE TEMPORARY TABLE {self.table} ({columns}) ON COMMIT DROP")
            # A record's raw text, turns and search text are each compressed on the way into a
            # table; lz4 does that several times faster than the default pglz, and this import
            # is most of what is compressed. Servers built without lz4 keep their default.
            cursor.execute(
                "SELECT 'lz4' = ANY(enumvals) FROM pg_settings "
                "WHERE name = 'default_toast_compression'"
            )
            if cursor.fetchone()[0]:
                cursor.execute("SET LOCAL default_toast_compression = lz4")

    def write(self, rows: list[RecordRow]) -> None:
        names = ", ".join(name for name, _ in _STAGED)
        dumps = orjson.dumps
        with (
            connection.cursor() as cursor,
            cursor.copy(f"COPY {self.table} ({names}) FROM STDIN") as copy,
        ):
            for row in rows:
                record = row.record
                copy.write_row(
                    (
                        record.external_id,
                        row.category_id,
                        row.scenario_id,
                        row.source_path,
                        row.source_position,
                        record.profile,
                        record.goal,
                        dumps(record.turns).decode(),
                        record.attack_type,
                        record.gold_label,
                        record.gold_risk_description,
                        record.content_hash,
                        record.raw,
                        dumps(record.metadata).decode(),
                        record.search_text,
                    )
                )

    def finish(self) -> int:
        names = [name for name, _ in _STAGED]
        values = [f"{name}::jsonb" if name in _JSON_COLUMNS else name for name in names]
        # A sequential scan of a fresh table returns rows in the order they were copied, so
        # records get ids in source order, which the record list shows. Every name in the
        # statement is a constant of this module or the batch's integer id.
        statement = (
            f"INSERT INTO {Record._meta.db_table} "  # noqa: S608
            f"(created_at, updated_at, project_id, batch_id, {', '.join(names)}) "
            f"SELECT now(), now(), %s, %s, {', '.join(values)} FROM {self.table} "
            "ON CONFLICT (project_id, external_id) DO NOTHING"
        )
        with connection.cursor() as cursor:
            cursor.execute(statement, [self.batch.project_id, self.batch.pk])
            created = cursor.rowcount
            cursor.execute(f"DROP TABLE {self.table}")
        return created


class BulkCreateWriter:
    def __init__(self, batch: ImportBatch) -> None:
        self.batch = batch

    def write(self, rows: list[RecordRow]) -> None:
        Record.objects.bulk_create(
            (
                Record(
                    project_id=self.batch.project_id,
                    batch=self.batch,
                    external_id=row.record.external_id,
                    category_id=row.category_id,
                    scenario_id=row.scenario_id,
                    source_path=row.source_path,
                    source_position=row.source_position,
                    profile=row.record.profile,
                    goal=row.record.goal,
                    turns=row.record.turns,
                    attack_type=row.record.attack_type,
                    gold_label=row.record.gold_label,
                    gold_risk_description=row.record.gold_risk_description,
                    content_hash=row.record.content_hash,
                    raw=row.record.raw,
                    metadata=row.record.metadata,
                    search_text=row.record.search_text,
                )
                for row in rows
            ),
            batch_size=500,
            ignore_conflicts=True,
        )

    def finish(self) -> int:
        # Conflicting rows were ignored, so the batch's records are exactly the created ones.
        return Record.objects.filter(batch=self.batch).count()
