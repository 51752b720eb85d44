"""Judge runs and their verdicts."""

from __future__ import annotations

from decimal import Decimal
from functools import cached_property
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import models
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

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
        BUDGET_REACHED = "budget_reached", "Stopped at its budget"

    class Source(models.TextChoices):
        JUDGE = "judge", "LLM judge"
        IMPORTED = "imported", "Imported verdicts"
        # Computed from other runs' verdicts (judging.models.panels.Panel says how).
        PANEL = "panel", "Panel of runs"

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
    state = models.CharField(max_length=14, choices=State.choices, default=State.PENDING)
    total = models.PositiveIntegerField(default=0)
    valid_count = models.PositiveIntegerField(default=0)
    invalid_count = models.PositiveIntegerField(default=0)
    error_count = models.PositiveIntegerField(default=0)
    tokens_in = models.PositiveBigIntegerField(default=0)
    tokens_out = models.PositiveBigIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Written by every worker on the run as it commits: a run whose heartbeat stops has no
    # live worker (each chunk has a lease of its own, see RunChunk).
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # Records judged per second lately by all its workers together, for the time left...
    rate = models.FloatField(null=True, blank=True)
    # ...measured over these [seconds since the epoch, verdicts done] of the last commits.
    rate_samples = models.JSONField(default=list, blank=True)
    # The connection's prices when the run was created (per million tokens; None: not priced),
    # so that the run's cost is what it was whatever prices become.
    price_in_per_million = models.DecimalField(
        max_digits=10, decimal_places=4, null=True, blank=True
    )
    price_out_per_million = models.DecimalField(
        max_digits=10, decimal_places=4, null=True, blank=True
    )
    # The most the run may cost: it stops, as budget_reached, when its cost gets there.
    budget = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)
    # What the run was expected to take before it started: {"tokens_in", "tokens_out",
    # "cost" (null when not priced), "sampled"} (see judging/services/run_cost.py).
    estimate = models.JSONField(default=dict, blank=True)
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

    @cached_property
    def shares_name(self) -> bool:
        """Whether another run of the project has this run's name. Lists say it of all their
        runs at once: in their query (`name_is_shared=name_shared()`), or after it
        (`judging.selectors.runs_named`)."""
        said = getattr(self, "name_is_shared", None)
        if said is not None:
            return bool(said)
        others = JudgeRun.objects.filter(project_id=self.project_id, name=self.name)
        return others.exclude(pk=self.pk).exists()

    @property
    def display_name(self) -> str:
        """The run as pages name it: its name, followed where another run of the project has
        the same name by its number and when it was started, "gpt-5-mini (#12, 3 Dec 14:05)"."""
        if not self.shares_name:
            return self.name
        started = timezone.localtime(self.created_at)
        return f"{self.name} (#{self.pk}, {started.day} {started:%b %H:%M})"

    @property
    def done_count(self) -> int:
        return self.valid_count + self.invalid_count + self.error_count

    @property
    def is_priced(self) -> bool:
        return self.price_in_per_million is not None or self.price_out_per_million is not None

    @property
    def cost(self) -> Decimal | None:
        """What the tokens so far cost at the run's prices; None when it is not priced."""
        if not self.is_priced:
            return None
        return cost_of(
            self.tokens_in, self.tokens_out, self.price_in_per_million, self.price_out_per_million
        )

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


def cost_of(
    tokens_in: int, tokens_out: int, price_in: Decimal | None, price_out: Decimal | None
) -> Decimal:
    """The price of so many tokens at prices per million (a missing price costs nothing)."""
    million = Decimal(1_000_000)
    return (tokens_in * (price_in or 0) + tokens_out * (price_out or 0)) / million


class RunChunk(models.Model):
    """A slice of a run's records that one worker judges at a time.

    Any worker claims a chunk that is waiting, or one whose lease has run out (its worker died
    or hangs), skipping those locked by another worker's claim; it renews the lease with every
    commit and marks the chunk done once every record of it has its verdict. A run is cut into
    chunks each time a worker is to take it up (created, resumed, errors retried).
    """

    class State(models.TextChoices):
        WAITING = "waiting", "Waiting for a worker"
        TAKEN = "taken", "Being judged"
        DONE = "done", "Done"

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="chunks")
    number = models.PositiveIntegerField()
    record_ids = models.JSONField(default=list)
    state = models.CharField(max_length=8, choices=State.choices, default=State.WAITING)
    # The claim of the worker holding it, which that worker's commits must still find; a
    # worker that finds another's has lost the chunk (its lease ran out) and stops.
    claim = models.CharField(max_length=32, blank=True)
    # Which worker (host and process) holds or held it, for the logs and the tests.
    worker = models.CharField(max_length=200, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "number"]
        constraints = [
            # Its index also serves a worker looking for the run's next chunk, in order.
            models.UniqueConstraint(fields=["run", "number"], name="runchunk_once_per_number"),
        ]

    def __str__(self) -> str:
        return f"Chunk {self.number} of run {self.run_id}"


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
            # The record list's filter on a run's verdicts (safe, unsafe, invalid, error): the
            # records of one answer, read from the index alone.
            models.Index(
                fields=["run", "parse_status", "label", "record"], name="verdict_by_answer"
            ),
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


def name_shared() -> Exists:
    """Whether another run of the project has each run's name, for a list to say in its own
    query: `runs.annotate(name_is_shared=name_shared())` (see `JudgeRun.shares_name`)."""
    return Exists(
        JudgeRun.objects.filter(project_id=OuterRef("project_id"), name=OuterRef("name")).exclude(
            pk=OuterRef("pk")
        )
    )
