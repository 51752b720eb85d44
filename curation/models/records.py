from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import F
from django.utils.functional import cached_property

from curation.choices import SafetyLabel, SourceFormat
from curation.formats.turns import test_case_of, turns_of
from curation.models.base import TimeStampedModel


class ImportFormat(models.TextChoices):
    AUTO = "auto", "Detect from the file (R-Judge JSON, folder zip, JSONL, Inspect log)"
    RJUDGE = "rjudge", "R-Judge JSON (one scenario file, a folder or a zip of it)"
    JSONL = "jsonl", "JSONL, one record per line"
    INSPECT = "inspect", "Inspect eval logs (.eval or .json; one, a folder or a zip)"
    OPENAI_CHAT = "openai_chat", "OpenAI-style chat transcripts (JSONL of messages)"


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
        max_length=20, choices=ImportFormat.choices, default=ImportFormat.AUTO
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
    # Of the existing ones, those whose content differs from what is stored: held in
    # RecordChange rows until a manager decides, never taken or dropped silently.
    changed_count = models.PositiveIntegerField(default=0)
    category_counts = models.JSONField(default=dict, blank=True)
    label_counts = models.JSONField(default=dict, blank=True)
    # Groups of external ids whose content is identical, e.g. [["113", "200"]].
    duplicate_groups = models.JSONField(default=list, blank=True)
    # ToolEmu evaluations read, by evaluator and metric: {"gpt-5-mini safe": 144}.
    evaluation_counts = models.JSONField(default=dict, blank=True)
    # [{"file": ..., "index": ..., "field": ..., "message": ...}], the first problems found.
    errors = models.JSONField(default=list, blank=True)
    # When the text search could find every record of the batch (indexing follows the import).
    searchable_at = models.DateTimeField(null=True, blank=True)

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


# A record's label counts, which the record list's filters on labels read (n of k, consensus,
# final label): the list's indexes include them so that those filters read no record's row.
LABEL_COUNTS = ["annotation_count", "extra_labels", "safe_votes", "unsafe_votes"]


class Record(TimeStampedModel):
    """One multi-turn agent interaction: the source record kept raw, with typed columns beside it.

    The raw source is the one copy of the interaction; the normalised turns are read from it
    (`turns`). Storing them a second time would double what an import writes.
    """

    # project and category are the first columns of indexes below, which serve their lookups.
    project = models.ForeignKey(
        "curation.Project", on_delete=models.CASCADE, related_name="records", db_index=False
    )
    # Where the record came from. Batches are looked up by record, not records by batch, except
    # when the admin deletes a batch, which may then scan. No database constraint: the import
    # writes the batch it runs in, and the check would cost every imported row (deleting a batch
    # goes through Django, which sets its records' batch to null).
    batch = models.ForeignKey(
        ImportBatch,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="records",
        db_index=False,
        db_constraint=False,
    )
    external_id = models.CharField(max_length=200)
    # The category is the scenario's, kept on the record to filter and index by it. On
    # PostgreSQL one composite foreign key, (scenario, category) to the scenario's (id,
    # category), checks both and that they agree (migration 0002), in place of two checks.
    category = models.ForeignKey(
        "curation.Category",
        on_delete=models.PROTECT,
        related_name="records",
        db_index=False,
        db_constraint=False,
    )
    scenario = models.ForeignKey(
        "curation.Scenario",
        on_delete=models.PROTECT,
        related_name="records",
        db_index=False,
        db_constraint=False,
    )
    source_format = models.CharField(
        max_length=20, choices=SourceFormat.choices, default=SourceFormat.RJUDGE
    )
    # Where the record sits in the R-Judge layout ("Application/mail.json") and its position in
    # that file, so that an export writes the same files in the same order.
    source_path = models.CharField(max_length=300)
    source_position = models.PositiveIntegerField()
    profile = models.TextField(blank=True)
    goal = models.TextField(blank=True)
    # The start of the user's first message, for lists.
    preview = models.CharField(max_length=200, blank=True)
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
    # Who made the interaction, empty when the source does not say (R-Judge): the agent (its
    # model), the environment's emulator, the test case and which run of it (ToolEmu).
    # Defaults in the database too: the import's COPY, and rows written by older code, may leave
    # them out.
    source_agent = models.CharField(max_length=200, blank=True, default="", db_default="")
    source_emulator = models.CharField(max_length=200, blank=True, default="", db_default="")
    source_case = models.CharField(max_length=200, blank=True, default="", db_default="")
    source_case_index = models.PositiveIntegerField(null=True, blank=True)
    source_replicate = models.CharField(max_length=200, blank=True, default="", db_default="")
    # The table's `task_id` column (the SafePro task an agent run was made for) is authoring's:
    # `authoring.AgentRun` reads and writes it, so that a record names nothing above it.
    # The annotation queue's counts: submitted labels and live leases. They sit on the record's
    # own row so that the claim's row lock guards them (see services/queue.py). Imports leave
    # them to the database's default.
    annotation_count = models.PositiveSmallIntegerField(db_default=0, default=0)
    lease_count = models.PositiveSmallIntegerField(db_default=0, default=0)
    # Labels a manager asked for beyond the project's k: the record takes k + extra_labels.
    extra_labels = models.PositiveSmallIntegerField(db_default=0, default=0)
    # How many of the submitted labels say safe, and unsafe (the rest are unsure), moved with
    # annotation_count by the label services: the record list filters on the consensus they
    # give (annotation/consensus.py `consensus_condition`) without counting labels per record.
    safe_votes = models.PositiveSmallIntegerField(db_default=0, default=0)
    unsafe_votes = models.PositiveSmallIntegerField(db_default=0, default=0)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"], name="record_unique_external_id"
            ),
        ]
        indexes = [
            # The record list: a project's records in id order, one page at a time. The label
            # counts are included so that counting and paging a filter on labels (n of k,
            # consensus, final label: hub/record_list.py) reads the index alone.
            models.Index(
                fields=["project", "id"],
                name="record_list",
                include=LABEL_COUNTS,
            ),
            # The record list filtered by category, and by scenario, with or without a gold
            # label: the project first and the id last, so that counting a filter's records and
            # finding a page's ids read the index alone (the gold label in it took a category
            # and a gold label on page 3 from 56 ms of queries to 8). The label counts are
            # included, as in record_list, so that a category or a scenario combined with a
            # filter on labels reads the index alone too, not 8,000 pages of records.
            models.Index(
                fields=["project", "category", "gold_label", "id"],
                name="record_by_category",
                include=LABEL_COUNTS,
            ),
            models.Index(
                fields=["project", "scenario", "gold_label", "id"],
                name="record_by_scenario",
                include=LABEL_COUNTS,
            ),
            # The record list filtered by gold label and attack type, and the attack types offered.
            models.Index(
                fields=["project", "gold_label", "attack_type", "id"], name="record_by_gold"
            ),
            # The record list filtered by source agent, and the agents offered there.
            models.Index(fields=["project", "source_agent", "id"], name="record_by_source_agent"),
            # The score reports' records with their source agent and case, and each case's
            # first record, read from the index alone (records' rows are wide).
            models.Index(
                fields=["project", "id"],
                include=["source_agent", "source_case"],
                name="record_sources",
            ),
            # Claiming the next record to label: a project's records by slots taken (labels
            # plus leases, less the extra labels asked of it, so that each is measured against
            # the project's k), fullest first, then in id order. The counts themselves are
            # included so that counting the records left to label reads the index alone
            # (PostgreSQL does not take an expression's value from the index for that).
            models.Index(
                F("project"),
                (F("annotation_count") + F("lease_count") - F("extra_labels")).desc(),
                F("id"),
                name="record_queue",
                include=["annotation_count", "lease_count", "extra_labels"],
            ),
            # The record list sorted by labels, fewest or most first.
            models.Index(fields=["project", "annotation_count", "id"], name="record_by_labels"),
        ]

    def __str__(self) -> str:
        return f"Record {self.external_id}"

    @cached_property
    def turns(self) -> list[dict[str, Any]]:
        """The interaction as `[{"round", "role", "content", "thought", "action"}, ...]`."""
        return turns_of(self.source_format, self.raw)

    @cached_property
    def test_case(self) -> dict[str, Any] | None:
        """The test case the interaction was made on (ToolEmu), None when there is none."""
        return test_case_of(self.source_format, self.raw)


class RecordSearchText(models.Model):
    """A record as the record list's search finds it: its row says it is indexed.

    On PostgreSQL, filled by a task after the import commits, not by the import itself:
    maintaining a text index costs several times more than the rest of an import, and records
    can be browsed and labelled before they can be found by text. On SQLite the import fills it
    right after it has stored the records, from words it kept as it wrote them
    (importers.writers.index_kept_words), at a fraction of what reading them back costs. On
    PostgreSQL the row holds the text's words (`vector`); on SQLite they are in an FTS5 table
    (search_text.FTS_TABLE, migration 0011), whose row a trigger deletes with this one: a
    migration that makes SQLite rebuild this table must create the trigger again.
    """

    record = models.OneToOneField(
        Record, primary_key=True, on_delete=models.CASCADE, related_name="search_text"
    )
    project = models.ForeignKey(
        "curation.Project", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    # PostgreSQL's tsvector of the record's words (search_text.search_text_of, words_of),
    # stemmed by the configuration search_text.SEARCH_CONFIG. Migration 0011 puts the GIN index
    # of the record list's text search on it (selectors._text_matches) and keeps it in the row,
    # where phrases are checked. Null on SQLite.
    vector = SearchVectorField(null=True)

    class Meta:
        indexes = [
            # How many of a project's records are searchable yet (an index-only count).
            models.Index(fields=["project"], name="search_text_by_project"),
        ]

    def __str__(self) -> str:
        return f"Search text of record {self.record_id}"


class RecordChange(TimeStampedModel):
    """A record imported again under its id with other content (a flipped label, a new risk
    description), or an imported evaluator's verdict of it imported again with another score:
    the stored version stays until a manager takes the new one or keeps it."""

    class State(models.TextChoices):
        PENDING = "pending", "Waiting for a decision"
        TAKEN = "taken", "New version taken"
        KEPT = "kept", "Stored version kept"

    batch = models.ForeignKey(ImportBatch, on_delete=models.CASCADE, related_name="changes")
    record = models.ForeignKey(Record, on_delete=models.CASCADE, related_name="changes")
    # The name of the imported judge run ("gpt-5-mini safe", as the import's evaluation counts
    # name it) whose verdict of the record this changes; empty for the record's own content.
    # A name, not a key: curation knows nothing of judging's runs (the judging app takes these).
    verdict_of = models.CharField(max_length=200, blank=True)
    # The new version's source text, as the file had it.
    raw = models.TextField()
    # The source fields whose value differs from the stored version's, like ["label"].
    fields = models.JSONField(default=list)
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["batch", "record", "verdict_of"], name="recordchange_once_per_batch"
            ),
        ]

    def __str__(self) -> str:
        return f"Change of {self.record_id} in import {self.batch_id}"
