"""Judges: their protocols, custom prompt templates and the judges themselves."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models

from curation.models import TimeStampedModel

if TYPE_CHECKING:
    pass


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
