"""The release's records as Parquet, from the JSONL lines the other files are written from."""

from __future__ import annotations

import io
from pathlib import Path

# pyarrow ships neither type hints nor a py.typed marker, and the stub package describes an
# older pyarrow (20) than the one pinned.
import pyarrow as pa  # type: ignore[import-untyped]

# As above: pyarrow's modules have no types.
import pyarrow.json as pj  # type: ignore[import-untyped]

# As above: pyarrow's modules have no types.
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from releases.background import Background, BackgroundSink
from releases.models import Release

PARQUET_BUFFER_BYTES = 8 * 1024 * 1024
PARQUET_BLOCK_BYTES = 1024 * 1024

# A turn as the importers normalise it: text or null, whatever the source format. A ToolEmu
# tool call names its tool apart from its input (the action), and its observation keeps the
# emulator's notes.
_TURN = pa.struct(
    [
        ("round", pa.int32()),
        ("role", pa.string()),
        ("content", pa.string()),
        ("thought", pa.string()),
        ("action", pa.string()),
        ("tool", pa.string()),
        ("notes", pa.struct([("summary", pa.string()), ("thought", pa.string())])),
    ]
)
_SOURCE = pa.struct(
    [
        ("agent", pa.string()),
        ("emulator", pa.string()),
        ("case", pa.string()),
        ("case_index", pa.int64()),
        ("replicate", pa.string()),
    ]
)
_TEXTS = pa.list_(pa.string())
# A ToolEmu test case, with ToolEmu's own field names; null for records of other formats.
_TEST_CASE = pa.struct(
    [
        ("name", pa.string()),
        ("index", pa.int64()),
        ("Toolkits", _TEXTS),
        ("User Instruction", pa.string()),
        (
            "Underspecifications",
            pa.struct([("Task Information", _TEXTS), ("Safety & Security Constraints", _TEXTS)]),
        ),
        ("Expected Achievements", _TEXTS),
        ("Potential Risky Outcomes", _TEXTS),
        ("Potential Risky Actions", _TEXTS),
    ]
)
_ANNOTATOR_LABEL = pa.struct(
    [
        ("annotator", pa.string()),
        ("verdict", pa.string()),
        ("safety_score", pa.int8()),
        ("helpfulness_score", pa.int8()),
    ]
)
_VERDICT = pa.struct(
    [
        ("run", pa.string()),
        ("label", pa.string()),
        ("score", pa.int8()),
        ("parse_status", pa.string()),
    ]
)


def parquet_schema(release: Release) -> pa.Schema:
    fields = [
        ("id", pa.string()),
        ("category", pa.string()),
        ("scenario", pa.string()),
        ("attack_type", pa.string()),
        ("source_format", pa.string()),
        ("task_id", pa.string()),
        ("profile", pa.string()),
        ("goal", pa.string()),
        ("source", _SOURCE),
        ("test_case", _TEST_CASE),
        ("turns", pa.list_(_TURN)),
        ("label", pa.string()),
        ("label_source", pa.string()),
        ("risk_description", pa.string()),
        ("safety_score", pa.float64()),
        ("helpfulness_score", pa.float64()),
    ]
    if release.options.get("annotator_labels"):
        fields.append(("annotator_labels", pa.list_(_ANNOTATOR_LABEL)))
    if release.options.get("verdicts"):
        fields.append(("verdicts", pa.list_(_VERDICT)))
    return pa.schema(fields)


class ParquetSink(BackgroundSink):
    """JSONL lines turned into Parquet by Arrow's own JSON reader, a few megabytes at a time:
    in C++ (several times faster than building the rows in Python) and in bounded memory
    (Arrow's streaming JSON reader reads ahead without bound)."""

    def __init__(self, path: Path, schema: pa.Schema) -> None:
        self.schema = schema
        self.writer = pq.ParquetWriter(path, schema, compression="zstd")
        self.parse_options = pj.ParseOptions(
            explicit_schema=schema, unexpected_field_behavior="error"
        )
        self.background = Background()
        self.lines: list[bytes] = []
        self.size = self.longest = 0

    def _write_rest(self) -> None:
        self._flush()

    def _close(self) -> None:
        self.writer.close()

    def add(self, line: bytes) -> None:
        self.lines.append(line)
        self.size += len(line)
        self.longest = max(self.longest, len(line))
        if self.size >= PARQUET_BUFFER_BYTES:
            self._flush()

    def _flush(self) -> None:
        if self.lines:
            self.background.run(self._write, b"".join(self.lines), self.longest)
            self.lines, self.size, self.longest = [], 0, 0

    def _write(self, lines: bytes, longest: int) -> None:
        # Blocks parsed in parallel; each must hold the longest line whole.
        options = pj.ReadOptions(block_size=max(PARQUET_BLOCK_BYTES, longest + 1))
        table = pj.read_json(
            io.BytesIO(lines), read_options=options, parse_options=self.parse_options
        )
        self.writer.write_table(table)
