"""Judges: their protocols, custom prompt templates and the judges themselves."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from curation.models import TimeStampedModel


class Protocol(models.TextChoices):
    RJUDGE = "rjudge", "R-Judge two-step (analysis, then safe / unsafe)"
    SAFEPRO = "safepro", "SafePro verdict (JSON verdict and reasoning)"
    TOOLEMU_SAFETY = "toolemu_safety", "ToolEmu safety (0-3)"
    TOOLEMU_HELPFULNESS = "toolemu_helpfulness", "ToolEmu helpfulness (0-3)"
    CUSTOM = "custom", "Custom prompt template"


# The protocols that give 0-3 scores rather than safe or unsafe: their runs are not compared
# with labels, nor combined into panels.
SCORE_PROTOCOLS: tuple[str, ...] = (Protocol.TOOLEMU_SAFETY, Protocol.TOOLEMU_HELPFULNESS)


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


class Judge(TimeStampedModel):
    """An LLM judge: a protocol and a model of a connection that administrators set up."""

    project = models.ForeignKey("curation.Project", on_delete=models.CASCADE, related_name="judges")
    name = models.CharField(max_length=100)
    protocol = models.CharField(max_length=30, choices=Protocol.choices)
    connection = models.ForeignKey(
        "judging.ModelConnection", on_delete=models.PROTECT, related_name="judges"
    )
    model = models.CharField(max_length=200)
    template = models.ForeignKey(
        PromptTemplate, null=True, blank=True, on_delete=models.PROTECT, related_name="judges"
    )
    # Sampling parameters sent with every call (temperature, max_tokens, top_p, seed).
    parameters = models.JSONField(default=dict, blank=True)
    concurrency = models.PositiveSmallIntegerField(default=8)
    timeout_seconds = models.PositiveIntegerField(default=60)
    max_retries = models.PositiveSmallIntegerField(default=4)
    # The version runs are started with; none: version 1, the prompt as written, no examples.
    active_version = models.ForeignKey(
        "judging.JudgeVersion",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
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


class JudgeVersion(models.Model):
    """A version of a judge's prompt that carries settled cases as worked examples.

    Version 1 of every judge is its prompt as written and has no row; rows are numbered from 2.
    A version is never edited: its examples are copied in when it is made (the record's text,
    the reviewer's final label and reason), so that a later adjudication or a record edited
    changes neither the version nor the runs made with it.
    """

    class Picked(models.TextChoices):
        BY_HAND = "by_hand", "Chosen by hand"
        AUTOMATIC = "automatic", "Most contested first, one per category"

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    picked = models.CharField(max_length=10, choices=Picked.choices)
    # [{"record_id", "external_id", "category", "scenario", "profile", "goal", "interaction",
    #   "label", "reason"}], in the order the prompt quotes them.
    examples = models.JSONField(default=list)
    note = models.CharField(max_length=200, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["judge", "number"]
        constraints = [
            models.UniqueConstraint(fields=["judge", "number"], name="judgeversion_unique_number"),
            models.CheckConstraint(condition=models.Q(number__gte=2), name="judgeversion_from_2"),
        ]

    def __str__(self) -> str:
        return f"{self.judge} v{self.number}"

    @property
    def example_record_ids(self) -> list[int]:
        return [example["record_id"] for example in self.examples]


class JudgeEvaluation(models.Model):
    """Two versions of a judge run side by side over settled records that neither quotes as an
    example: the candidate against the baseline (none: version 1, the prompt as written)."""

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="evaluations")
    baseline = models.ForeignKey(
        JudgeVersion, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    candidate = models.ForeignKey(
        JudgeVersion, on_delete=models.CASCADE, related_name="evaluations"
    )
    # The runs stay while the evaluation does, unless both go together (a project deleted).
    baseline_run = models.ForeignKey(
        "judging.JudgeRun", on_delete=models.RESTRICT, related_name="+"
    )
    candidate_run = models.ForeignKey(
        "judging.JudgeRun", on_delete=models.RESTRICT, related_name="+"
    )
    # The held-out settled records both runs judge, in id order.
    record_ids = models.JSONField(default=list)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        baseline = f"v{self.baseline.number}" if self.baseline else "v1"
        return f"{self.judge}: v{self.candidate.number} against {baseline}"
