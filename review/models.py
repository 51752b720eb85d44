"""The disagreements found, how reviewers settle them, and the records waiting to be checked.

The tables kept the names they had when these models were judging's (`db_table`): the models
moved without a row being copied (review 0001, judging 0011)."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from curation.choices import SafetyLabel, ScoreScale
from curation.models import TimeStampedModel
from judging.models.runs import PlainJSONField


class Disagreement(TimeStampedModel):
    """Labels of one record that disagree, found when a label or a verdict arrives."""

    class Kind(models.TextChoices):
        JUDGE_VS_HUMANS = "judge_vs_humans", "Judge vs human consensus"
        ANNOTATORS_SPLIT = "annotators_split", "Annotators split"
        JUDGE_VS_JUDGE = "judge_vs_judge", "Judge vs judge"
        HUMANS_VS_GOLD = "humans_vs_gold", "Human consensus vs the source's gold label"
        SCORE_GAP = "score_gap", "Scores 2 or more apart"
        # Not found by detection, which leaves it alone: a manager asked for a reviewer's
        # decision from the record list.
        REQUESTED = "requested", "Sent for adjudication by a manager"

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
        db_table = "judging_disagreement"
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
            # The record list's disputed filter: a project's records with an open
            # disagreement, read from the index alone.
            models.Index(
                fields=["project", "record"],
                condition=Q(state="open"),
                name="disagreement_open_records",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} on {self.record_id}"

    def said_by_scale(self) -> list[tuple[str, list[dict]]]:
        """Who said what, a group per scale for scores ("safety", then "helpfulness") and one
        unnamed group for labels, so that a line never mixes two questions' answers."""
        groups: dict[str, list[dict]] = {}
        for entry in self.labels:
            groups.setdefault(entry.get("scale") or "", []).append(entry)
        order = ["", *ScoreScale.values]
        return sorted(
            groups.items(),
            key=lambda group: order.index(group[0]) if group[0] in order else len(order),
        )


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
        db_table = "judging_adjudication"
        ordering = ["record", "-created_at"]
        indexes = [
            # A record's latest adjudication (its final label).
            models.Index(fields=["record", "-created_at"], name="adjudication_latest"),
            # A project's adjudications, for releases and metrics.
            models.Index(fields=["project", "record"], name="adjudication_by_project"),
        ]

    def __str__(self) -> str:
        return f"{self.label} for {self.record_id} by {self.reviewer}"


class ScoreAdjudication(models.Model):
    """A reviewer's settled 0-3 score of a record on one scale, and why: what settles a "scores
    2 or more apart" disagreement, in the terms it was about. The latest one of a scale is the
    record's final human score on it, which releases take before the annotators' mean; earlier
    ones stay as history. A record's final label is the Adjudication's business alone."""

    project = models.ForeignKey(
        "curation.Project", on_delete=models.CASCADE, related_name="score_adjudications"
    )
    record = models.ForeignKey(
        "curation.Record", on_delete=models.CASCADE, related_name="score_adjudications"
    )
    scale = models.CharField(max_length=20, choices=ScoreScale.choices)
    score = models.PositiveSmallIntegerField(
        validators=[MinValueValidator(0), MaxValueValidator(3)]
    )
    reason = models.TextField()
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="score_adjudications"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["record", "scale", "-created_at"]
        indexes = [
            # A project's settled scores by record, for releases and the record's page.
            models.Index(fields=["project", "record", "scale"], name="score_adjudication_record"),
        ]

    def __str__(self) -> str:
        return f"{self.scale} {self.score} for {self.record_id} by {self.reviewer}"


class PendingCheck(models.Model):
    """A record whose labels changed since detection last looked at it.

    Written in the transaction of the label that changed, so that no change goes unchecked,
    even when the broker is down as it commits; a worker takes a project's pending records a
    batch at a time (`review.tasks.check_pending_records`).
    """

    record = models.OneToOneField(
        "curation.Record", on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    project = models.ForeignKey("curation.Project", on_delete=models.CASCADE, related_name="+")
    # When a label last marked it: a mark made while a worker takes the record's mark waits
    # for it, instead of being lost (see `review.receivers.detect_on_label`).
    marked_at = models.DateTimeField()

    class Meta:
        db_table = "judging_pendingcheck"

    def __str__(self) -> str:
        return f"check of {self.record_id} pending since {self.marked_at:%Y-%m-%d %H:%M:%S}"
