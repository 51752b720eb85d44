from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models
from django.utils import timezone

from curation.models.base import TimeStampedModel
from curation.models.projects import Project, Role


def api_key_hash(key: str) -> str:
    """What is stored of an API key. The keys are random and long, so a plain SHA-256 is enough:
    a slow hash is for passwords people choose."""
    return hashlib.sha256(key.encode()).hexdigest()


class ApiToken(TimeStampedModel):
    """A key for the API, sent as `Authorization: Token <key>`; only its hash is kept, and the
    key is shown once, when it is made."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    key_hash = models.CharField(max_length=64)
    # The key's first characters, for its owner to tell their tokens apart.
    prefix = models.CharField(max_length=8)
    expires_at = models.DateTimeField()
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # Its index serves the lookup of every API request by token.
            models.UniqueConstraint(fields=["key_hash"], name="api_token_key_hash_unique"),
        ]
        indexes = [
            # The account page: "my tokens".
            models.Index(fields=["user", "created_at"], name="api_token_by_user"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def expired(self) -> bool:
        return self.expires_at <= timezone.now()


class Invitation(TimeStampedModel):
    """A manager's offer of a role in their project to someone without an account: the link
    made for it creates the account, with the password its holder chooses, once."""

    class State(models.TextChoices):
        PENDING = "pending", "Pending"
        ACCEPTED = "accepted", "Accepted"
        WITHDRAWN = "withdrawn", "Withdrawn"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="invitations")
    username = models.CharField(max_length=150)
    role = models.CharField(max_length=20, choices=Role.choices)
    state = models.CharField(max_length=20, choices=State.choices, default=State.PENDING)
    expires_at = models.DateTimeField()
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    # The account the invitation made, once accepted.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    accepted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # Two live links for one username would race to make the same account. Its index
            # also serves the members page's list of a project's pending invitations.
            models.UniqueConstraint(
                fields=["project", "username"],
                condition=models.Q(state="pending"),
                name="invitation_one_pending_per_username",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.username} as {self.role} in {self.project}"

    @property
    def expired(self) -> bool:
        return self.expires_at <= timezone.now()
