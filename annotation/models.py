from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from curation.choices import SafetyLabel
from curation.models.base import TimeStampedModel

# ToolEmu's scales: what each 0-3 score means.
SAFETY_SCORES: dict[int, str] = {
    3: "Certain No Risk",
    2: "Possible Mild Risk",
    1: "Likely Mild Risk or Possible Severe Risk",
    0: "Likely Severe Risk",
}
HELPFULNESS_SCORES: dict[int, str] = {3: "Excellent", 2: "Good", 1: "Unsatisfactory", 0: "Poor"}


class GuidelineVersion(TimeStampedModel):
    """One version of a project's annotation guidelines (markdown). Versions are never edited:
    a change is a new version, and every annotation names the version it was made under."""

    project = models.ForeignKey(
        "curation.Project", on_delete=models.CASCADE, related_name="guideline_versions"
    )
    number = models.PositiveIntegerField()
    text = models.TextField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        # The table this model had when it lived in the curation app (see migrations/0001).
        db_table = "curation_guidelineversion"
        ordering = ["project", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["project", "number"], name="guideline_unique_number"),
        ]

    def __str__(self) -> str:
        return f"Guidelines v{self.number}"


class Lease(TimeStampedModel):
    """A record handed to an annotator: theirs to label until it expires.

    One row per record and annotator, ever: it remembers what the annotator was given, so that
    nobody is offered a record twice (an expired lease may be taken up again by the same person).
    """

    class State(models.TextChoices):
        ACTIVE = "active", "Active"
        SUBMITTED = "submitted", "Submitted"
        SKIPPED = "skipped", "Skipped"
        EXPIRED = "expired", "Expired"

    project = models.ForeignKey("curation.Project", on_delete=models.CASCADE, related_name="leases")
    record = models.ForeignKey("curation.Record", on_delete=models.CASCADE, related_name="leases")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="leases"
    )
    state = models.CharField(max_length=10, choices=State.choices, default=State.ACTIVE)
    expires_at = models.DateTimeField()
    skip_reason = models.TextField(blank=True)
    # The label being written, kept on the server as the annotator types.
    draft = models.JSONField(default=dict, blank=True)
    # When the annotator first saw the record, for the time spent on it.
    opened_at = models.DateTimeField()

    class Meta:
        # The table this model had when it lived in the curation app (see migrations/0001).
        db_table = "curation_lease"
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["record", "annotator"], name="lease_once_per_annotator"
            ),
            # An annotator works on one record of a project at a time.
            models.UniqueConstraint(
                fields=["project", "annotator"],
                condition=Q(state="active"),
                name="lease_one_active",
            ),
        ]
        indexes = [
            # Reclaiming expired leases: the active ones, soonest to expire first.
            models.Index(
                fields=["expires_at"], condition=Q(state="active"), name="lease_active_expiry"
            ),
            # "My work": an annotator's leases in a project, newest first.
            models.Index(fields=["annotator", "project", "-created_at"], name="lease_by_annotator"),
        ]

    def __str__(self) -> str:
        return f"{self.record} for {self.annotator} ({self.state})"


class Annotation(TimeStampedModel):
    """One annotator's label of one record. Typed columns, so that statistics are SQL."""

    project = models.ForeignKey(
        "curation.Project", on_delete=models.CASCADE, related_name="annotations"
    )
    record = models.ForeignKey(
        "curation.Record", on_delete=models.CASCADE, related_name="annotations"
    )
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotations"
    )
    verdict = models.CharField(max_length=10, choices=SafetyLabel.choices)
    risk_types = models.ManyToManyField("curation.RiskType", blank=True, related_name="annotations")
    risk_description = models.TextField(blank=True)
    safety_score = models.PositiveSmallIntegerField(null=True, blank=True)
    helpfulness_score = models.PositiveSmallIntegerField(null=True, blank=True)
    # Turn numbers (1..n, as the record page numbers them) that show the risk.
    evidence_turns = models.JSONField(default=list, blank=True)
    guideline_version = models.ForeignKey(
        GuidelineVersion,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="annotations",
    )
    # Time with the record open before the first submission, in milliseconds.
    time_spent_ms = models.PositiveIntegerField(default=0)
    # Raised by every edit; an edit must name the version it was made from (optimistic lock).
    version = models.PositiveIntegerField(default=1)

    class Meta:
        # The table this model had when it lived in the curation app (see migrations/0001).
        db_table = "curation_annotation"
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["record", "annotator"], name="annotation_once_per_annotator"
            ),
            models.CheckConstraint(
                condition=Q(safety_score__isnull=True) | Q(safety_score__lte=3),
                name="annotation_safety_score_0_3",
            ),
            models.CheckConstraint(
                condition=Q(helpfulness_score__isnull=True) | Q(helpfulness_score__lte=3),
                name="annotation_helpfulness_score_0_3",
            ),
        ]
        indexes = [
            # "My work" and progress per annotator: an annotator's labels in a project.
            models.Index(fields=["project", "annotator", "-created_at"], name="annotation_mine"),
            # Labels per day for the progress charts.
            models.Index(fields=["project", "created_at"], name="annotation_by_day"),
        ]

    def __str__(self) -> str:
        return f"{self.verdict} on {self.record} by {self.annotator}"
