from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from curation.choices import ConsensusRule
from curation.models.base import TimeStampedModel


class Role(models.TextChoices):
    ANNOTATOR = "annotator", "Annotator"
    AUTHOR = "author", "Author"
    REVIEWER = "reviewer", "Reviewer"
    MANAGER = "manager", "Manager"


class Project(TimeStampedModel):
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=80, unique=True)
    description = models.TextField(blank=True)
    license = models.CharField(max_length=200, blank=True)

    # Annotation: how many annotators label each record (k), how long a record stays leased,
    # and which fields the labelling form asks besides the verdict.
    overlap = models.PositiveSmallIntegerField(
        default=2, validators=[MinValueValidator(1), MaxValueValidator(20)]
    )
    lease_minutes = models.PositiveIntegerField(
        default=30, validators=[MinValueValidator(1), MaxValueValidator(24 * 60)]
    )
    ask_risk_types = models.BooleanField(default=True)
    ask_risk_description = models.BooleanField(
        default=True, help_text="Asked, and required when the verdict is unsafe."
    )
    ask_safety_score = models.BooleanField(default=False)
    ask_helpfulness_score = models.BooleanField(default=False)
    ask_evidence_turns = models.BooleanField(default=True)
    # A default in the database too: rows written without the field (older code, raw SQL) get
    # the rule projects had before it could be chosen.
    consensus_rule = models.CharField(
        max_length=10,
        choices=ConsensusRule.choices,
        default=ConsensusRule.MAJORITY,
        db_default=ConsensusRule.MAJORITY,
    )

    # Task review: approvals a task needs from distinct reviewers (K), and how long a reviewer
    # holds a task they opened.
    required_approvals = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(10)]
    )
    review_lease_minutes = models.PositiveIntegerField(
        default=60, validators=[MinValueValidator(1), MaxValueValidator(7 * 24 * 60)]
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Membership(TimeStampedModel):
    """One role of one user in one project; a user may hold several roles in a project."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=20, choices=Role.choices)

    class Meta:
        ordering = ["project", "user", "role"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "user", "role"], name="membership_one_role_once"
            ),
        ]
        # The unique constraint's index (project, user, role) serves "which roles does this
        # user hold here?", asked on every project page.
        indexes = [
            # The home page: "which projects am I in?".
            models.Index(fields=["user", "project"], name="membership_by_user"),
        ]

    def __str__(self) -> str:
        return f"{self.user} as {self.role} in {self.project}"
