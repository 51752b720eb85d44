"""The API's answers as typed dictionaries, named as its OpenAPI schema (/api/schema/) names
them; they are the JSON the studio sends, so fields it adds later are there too, untyped."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypedDict

SafetyLabel = Literal["safe", "unsafe"]
Verdict = Literal["safe", "unsafe", "unsure"]
Role = Literal["annotator", "author", "reviewer", "manager"]
ImportFormat = Literal["auto", "rjudge", "jsonl"]
ImportState = Literal["pending", "running", "succeeded", "failed"]
RunState = Literal[
    "pending", "running", "cancelling", "cancelled", "succeeded", "failed", "budget_reached"
]
ReleaseState = Literal["pending", "building", "built", "failed"]
Protocol = Literal["rjudge", "safepro", "toolemu_safety", "toolemu_helpfulness", "custom"]
ParseStatus = Literal["valid", "invalid", "error"]
LabelBasis = Literal["final", "gold", "scores"]
DisagreementKind = Literal[
    "judge_vs_humans",
    "annotators_split",
    "judge_vs_judge",
    "humans_vs_gold",
    "score_gap",
    "requested",
]
DisagreementState = Literal["open", "resolved"]

# The record list's filters (hub/record_list.py), by the values the API accepts.
LabelFilter = Literal["none", "safe", "unsafe"]
LabelsGiven = Literal["none", "some", "done"]
VerdictFilter = Literal["safe", "unsafe", "invalid", "error", "missing"]
RecordSort = Literal["external_id", "-external_id", "labels", "-labels", "-id"]
PerPage = Literal[25, 50, 100, 200]


class Project(TypedDict):
    slug: str
    name: str
    description: str
    license: str
    roles: list[Role]
    created_at: str


class RunVerdict(TypedDict):
    run: int
    run_name: str
    label: SafetyLabel | None
    score: int | None
    parse_status: ParseStatus | None


class RecordRow(TypedDict):
    """A row of the record list: the record without its interaction, and what was said of it."""

    id: int
    external_id: str
    category: str
    scenario: str
    gold_label: SafetyLabel | Literal[""]
    attack_type: str
    source_agent: str
    source_emulator: str
    source_case: str
    source_case_index: int | None
    source_replicate: str
    source_path: str
    source_position: int
    content_hash: str
    batch: int | None
    created_at: str
    labels_given: int
    labels_needed: int
    consensus: SafetyLabel | None
    final_label: SafetyLabel | None
    final_label_settled: bool
    open_disagreements: list[str]
    verdicts: list[RunVerdict]


class Turn(TypedDict):
    round: int
    role: str
    content: str | None
    thought: str | None
    action: str | None


class Record(TypedDict):
    """A record whole: its turns, gold label and risk description, and its source as imported."""

    id: int
    external_id: str
    category: str
    scenario: str
    gold_label: SafetyLabel | Literal[""]
    gold_risk_description: str
    attack_type: str
    profile: str
    goal: str
    turns: list[Turn]
    test_case: dict[str, Any] | None
    metadata: dict[str, Any]
    raw: dict[str, Any]
    batch: int | None
    created_at: str
    updated_at: str


class ImportProgress(TypedDict):
    records: int
    bytes_read: int
    bytes_total: int | None


class ImportProblem(TypedDict):
    file: str
    index: int | None
    unit: Literal["record", "line"]
    field: str
    message: str


class ImportBatch(TypedDict):
    """An import: its state, progress while it runs, and its report once it ends."""

    id: int
    source_name: str
    format: ImportFormat
    state: ImportState
    created_by: str | None
    created_at: str
    started_at: str | None
    finished_at: str | None
    record_count: int
    created_count: int
    existing_count: int
    changed_count: int
    category_counts: dict[str, int]
    label_counts: dict[str, int]
    duplicate_groups: list[list[str]]
    evaluation_counts: dict[str, int]
    errors: list[ImportProblem]
    progress: ImportProgress
    attempts: int


class BlindRecord(TypedDict):
    """A record as an annotator sees it: no gold label, no one else's labels."""

    id: int
    external_id: str
    category: str
    scenario: str
    profile: str
    goal: str
    turns: list[dict[str, Any]]


class Lease(TypedDict):
    """The record you hold for labelling, what the project asks of it, and your draft."""

    id: int
    state: str
    expires_at: str
    opened_at: str
    draft: dict[str, Any]
    record: BlindRecord
    asked: dict[str, Any]


class AnnotationRecord(TypedDict):
    id: int
    external_id: str


class Annotation(TypedDict):
    """One of your labels (send `version` back with an edit)."""

    id: int
    record: AnnotationRecord
    verdict: Verdict
    risk_types: list[str]
    risk_description: str
    safety_score: int | None
    helpfulness_score: int | None
    evidence_turns: list[int]
    guideline_version: int | None
    time_spent_ms: int
    version: int
    created_at: str
    updated_at: str


class LabelEntry(TypedDict, total=False):
    """Who said what in a disagreement: an annotator, a judge's run, the gold label."""

    source: str
    name: str
    run: int
    label: str
    scale: str
    score: int


class Disagreement(TypedDict):
    id: int
    record: int
    record_external_id: str
    kind: DisagreementKind
    labels: list[LabelEntry]
    weight: int
    state: DisagreementState
    created_at: str
    updated_at: str
    resolved_at: str | None


class Adjudication(TypedDict):
    """A reviewer's final label of a record."""

    id: int
    record: int
    label: SafetyLabel
    risk_description: str
    reason: str
    reviewer: str
    created_at: str


class Connection(TypedDict):
    id: int
    name: str
    models: list[str]
    max_concurrency: int


class Judge(TypedDict):
    id: int
    name: str
    protocol: Protocol
    connection: int
    model: str
    template: int | None
    parameters: dict[str, Any]
    concurrency: int
    timeout_seconds: int
    max_retries: int
    created_at: str
    updated_at: str


class Run(TypedDict):
    """A judge run: its state, counts, tokens and cost."""

    id: int
    name: str
    source: str
    judge: int
    state: RunState
    outcome: str
    outcome_display: str
    total: int
    done: int
    valid_count: int
    invalid_count: int
    error_count: int
    tokens_in: int
    tokens_out: int
    cost: str | None
    budget: str | None
    seconds_left: float | None
    error: str
    created_by: str
    created_at: str
    started_at: str | None
    finished_at: str | None


class JudgeVerdict(TypedDict):
    """A judge's answer on one record of a run."""

    id: int
    record: int
    external_id: str
    parse_status: ParseStatus
    label: SafetyLabel | Literal[""]
    score: int | None
    score_label: str
    analysis: str
    raw_output: str
    error: str
    tokens_in: int
    tokens_out: int
    latency_ms: int
    attempts: int
    created_at: str


class ReleaseFile(TypedDict, total=False):
    """A built release's file: its name and download address, and (all but the manifest
    itself) its size and SHA-256."""

    name: str
    url: str
    size: int
    sha256: str


class Release(TypedDict):
    id: int
    version: str
    notes: str
    license: str
    label_basis: LabelBasis
    public: bool
    options: dict[str, Any]
    state: ReleaseState
    summary: dict[str, Any]
    previous: str | None
    progress: dict[str, Any] | None
    files: list[ReleaseFile]
    error: str
    created_by: str
    created_at: str
    built_at: str | None


@dataclass(frozen=True)
class Progress:
    """How far an upload or a job has got: `done` of `total` `unit`s (`total` is None while it
    is not known). `state` is "uploading", then the job's own state or build step."""

    kind: Literal["import", "run", "release"]
    job_id: int | None
    state: str
    done: int
    total: int | None
    unit: Literal["bytes", "records"]

    @property
    def fraction(self) -> float | None:
        """Between 0 and 1, or None while the total is not known."""
        if not self.total:
            return None
        return min(self.done / self.total, 1.0)

    def __str__(self) -> str:
        of = f" of {self.total}" if self.total is not None else ""
        return f"{self.kind} {self.state}: {self.done}{of} {self.unit}"
