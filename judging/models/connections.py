"""Model connections (site administrators' own) and the checks that test them."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator, RegexValidator
from django.db import models
from django.utils import timezone

from curation.models import TimeStampedModel

# What a connection allows a judge to ask for in one answer, unless its administrator says.
DEFAULT_MAX_TOKENS = 16_384


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
    tokens_per_minute = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Tokens (prompt and answer) per minute, all runs and workers together; empty: "
        "no limit.",
    )
    # Bounds what a judge may ask for, and so what one call may draw from the shared limits.
    max_tokens = models.PositiveIntegerField(
        default=DEFAULT_MAX_TOKENS,
        validators=[MinValueValidator(1)],
        verbose_name="largest max_tokens",
        help_text="The most tokens a judge may ask for in one answer (its max_tokens). At most "
        "the tokens per minute, when they are limited.",
    )
    # What the provider charges; runs keep the prices they started with, so a run's cost stays
    # what it was when prices change. Managers see prices and costs, which are theirs to spend.
    price_in_per_million = models.DecimalField(
        max_digits=10,
        decimal_places=4,
        null=True,
        blank=True,
        verbose_name="price per million input tokens",
        help_text="In the currency budgets are given in; empty: not priced.",
    )
    price_out_per_million = models.DecimalField(
        max_digits=10,
        decimal_places=4,
        null=True,
        blank=True,
        verbose_name="price per million output tokens",
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
        if self.tokens_per_minute and self.max_tokens > self.tokens_per_minute:
            raise ValidationError(
                {
                    "max_tokens": "At most the tokens per minute: a provider refuses a request "
                    "larger than its limit, and so would the studio's."
                }
            )


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
        "judging.Judge",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="connection_checks",
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
