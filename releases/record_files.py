"""The record files of a release, written in one pass over its frozen records.

Records are read in chunks in one fixed order (their place in the R-Judge layout, then id), and
each is handed to every file at once: the R-Judge zip, JSONL, Parquet (from the JSONL lines)
and CSV. Memory stays flat whatever the size of the release, and the same frozen content
always gives the same bytes.
"""

from __future__ import annotations

import csv
import io
import sys
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import orjson
from django.db.models import TextField
from django.db.models.functions import Cast

from curation.choices import SourceFormat
from curation.formats.turns import test_case_of, turns_of
from curation.importers.layout import path_part
from releases.background import Background, BackgroundSink
from releases.included import IncludedRow
from releases.models import LabelBasis, Release
from releases.pairs import PairTexts
from releases.pipeline_files import PIPELINE_LAYOUT, PipelineFiles

RJUDGE_ZIP = "rjudge.zip"
RECORDS_JSONL = "records.jsonl"
RECORDS_PARQUET = "records.parquet"
LABELS_CSV = "labels.csv"

CHUNK = 2000
# Zip entries carry no time of their own: the same content gives the same archive.
ZIP_TIMESTAMP = (1980, 1, 1, 0, 0, 0)
ZIP_LEVEL = 1
# Text of a scenario file handed to the zip's thread at a time.
ZIP_CHUNK_CHARACTERS = 1024 * 1024

# R-Judge writes label 1 for unsafe, 0 for safe.
RJUDGE_LABELS = {"safe": 0, "unsafe": 1}

CSV_COLUMNS = (
    "id",
    "category",
    "scenario",
    "attack_type",
    "label",
    "label_source",
    "risk_description",
    "safety_score",
    "helpfulness_score",
    "labels",
)


def included_records(release: Release) -> Iterator[IncludedRow]:
    """The release's records in file order, each with what every file needs."""
    rows = (
        release.records.filter(included=True)
        .order_by("record__source_path", "record__source_position", "record_id")
        # JSON read as text and parsed by orjson: several times faster than Django's decoding.
        .annotate(
            annotator_labels_json=Cast("annotator_labels", TextField()),
            verdicts_json=Cast("verdicts", TextField()),
        )
        .values(
            "record_id",
            "label",
            "label_source",
            "risk_description",
            "category",
            "scenario",
            "annotator_labels_json",
            "verdicts_json",
            "safety_score",
            "helpfulness_score",
            "record__external_id",
            "record__source_format",
            "record__source_path",
            "record__attack_type",
            "record__profile",
            "record__goal",
            "record__raw",
            "record__task_link__task__external_id",
            "record__source_agent",
            "record__source_emulator",
            "record__source_case",
            "record__source_case_index",
            "record__source_replicate",
        )
    )
    return rows.iterator(chunk_size=CHUNK)


def record_row(release: Release, row: IncludedRow, turns: list[dict[str, Any]]) -> dict[str, Any]:
    """A record as JSONL and Parquet print it: its source (the agent that produced it, the
    emulator, the case and the run, where the format has them) and, for ToolEmu, its test case."""
    printed = {
        "id": row["record__external_id"],
        "category": row["category"],
        "scenario": row["scenario"],
        "attack_type": row["record__attack_type"],
        "source_format": row["record__source_format"],
        "task_id": row["record__task_link__task__external_id"],
        "profile": row["record__profile"],
        "goal": row["record__goal"],
        "source": {
            "agent": row["record__source_agent"],
            "emulator": row["record__source_emulator"],
            "case": row["record__source_case"],
            "case_index": row["record__source_case_index"],
            "replicate": row["record__source_replicate"],
        },
        "test_case": test_case_of(row["record__source_format"], row["record__raw"]),
        "turns": turns,
        "label": row["label"],
        "label_source": row["label_source"],
        "risk_description": row["risk_description"],
        "safety_score": row["safety_score"],
        "helpfulness_score": row["helpfulness_score"],
    }
    if release.options.get("annotator_labels"):
        printed["annotator_labels"] = orjson.loads(row["annotator_labels_json"])
    if release.options.get("verdicts"):
        printed["verdicts"] = orjson.loads(row["verdicts_json"])
    return printed


def write_record_files(
    release: Release, folder: Path, pair_texts: PairTexts, on_progress: Callable[[int], None]
) -> list[str]:
    """Write the record files into `folder`; return their names. The texts of scored records
    are kept in `pair_texts` for the preference pairs; `on_progress` hears how many records
    are written, chunk by chunk."""
    # Imported here: pyarrow takes 40 MB and a tenth of a second to load, which every process
    # that loads the releases app (pages, workers, imports) would pay though only builds use it.
    from releases.parquet_file import ParquetSink, parquet_schema

    names = [RJUDGE_ZIP, RECORDS_JSONL, RECORDS_PARQUET, LABELS_CSV]
    with (
        RJudgeZip(folder / RJUDGE_ZIP, gold=release.label_basis == LabelBasis.GOLD) as rjudge,
        open(folder / RECORDS_JSONL, "wb") as jsonl,
        ParquetSink(folder / RECORDS_PARQUET, parquet_schema(release)) as parquet,
        open(folder / LABELS_CSV, "w", encoding="utf-8", newline="") as labels,
        PipelineFiles(release.project, folder) as pipeline,
    ):
        table = csv.writer(labels, lineterminator="\n")
        table.writerow(CSV_COLUMNS)
        written = 0
        for row in included_records(release):
            rjudge.add(row)
            turns = turns_of(row["record__source_format"], row["record__raw"])
            if row["safety_score"] is not None or row["helpfulness_score"] is not None:
                pair_texts.add(row, turns)
            printed = record_row(release, row, turns)
            line = orjson.dumps(printed) + b"\n"
            jsonl.write(line)
            parquet.add(line)
            table.writerow(_csv_row(printed))
            if release.layout >= PIPELINE_LAYOUT:
                pipeline.add(row, turns)
            written += 1
            if written % CHUNK == 0:
                on_progress(written)
        on_progress(written)
    if not rjudge.files:
        (folder / RJUDGE_ZIP).unlink()
        names.remove(RJUDGE_ZIP)
    return names + pipeline.names


def _csv_row(printed: dict[str, Any]) -> list[Any]:
    # Labels as "annotator_1=unsafe;annotator_2=safe" when the release carries them.
    labels = ";".join(
        f"{label['annotator']}={label['verdict']}" for label in printed.get("annotator_labels", [])
    )
    values = [printed[column] for column in CSV_COLUMNS[:-1]]
    return ["" if value is None else value for value in values] + [labels]


class RJudgeZip(BackgroundSink):
    """The R-Judge layout, `data/<Category>/<scenario>.json`, streamed into a zip.

    Records arrive grouped by their source file, and each file is written as a JSON list, one
    record a line: JSON-equal to R-Judge's files (same records, fields in the same order), not
    indented as R-Judge indents them, which would cost more than all the other formats together.
    Records of other formats (agent runs of tasks) have no place in this layout and are left to
    the other files.
    """

    def __init__(self, path: Path, *, gold: bool) -> None:
        # The lightest compression: on these files four times faster than the default level, for
        # a file a fifth larger.
        self.archive = zipfile.ZipFile(
            path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=ZIP_LEVEL
        )
        self.gold = gold
        self.background = Background()
        self.entry: io.TextIOWrapper | None = None
        self.source_path: str | None = None
        self.files = 0
        # Text of the current file not yet handed to the background.
        self.text: list[str] = []
        self.size = 0
        self.first = True

    def _write_rest(self) -> None:
        self._end_file()

    def _close(self) -> None:
        self.archive.close()

    def add(self, row: IncludedRow) -> None:
        # The layout needs a label: records released for their scores alone have none.
        if row["record__source_format"] != SourceFormat.RJUDGE or not row["label"]:
            return
        if row["record__source_path"] != self.source_path:
            self._end_file()
            self.source_path = row["record__source_path"]
            parts = (path_part(part) for part in self.source_path.split("/") if part)
            self.background.run(self._open_entry, "data/" + "/".join(parts))
            self.files += 1
            self.text, self.size, self.first = ["["], 1, True
        if self.gold:
            # Releasing the gold labels prints each record as its source has it.
            text = row["record__raw"]
        else:
            record = orjson.loads(row["record__raw"])
            record["label"] = RJUDGE_LABELS[row["label"]]
            record["risk_description"] = row["risk_description"]
            text = orjson.dumps(record).decode()
        self.text.append("\n" if self.first else ",\n")
        self.text.append(text)
        self.first = False
        self.size += len(text)
        if self.size >= ZIP_CHUNK_CHARACTERS:
            self._hand_over()

    def _end_file(self) -> None:
        if self.source_path is None:
            return
        self.text.append("]" if self.first else "\n]")
        self._hand_over()
        self.background.run(self._close_entry)

    def _hand_over(self) -> None:
        self.background.run(self._write, "".join(self.text))
        self.text, self.size = [], 0

    # Run in the background, in order.
    def _open_entry(self, path: str) -> None:
        info = zipfile.ZipInfo(path, date_time=ZIP_TIMESTAMP)
        info.compress_type = zipfile.ZIP_DEFLATED
        # Python 3.13 renamed the level's attribute (keeping the old name as an alias); 3.12,
        # whose ZipInfo takes no other attribute, knows only the old one. Ruff flags this
        # branch once the oldest supported Python is 3.13.
        if sys.version_info >= (3, 13):
            info.compress_level = ZIP_LEVEL
        else:
            # typeshed leaves out ZipInfo's private attributes, this one among them.
            info._compresslevel = ZIP_LEVEL  # type: ignore[attr-defined]
        info.external_attr = 0o644 << 16
        self.entry = io.TextIOWrapper(self.archive.open(info, "w"), encoding="utf-8", newline="")

    def _write(self, text: str) -> None:
        self._open().write(text)

    def _close_entry(self) -> None:
        self._open().close()
        self.entry = None

    def _open(self) -> io.TextIOWrapper:
        # The background runs a file's _open_entry before its writes and its _close_entry.
        return cast(io.TextIOWrapper, self.entry)
