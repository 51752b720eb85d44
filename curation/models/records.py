from __future__ import annotations

from django.conf import settings
from django.db import models

from curation.models.base import SafetyLabel, TimeStampedModel


class ImportFormat(models.TextChoices):
    AUTO = "auto", "Detect from the file (R-Judge JSON, folder zip, JSONL)"
    RJUDGE = "rjudge", "R-Judge JSON (one scenario file, a folder or a zip of it)"
    JSONL = "jsonl", "JSONL, one record per line"


class ImportBatch(TimeStampedModel):
    """One import: its input, its state, and the report users read afterwards."""

    class State(models.TextChoices):
        PENDING = "pending", "Waiting for a worker"
        RUNNING = "running", "Importing"
        SUCCEEDED = "succeeded", "Imported"
        FAILED = "failed", "Failed, nothing was written"

    project = models.ForeignKey(
        "curation.Project", on_delete=models.CASCADE, related_name="import_batches"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="import_batches",
    )
    source_name = models.CharField(max_length=300)
    # Stored under MEDIA_ROOT, outside the web root; empty for imports from a server path.
    upload = models.FileField(upload_to="imports/%Y/%m/", blank=True, max_length=300)
    format = models.CharField(
        max_length=10, choices=ImportFormat.choices, default=ImportFormat.AUTO
    )
    default_category = models.CharField(max_length=100, blank=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The report.
    record_count = models.PositiveIntegerField(default=0)
    created_count = models.PositiveIntegerField(default=0)
    existing_count = models.PositiveIntegerField(default=0)
    category_counts = models.JSONField(default=dict, blank=True)
    label_counts = models.JSONField(default=dict, blank=True)
    # Groups of external ids whose content is identical, e.g. [["113", "200"]].
    duplicate_groups = models.JSONField(default=list, blank=True)
    # [{"file": ..., "index": ..., "field": ..., "message": ...}], the first problems found.
    errors = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "import batches"
        indexes = [
            # The project's import list, newest first.
            models.Index(fields=["project", "-created_at"], name="importbatch_recent"),
        ]

    def __str__(self) -> str:
        return f"{self.source_name} ({self.get_state_display()})"

    @property
    def is_finished(self) -> bool:
        return self.state in (self.State.SUCCEEDED, self.State.FAILED)


class Record(TimeStampedModel):
    """One multi-turn agent interaction, normalised for display and kept raw for export."""

    project = models.ForeignKey(
        "curation.Project", on_delete=models.CASCADE, related_name="records"
    )
    batch = models.ForeignKey(
        ImportBatch, null=True, blank=True, on_delete=models.SET_NULL, related_name="records"
    )
    external_id = models.CharField(max_length=200)
    category = models.ForeignKey(
        "curation.Category", on_delete=models.PROTECT, related_name="records"
    )
    scenario = models.ForeignKey(
        "curation.Scenario", on_delete=models.PROTECT, related_name="records"
    )
    # Where the record sits in the R-Judge layout ("Application/mail.json") and its position in
    # that file, so that an export writes the same files in the same order.
    source_path = models.CharField(max_length=300)
    source_position = models.PositiveIntegerField()
    profile = models.TextField(blank=True)
    goal = models.TextField(blank=True)
    # [{"round": 0, "role": "user"|"agent"|"environment", "content", "thought", "action"}]
    turns = models.JSONField(default=list)
    attack_type = models.CharField(max_length=50, blank=True)
    gold_label = models.CharField(
        max_length=10,
        blank=True,
        choices=[(SafetyLabel.SAFE, "Safe"), (SafetyLabel.UNSAFE, "Unsafe")],
    )
    gold_risk_description = models.TextField(blank=True)
    # sha256 of the record without its id: equal hashes are exact duplicates.
    content_hash = models.CharField(max_length=64)
    # The record exactly as the source had it (field order included), for lossless export.
    raw = models.TextField()
    # Source fields with no column of their own (ASSEBench's risk_type, failure_mode, ...).
    metadata = models.JSONField(default=dict, blank=True)
    # Lower-cased text of the interaction for the record list's search box.
    search_text = models.TextField(blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"], name="record_unique_external_id"
            ),
        ]
        indexes = [
            # The record list: a project's records in id order, one page at a time.
            models.Index(fields=["project", "id"], name="record_list"),
            # The record list filtered by category and scenario.
            models.Index(fields=["project", "category", "scenario"], name="record_by_scenario"),
            # The record list filtered by gold label and attack type.
            models.Index(fields=["project", "gold_label", "attack_type"], name="record_by_gold"),
            # Export in the R-Judge layout: file by file, in source order.
            models.Index(
                fields=["project", "source_path", "source_position"], name="record_layout"
            ),
            # Exact-duplicate lookups on import.
            models.Index(fields=["project", "content_hash"], name="record_content_hash"),
        ]

    def __str__(self) -> str:
        return f"Record {self.external_id}"
