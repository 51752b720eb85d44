"""Importing records from the formats the field uses (R-Judge JSON, its folder or zip, JSONL,
ASSEBench-style records, ToolEmu studies, Inspect eval logs, OpenAI-style chat transcripts).
The services in curation.services.imports drive it."""

from __future__ import annotations

from curation.formats.rjudge import InvalidRecord, NormalisedRecord, content_hash, normalise_record
from curation.importers.engine import ImportReport, import_records
from curation.importers.layout import UNCATEGORIZED, layout_path
from curation.importers.problems import PROBLEM_LIMIT, ImportFailed, Problem
from curation.importers.sources import ImportLimits

__all__ = [
    "PROBLEM_LIMIT",
    "UNCATEGORIZED",
    "ImportFailed",
    "ImportLimits",
    "ImportReport",
    "InvalidRecord",
    "NormalisedRecord",
    "Problem",
    "content_hash",
    "import_records",
    "layout_path",
    "normalise_record",
]
