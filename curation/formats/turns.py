"""A stored record's turns, read from its raw source by the reader of its format."""

from __future__ import annotations

from typing import Any

from curation.choices import SourceFormat
from curation.formats.inspect_log import inspect_turns
from curation.formats.openai_chat import chat_record_turns
from curation.formats.rjudge import rjudge_turns
from curation.formats.safepro_run import run_turns
from curation.formats.toolemu import trajectory_case, trajectory_turns


def turns_of(source_format: str, raw: str) -> list[dict[str, Any]]:
    """The normalised turns of a stored record, read from its raw source."""
    if source_format == SourceFormat.SAFEPRO_RUN:
        return run_turns(raw)
    if source_format == SourceFormat.TOOLEMU:
        return trajectory_turns(raw)
    if source_format == SourceFormat.INSPECT:
        return inspect_turns(raw)
    if source_format == SourceFormat.OPENAI_CHAT:
        return chat_record_turns(raw)
    if source_format != SourceFormat.RJUDGE:
        raise ValueError(f"No reader for records of format {source_format!r}")
    return rjudge_turns(raw)


def test_case_of(source_format: str, raw: str) -> dict[str, Any] | None:
    """The test case a stored record was made on, None for formats without one."""
    return trajectory_case(raw) if source_format == SourceFormat.TOOLEMU else None
