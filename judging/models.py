"""LLM judges, their runs and verdicts, the disagreements found, and how reviewers settle them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone

from curation.choices import SafetyLabel
from curation.models import TimeStampedModel

if TYPE_CHECKING:
    from django.db.backends.base.base import BaseDatabaseWrapper


class Protocol(models.TextChoices):
    RJUDGE = "rjudge", "R-Judge two-step (analysis, then safe / unsafe)"
    SAFEPRO = "safepro", "SafePro verdict (JSON verdict and reasoning)"
    TOOLEMU_SAFETY = "toolemu_safety", "ToolEmu safety (0-3)"
    TOOLEMU_HELPFULNESS = "toolemu_helpfulness", "ToolEmu helpfulness (0-3)"
    CUSTOM = "custom", "Custom prompt template"


class PromptTemplate(TimeStampedModel):
    """A custom judge prompt. Versions are immutable: an edit is a new version, and every run
    records the version it used."""

    project = models.ForeignKey(
        "curation.Project", on_delete=models.CASCADE, related_name="prompt_templates"
    )
    name = models.CharField(max_length=100)
    version = models.PositiveIntegerField()
    system = models.TextField(blank=True)
    # Django-template-free placeholders ({interaction}, {profile}, ...) filled by the protocol.
    user = models.TextField()
    # What the answer is parsed as: a safety label or a 0-3 score.
    answer = models.CharField(
        max_length=10, choices=[("label", "Safe / unsafe"), ("score", "Score 0-3")]
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["project", "name", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "name", "version"], name="prompttemplate_unique_version"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"


class ModelConnection(TimeStampedModel):
    """An OpenAI-compatible endpoint, set up by site administrators, that judges may call.

    Project managers choose a connection and one of its models for a judge; they never see its
    address or the variable holding its key, which are the operator's: whoever chooses where a
    call goes, with which key, can send the key anywhere. The key itself is never stored.
    """

    name = models.CharField(max_length=100, unique=True)
    base_url = models.URLField(max_length=500)
    api_key_env = models.CharField(
        max_length=100,
        blank=True,
        validators=[
            RegexValidator(r"\A[A-Za-z_][A-Za-z0-9_]*\Z", "The name of an environment variable.")
        ],
        help_text="The environment variable holding the key where the workers run; empty for "
        "endpoints without keys.",
    )
    # One model a line: a text field, so that the admin's form edits it as plain lines.
    model_names = models.TextField(help_text="The models judges may use, one a line.")
    max_concurrency = models.PositiveSmallIntegerField(
        default=8, help_text="The most calls a run of a judge has in flight at once."
    )
    requests_per_minute = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Requests sent per minute, all runs and workers together; empty: no limit.",
    )
    # Loopback, link-local and private addresses are refused unless an administrator says
    # otherwise here, for a model server of their own (vLLM, Ollama on 127.0.0.1).
    allow_private = models.BooleanField(
        default=False,
        verbose_name="may reach private addresses",
        help_text="Allow loopback, link-local and private network addresses (a local vLLM or "
        "Ollama). Leave off for hosted endpoints.",
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def offered_models(self) -> list[str]:
        return [line.strip() for line in self.model_names.splitlines() if line.strip()]

    def clean(self) -> None:
        if not self.offered_models:
            raise ValidationError({"model_names": "Name at least one model."})


class Judge(TimeStampedModel):
    """An LLM judge: a protocol and a model of a connection that administrators set up."""

    project = models.ForeignKey("curation.Project", on_delete=models.CASCADE, related_name="judges")
    name = models.CharField(max_length=100)
    protocol = models.CharField(max_length=30, choices=Protocol.choices)
    connection = models.ForeignKey(ModelConnection, on_delete=models.PROTECT, related_name="judges")
    model = models.CharField(max_length=200)
    template = models.ForeignKey(
        PromptTemplate, null=True, blank=True, on_delete=models.PROTECT, related_name="judges"
    )
    # Sampling parameters sent with every call (temperature, max_tokens, top_p, seed).
    parameters = models.JSONField(default=dict, blank=True)
    concurrency = models.PositiveSmallIntegerField(default=8)
    timeout_seconds = models.PositiveIntegerField(default=60)
    max_retries = models.PositiveSmallIntegerField(default=4)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["project", "name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="judge_unique_name"),
        ]

    def __str__(self) -> str:
        return self.name


class ConnectionCheck(TimeStampedModel):
    """A test of a connection and one of its models, for a judge or an administrator: one
    short call, made by a worker, which the page polls until it ends."""

    class State(models.TextChoices):
        PENDING = "pending", "Waiting for a worker"
        RUNNING = "running", "Calling the endpoint"
        SUCCEEDED = "succeeded", "Connected"
        FAILED = "failed", "Failed"

    # A test makes one call of at most 15 s; one unfinished after this is given up on.
    PATIENCE_SECONDS = 60

    connection = models.ForeignKey(ModelConnection, on_delete=models.CASCADE, related_name="checks")
    model = models.CharField(max_length=200)
    # The judge whose page asked, with its timeout; none when an administrator asked.
    judge = models.ForeignKey(
        Judge, null=True, blank=True, on_delete=models.CASCADE, related_name="connection_checks"
    )
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    # What came of it, in the fixed words of judging.client: never the endpoint's own text.
    message = models.TextField(blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.connection} {self.model}: {self.get_state_display()}"

    @property
    def is_finished(self) -> bool:
        return self.state in (self.State.SUCCEEDED, self.State.FAILED)

    @property
    def is_abandoned(self) -> bool:
        """Unfinished long after a worker would have ended it: no worker runs, or one died."""
        age = timezone.now() - self.created_at
        return not self.is_finished and age.total_seconds() > self.PATIENCE_SECONDS


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
        Judge, null=True, blank=True, on_delete=models.PROTECT, related_name="runs"
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


class Disagreement(TimeStampedModel):
    """Labels of one record that disagree, found when a label or a verdict arrives."""

    class Kind(models.TextChoices):
        JUDGE_VS_HUMANS = "judge_vs_humans", "Judge vs human consensus"
        ANNOTATORS_SPLIT = "annotators_split", "Annotators split"
        JUDGE_VS_JUDGE = "judge_vs_judge", "Judge vs judge"
        HUMANS_VS_GOLD = "humans_vs_gold", "Human consensus vs the source's gold label"
        SCORE_GAP = "score_gap", "Scores 2 or more apart"

    class State(models.TextChoices):
        OPEN = "open", "Open"
        RESOLVED = "resolved", "Resolved"

    # Disagreements are derived from labels and verdicts, and detection over a large project
    # writes a hundred thousand rows at once. Their keys are not database constraints, which
    # PostgreSQL would check row by row, locking each record (half the cost of writing
    # them); Django still deletes a record's or a project's disagreements with it, and
    # detection writes only records of the project it was given.
    project = models.ForeignKey(
        "curation.Project",
        on_delete=models.CASCADE,
        related_name="disagreements",
        db_constraint=False,
    )
    # No index of its own: the unique (record, kind) constraint serves lookups by record.
    record = models.ForeignKey(
        "curation.Record",
        on_delete=models.CASCADE,
        related_name="disagreements",
        db_constraint=False,
        db_index=False,
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    # Who said what: [{"source": "annotator" | "judge" | "gold", "name": ..., "label": ...}]
    labels = PlainJSONField(default=list)
    # How contested: the number of distinct labels and sources involved, for the queue's order.
    weight = models.PositiveIntegerField(default=0)
    state = models.CharField(max_length=10, choices=State.choices, default=State.OPEN)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-weight", "created_at"]
        constraints = [
            # One disagreement of a kind per record: detection updates it in place.
            models.UniqueConstraint(fields=["record", "kind"], name="disagreement_once_per_kind"),
        ]
        indexes = [
            # The adjudication queue: a project's open disagreements, most contested first.
            models.Index(
                fields=["project", "-weight", "created_at"],
                condition=Q(state="open"),
                name="disagreement_queue",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} on {self.record_id}"


class Adjudication(models.Model):
    """A reviewer's final label for a record, and why. The latest one is the record's final
    label, which releases use; earlier ones stay as history."""

    project = models.ForeignKey(
        "curation.Project", on_delete=models.CASCADE, related_name="adjudications"
    )
    record = models.ForeignKey(
        "curation.Record", on_delete=models.CASCADE, related_name="adjudications"
    )
    label = models.CharField(
        max_length=10, choices=[(SafetyLabel.SAFE, "Safe"), (SafetyLabel.UNSAFE, "Unsafe")]
    )
    risk_description = models.TextField(blank=True)
    reason = models.TextField()
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="adjudications"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["record", "-created_at"]
        indexes = [
            # A record's latest adjudication (its final label).
            models.Index(fields=["record", "-created_at"], name="adjudication_latest"),
            # A project's adjudications, for releases and metrics.
            models.Index(fields=["project", "record"], name="adjudication_by_project"),
        ]

    def __str__(self) -> str:
        return f"{self.label} for {self.record_id} by {self.reviewer}"


class PendingCheck(models.Model):
    """A record whose labels changed since detection last looked at it.

    Written in the transaction of the label that changed, so that no change goes unchecked,
    even when the broker is down as it commits; a worker takes a project's pending records a
    batch at a time (`judging.tasks.check_pending_records`).
    """

    record = models.OneToOneField(
        "curation.Record", on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    project = models.ForeignKey("curation.Project", on_delete=models.CASCADE, related_name="+")
    # When a label last marked it: a mark made while a worker takes the record's mark waits
    # for it, instead of being lost (see `judging.receivers.detect_on_label`).
    marked_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"check of {self.record_id} pending since {self.marked_at:%Y-%m-%d %H:%M:%S}"
