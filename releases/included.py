"""The row of a release's record that the file writers share (record_files.included_records
reads it; the pairs and the files take it)."""

from __future__ import annotations

from typing import TypedDict


class IncludedRow(TypedDict):
    """A release's record as included_records reads it: its frozen row, its JSON as text, and
    the columns of its source record."""

    record_id: int
    label: str
    label_source: str
    risk_description: str
    category: str
    scenario: str
    annotator_labels_json: str
    verdicts_json: str
    safety_score: float | None
    helpfulness_score: float | None
    record__external_id: str
    record__source_format: str
    record__source_path: str
    record__attack_type: str
    record__profile: str
    record__goal: str
    record__raw: str
    record__task_link__task__external_id: str
    record__source_agent: str
    record__source_emulator: str
    record__source_case: str
    record__source_case_index: int | None
    record__source_replicate: str
