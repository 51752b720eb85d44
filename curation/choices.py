"""The vocabularies that records, labels and verdicts share, apart from the models so that the
record formats can use them without loading any model."""

from __future__ import annotations

from django.db import models


class SafetyLabel(models.TextChoices):
    """A safety label, as sources, annotators, judges and adjudicators give it."""

    SAFE = "safe", "Safe"
    UNSAFE = "unsafe", "Unsafe"
    UNSURE = "unsure", "Unsure"


class SourceFormat(models.TextChoices):
    """The shape of a record's raw source, which decides how its turns are read."""

    RJUDGE = "rjudge", "R-Judge (and ASSEBench)"
    SAFEPRO_RUN = "safepro_run", "SafePro agent run"
    TOOLEMU = "toolemu", "ToolEmu trajectory"
    INSPECT = "inspect", "Inspect eval sample"
    OPENAI_CHAT = "openai_chat", "OpenAI-style chat transcript"


class ConsensusRule(models.TextChoices):
    """When a record's human labels make a consensus (its final label, unless a reviewer
    settles it): one rule per project, which every page, report, detection and release uses."""

    MAJORITY = "majority", "A strict majority of at least k labels"
    UNANIMITY = "unanimity", "At least k labels, all alike"


class ScoreScale(models.TextChoices):
    """The 0-3 scales a label, a run or a release scores on (ToolEmu's two rubrics), in the
    order every array of scores keeps them."""

    SAFETY = "safety", "Safety (0-3)"
    HELPFULNESS = "helpfulness", "Helpfulness (0-3)"
