"""SafePro-style benchmark tasks, written by authors and reviewed in rounds."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from curation.models.base import TimeStampedModel

# SafePro's risk categories, seeded into every new project (slug, name).
SAFEPRO_RISK_CATEGORIES: tuple[tuple[str, str], ...] = (
    ("physical-harm", "Physical harm"),
    ("financial-harm", "Financial harm"),
    ("system-compromise", "System compromise"),
    ("discrimination-bias", "Discrimination / bias"),
    ("illegal-or-regulatory", "Other illegal or breach of regulations"),
)

# Checks a reviewer ticks for every task, seeded into every new project; managers edit them.
DEFAULT_RUBRIC: tuple[str, ...] = (
    "The risk is realistic for the profession.",
    "The task is professionally complex.",
    "The unsafe and safe criteria are objective and checkable.",
    "The task contains no real personal data.",
)

# The fields of a task that a revision freezes and a review comments on, in display order.
TASK_FIELDS: tuple[str, ...] = (
    "sector",
    "occupation",
    "prompt",
    "messages",
    "risk_category",
    "malicious_motivation",
    "risk_outcome",
    "unsafe_criteria",
    "safe_criteria",
    "reference_files",
)


class RiskCategory(TimeStampedModel):
    project = models.ForeignKey(
        "curation.Project", on_delete=models.CASCADE, related_name="risk_categories"
    )
    slug = models.SlugField(max_length=80)
    name = models.CharField(max_length=100)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        # The table this model had when it lived in the curation app (see migrations/0001).
        db_table = "curation_riskcategory"
        ordering = ["position", "name"]
        verbose_name_plural = "risk categories"
        constraints = [
            models.UniqueConstraint(fields=["project", "slug"], name="riskcategory_unique_slug"),
        ]

    def __str__(self) -> str:
        return self.name


class RubricCheck(TimeStampedModel):
    project = models.ForeignKey(
        "curation.Project", on_delete=models.CASCADE, related_name="rubric_checks"
    )
    text = models.CharField(max_length=300)
    position = models.PositiveSmallIntegerField(default=0)
    # Retired checks stay for the reviews that used them, but new reviews do not ask them.
    active = models.BooleanField(default=True)

    class Meta:
        # The table this model had when it lived in the curation app (see migrations/0001).
        db_table = "curation_rubriccheck"
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return self.text


class Task(TimeStampedModel):
    class State(models.TextChoices):
        DRAFT = "draft", "Draft"
        SUBMITTED = "submitted", "Submitted"
        IN_REVIEW = "in_review", "In review"
        CHANGES_REQUESTED = "changes_requested", "Changes requested"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"
        WITHDRAWN = "withdrawn", "Withdrawn"

    project = models.ForeignKey("curation.Project", on_delete=models.CASCADE, related_name="tasks")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="authored_tasks"
    )
    # SafePro's task_id; set on import, or made from the primary key for tasks written here.
    external_id = models.CharField(max_length=200)
    sector = models.CharField(max_length=200)
    occupation = models.CharField(max_length=200)
    prompt = models.TextField()
    # [{"sender": "user" | ..., "content": "..."}]
    messages = models.JSONField(default=list, blank=True)
    risk_category = models.ForeignKey(
        RiskCategory, null=True, blank=True, on_delete=models.PROTECT, related_name="tasks"
    )
    malicious_motivation = models.TextField(blank=True)
    risk_outcome = models.TextField(blank=True)
    unsafe_criteria = models.TextField(blank=True)
    safe_criteria = models.TextField(blank=True)
    state = models.CharField(max_length=20, choices=State.choices, default=State.DRAFT)
    # Raised by every edit and transition: a change made from a stale copy is refused.
    version = models.PositiveIntegerField(default=1)
    # Submissions so far: the number of the latest revision.
    round = models.PositiveIntegerField(default=0)
    submitted_at = models.DateTimeField(null=True, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    # The reviewer holding the task while it is in review, and until when.
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="tasks_in_review",
    )
    review_expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        # The table this model had when it lived in the curation app (see migrations/0001).
        db_table = "curation_task"
        ordering = ["-updated_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"], name="task_unique_external_id"
            ),
        ]
        indexes = [
            # The review queue: a project's submitted tasks, oldest submission first.
            models.Index(fields=["project", "state", "submitted_at"], name="task_queue"),
            # The author's queue: my tasks in a project by state.
            models.Index(fields=["project", "author", "state"], name="task_by_author"),
        ]

    def __str__(self) -> str:
        return f"{self.sector} - {self.occupation}: {self.external_id}"


def task_files_folder(project_id: int) -> str:
    """Where the reference files of the project's tasks are, a folder a task."""
    # Under MEDIA_ROOT, which no URL serves: files reach members only through a checked view.
    return f"tasks/{project_id}"


def reference_file_path(instance: ReferenceFile, filename: str) -> str:
    return f"{task_files_folder(instance.task.project_id)}/{instance.task_id}/{filename}"


class ReferenceFile(TimeStampedModel):
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="reference_files")
    file = models.FileField(upload_to=reference_file_path, max_length=400)
    name = models.CharField(max_length=200)
    content_type = models.CharField(max_length=100)
    size = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        # The table this model had when it lived in the curation app (see migrations/0001).
        db_table = "curation_referencefile"
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["task", "name"], name="referencefile_unique_name"),
        ]

    def __str__(self) -> str:
        return self.name


class FrozenRevision(Exception):
    """Something tried to change a revision after it was made."""


class TaskRevision(models.Model):
    """What a task said when it was submitted: frozen, never edited."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    # Every field of TASK_FIELDS as submitted (the risk category by name, files by name and hash).
    content = models.JSONField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # The table this model had when it lived in the curation app (see migrations/0001).
        db_table = "curation_taskrevision"
        ordering = ["task", "number"]
        constraints = [
            models.UniqueConstraint(fields=["task", "number"], name="taskrevision_unique_number"),
        ]

    def __str__(self) -> str:
        return f"{self.task} r{self.number}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        # Reviews and diffs point at what was submitted: a revision changed afterwards would make
        # them say something else.
        if not self._state.adding:
            raise FrozenRevision(f"Revision {self.number} of a task is frozen: it cannot change.")
        super().save(*args, **kwargs)


class Review(models.Model):
    class Decision(models.TextChoices):
        APPROVE = "approve", "Approve"
        REQUEST_CHANGES = "request_changes", "Request changes"
        REJECT = "reject", "Reject"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="reviews")
    revision = models.ForeignKey(TaskRevision, on_delete=models.PROTECT, related_name="reviews")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="task_reviews"
    )
    decision = models.CharField(max_length=20, choices=Decision.choices)
    # {field name: comment} for the fields of TASK_FIELDS the reviewer commented on.
    comments = models.JSONField(default=dict, blank=True)
    summary = models.TextField(blank=True)
    # {rubric check id (as text): true / false}
    rubric = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # The table this model had when it lived in the curation app (see migrations/0001).
        db_table = "curation_review"
        ordering = ["task", "created_at"]
        constraints = [
            # A reviewer decides on a revision once.
            models.UniqueConstraint(
                fields=["revision", "reviewer"], name="review_once_per_revision"
            ),
        ]
        indexes = [
            # Workflow statistics: reviews of a project by time.
            models.Index(fields=["task", "created_at"], name="review_by_task"),
        ]

    def __str__(self) -> str:
        return f"{self.get_decision_display()} of {self.revision} by {self.reviewer}"


class TaskImport(TimeStampedModel):
    """An uploaded SafePro file being imported by a worker, and what came of it."""

    class State(models.TextChoices):
        PENDING = "pending", "Waiting for a worker"
        RUNNING = "running", "Importing"
        SUCCEEDED = "succeeded", "Imported"
        FAILED = "failed", "Failed"

    project = models.ForeignKey(
        "curation.Project", on_delete=models.CASCADE, related_name="task_imports"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Under MEDIA_ROOT, outside the web root; removed once the import has finished either way.
    upload = models.FileField(upload_to="task-imports/%Y/%m/", blank=True, max_length=300)
    source_name = models.CharField(max_length=300)
    # The state the imported tasks start in (draft or approved).
    task_state = models.CharField(max_length=20, choices=Task.State.choices)
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The task_ids imported, and those the project had already (left alone).
    created = models.JSONField(default=list, blank=True)
    existing = models.JSONField(default=list, blank=True)
    # [{"key", "index", "field", "message"}]; nothing was written when there are any.
    problems = models.JSONField(default=list, blank=True)

    class Meta:
        indexes = [
            # The project's task imports, newest first.
            models.Index(fields=["project", "-created_at"], name="taskimport_recent"),
        ]

    def __str__(self) -> str:
        return f"Import of {self.source_name}"

    @property
    def is_finished(self) -> bool:
        return self.state in (self.State.SUCCEEDED, self.State.FAILED)


class RecordTask(models.Model):
    """The SafePro task an agent run was made for: a record imported from a SafePro run file.

    Authoring owns this link so that curation's records name nothing above them. Its column has
    always been the record table's `task_id`, and it stays there: this model reads and writes
    that column of `curation_record`, one row per record (`task` is empty for records that are
    no agent run), and creates no table of its own. So the link moved without a row being
    copied, and a record and its task are still one row to read. The column keeps its partial
    index, `record_by_task` (a task's agent runs; most records belong to no task), which
    curation's migrations made.
    """

    record = models.OneToOneField(
        "curation.Record",
        primary_key=True,
        db_column="id",
        # The row is the record's own: deleting the record deletes it.
        on_delete=models.DO_NOTHING,
        related_name="task_link",
    )
    task = models.ForeignKey(
        Task,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="record_links",
        db_index=False,
    )

    class Meta:
        managed = False
        db_table = "curation_record"

    def __str__(self) -> str:
        return f"record {self.record_id} of task {self.task_id}"
