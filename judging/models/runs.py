"""Judge runs and their verdicts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import models
from django.db.models import Q

from curation.choices import SafetyLabel
from curation.models import TimeStampedModel

if TYPE_CHECKING:
    from django.db.backends.base.base import BaseDatabaseWrapper


class JudgeRun(TimeStampedModel):
    """One pass of a judge over a selection of records, or a set of verdicts imported."""

    class State(models.TextChoices):
        PENDING = "pending", "Waiting for a worker"
        RUNNING = "running", "Running"
        CANCELLING = "cancelling", "Cancelling"
        CANCELLED = "cancelled", "Cancelled"
        SUCCEEDED = "succeeded", "Finished"
        FAILED = "failed", "Failed"

    class Source(models.TextChoices):
        JUDGE = "judge", "LLM judge"
        IMPORTED = "imported", "Imported verdicts"

    project = models.ForeignKey(
        "curation.Project", on_delete=models.CASCADE, related_name="judge_runs"
    )
    judge = models.ForeignKey(
        "judging.Judge", null=True, blank=True, on_delete=models.PROTECT, related_name="runs"
    )
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.JUDGE)
    name = models.CharField(max_length=200)
    # What the judge was at the start (protocol, model, template version, parameters): the run
    # stays interpretable when the judge is edited later.
    judge_snapshot = models.JSONField(default=dict, blank=True)
    # {"categories": [...], "only_labelled": bool, "sample": N or null, "seed": int}
    selection = models.JSONField(default=dict, blank=True)
    # The records the selection held at the run's creation, in id order: a resumed run judges
    # the same set though records or labels were added since.
    record_ids = models.JSONField(default=list, blank=True)
    state = models.CharField(max_length=12, choices=State.choices, default=State.PENDING)
    total = models.PositiveIntegerField(default=0)
    valid_count = models.PositiveIntegerField(default=0)
    invalid_count = models.PositiveIntegerField(default=0)
    error_count = models.PositiveIntegerField(default=0)
    tokens_in = models.PositiveBigIntegerField(default=0)
    tokens_out = models.PositiveBigIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Written by the worker while it runs: a run whose heartbeat stops is taken up again.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # A token of the worker holding the run: a worker that finds another's token has been
    # replaced (its heartbeat went stale) and stops.
    claim = models.CharField(max_length=32, blank=True)
    # Records judged per second over the last chunks, for the time left.
    rate = models.FloatField(null=True, blank=True)
    # Why the run failed, in words a manager can act on.
    error = models.TextField(blank=True)
    # Set by "Retry the errored records" until the run finishes: the worker judges the records
    # whose verdict is an error again, replacing each verdict in the transaction that writes the
    # new one.
    retry_errors = models.BooleanField(default=False)
    # Imported runs: the file, its lines, and those that matched no record or were unreadable.
    report = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            # The project's runs, newest first.
            models.Index(fields=["project", "-created_at"], name="judgerun_recent"),
            # Finding runs whose worker died: running, with an old heartbeat.
            models.Index(
                fields=["heartbeat_at"], condition=Q(state="running"), name="judgerun_running"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def done_count(self) -> int:
        return self.valid_count + self.invalid_count + self.error_count

    @property
    def outcome(self) -> str:
        """The state as people read it: a run that finished with error verdicts says so."""
        if self.state == self.State.SUCCEEDED:
            return "finished_with_errors" if self.error_count else "finished"
        return self.state

    @property
    def outcome_display(self) -> str:
        if self.outcome == "finished_with_errors":
            return "Finished with errors"
        return self.get_state_display()


class Verdict(models.Model):
    """A judge's answer on one record in one run: exactly one per run and record."""

    class Parse(models.TextChoices):
        VALID = "valid", "Valid"
        INVALID = "invalid", "Invalid (no usable answer)"
        ERROR = "error", "Error (no answer after retries)"

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="verdicts")
    record = models.ForeignKey("curation.Record", on_delete=models.CASCADE, related_name="verdicts")
    # The safety label (safe / unsafe) for label protocols; empty when invalid or an error.
    label = models.CharField(
        max_length=10,
        blank=True,
        choices=[(SafetyLabel.SAFE, "Safe"), (SafetyLabel.UNSAFE, "Unsafe")],
    )
    # The 0-3 score for ToolEmu protocols and score templates.
    score = models.PositiveSmallIntegerField(null=True, blank=True)
    # The score's qualitative label as given ("Possible Severe Risk", "Excellent").
    score_label = models.CharField(max_length=100, blank=True)
    analysis = models.TextField(blank=True)
    raw_output = models.TextField(blank=True)
    parse_status = models.CharField(max_length=10, choices=Parse.choices)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    attempts = models.PositiveSmallIntegerField(default=1)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "record"]
        constraints = [
            models.UniqueConstraint(fields=["run", "record"], name="verdict_once_per_run"),
            models.CheckConstraint(
                condition=Q(score__isnull=True) | Q(score__lte=3), name="verdict_score_0_3"
            ),
        ]
        indexes = [
            # A record's verdicts across runs (adjudication page, disagreement detection).
            models.Index(fields=["record", "run"], name="verdict_by_record"),
            # A run's scores in record order (the score reports: evaluators compared, source
            # models), read from the index alone: verdicts' rows are wide with the analyses,
            # and a scan of them took 2 s for 100,000 scores.
            models.Index(
                fields=["run", "record"], include=["score", "parse_status"], name="verdict_scores"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.label or self.score or self.parse_status} on {self.record_id}"


class PlainJSONField(models.JSONField):
    """JSON kept on PostgreSQL as `json`, its text checked and stored as written, rather than
    `jsonb`, which is parsed into a tree on every write (a large share of writing many rows)
    to serve queries into the JSON that nothing here makes."""

    def db_type(self, connection: BaseDatabaseWrapper) -> str | None:
        return "json" if connection.vendor == "postgresql" else super().db_type(connection)

    def from_db_value(self, value: Any, expression: Any, connection: BaseDatabaseWrapper) -> Any:
        # The driver decodes `json` itself (Django has it hand `jsonb` over as text).
        if isinstance(value, str):
            return super().from_db_value(value, expression, connection)
        return value
