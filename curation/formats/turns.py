"""A stored record's turns, read from its raw source by the reader of its format."""

from __future__ import annotations

from typing import Any

from curation.choices import SourceFormat
from curation.formats.rjudge import rjudge_turns
from curation.formats.safepro_run import run_turns


def turns_of(source_format: str, raw: str) -> list[dict[str, Any]]:
    """The normalised turns of a stored record, read from its raw source."""
    if source_format == SourceFormat.SAFEPRO_RUN:
        return run_turns(raw)
    if source_format != SourceFormat.RJUDGE:
        raise ValueError(f"No reader for records of format {source_format!r}")
    return rjudge_turns(raw)
