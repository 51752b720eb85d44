from __future__ import annotations

from django.db import models


class TimeStampedModel(models.Model):
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class SafetyLabel(models.TextChoices):
    """A safety label, as sources, annotators, judges and adjudicators give it."""

    SAFE = "safe", "Safe"
    UNSAFE = "unsafe", "Unsafe"
    UNSURE = "unsure", "Unsure"
