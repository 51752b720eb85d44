"""Versioned, immutable dataset releases: what went in, frozen at creation, and the files built.

Releases need what both other apps know (records and tasks from curation; final labels,
verdicts and agreement from judging), so they are an app of their own that imports both.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from curation.models import TimeStampedModel

# What a release is built into, kept in its options at creation ("layout"), so that a release
# rebuilds into the very files and bytes it was first built into, whatever the studio learned
# since. 1 (releases made before layouts were kept): the records, labels, pairs, tasks and the
# card. 2: also the Inspect task and dataset, the judge training files, the ToolEmu cases, and
# the metadata in the card's header by which the Hugging Face Hub reads every file.
CURRENT_LAYOUT = 2


class LabelBasis(models.TextChoices):
    FINAL = "final", "Final labels: adjudicated, else the human consensus"
    GOLD = "gold", "The source's gold labels"
    # A scored study (ToolEmu's evaluators, or people scoring 0-3) needs no safe/unsafe label.
    SCORES = "scores", "No safe/unsafe label: the records' 0-3 scores alone"


class Release(TimeStampedModel):
    """A version of a project's curated data: its content frozen at creation (ReleaseRecord,
    ReleaseTask), its files built once from that content and never changed."""

    class State(models.TextChoices):
        PENDING = "pending", "Waiting for a worker"
        BUILDING = "building", "Building"
        BUILT = "built", "Built"
        FAILED = "failed", "Failed"

    project = models.ForeignKey(
        "curation.Project", on_delete=models.CASCADE, related_name="releases"
    )
    # Semantic version, "1.2.0".
    version = models.CharField(max_length=50)
    notes = models.TextField(blank=True)
    license = models.CharField(max_length=100)
    # Which labels the release publishes: the team's final labels, the source's gold labels
    # (to republish an already labelled dataset as it is), or none but the 0-3 scores.
    label_basis = models.CharField(
        max_length=10, choices=LabelBasis.choices, default=LabelBasis.FINAL
    )
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    # Anyone may download a public release; only managers a private one.
    public = models.BooleanField(default=False)
    # What the files include: {"annotator_labels": bool, "verdicts": bool,
    #  "dpo": {"by": "safety" | "helpfulness" | "both", "min_gap": 2, "min_chosen": 2},
    #  "scores": {"safety": source, "helpfulness": source}, (releases/scores.py says a source)
    #  "layout": CURRENT_LAYOUT when it was created}
    options = models.JSONField(default=dict, blank=True)
    # Counts frozen at creation: records in and out (with why), tasks.
    summary = models.JSONField(default=dict, blank=True)
    # {"files": [{"name", "size", "sha256"}]}, written when the build ends.
    manifest = models.JSONField(default=dict, blank=True)
    previous = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    error = models.TextField(blank=True)
    built_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["project", "-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["project", "version"], name="release_unique_version"),
        ]

    def __str__(self) -> str:
        return f"{self.project} {self.version}"

    @property
    def layout(self) -> int:
        """The layout of files it was created for (CURRENT_LAYOUT above)."""
        return int(self.options.get("layout", 1))


class ReleaseRecord(models.Model):
    """One record as a release holds it: its final label and everything the files print,
    copied at creation so that later labels and adjudications never change a release."""

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="records")
    record = models.ForeignKey(
        "curation.Record", on_delete=models.PROTECT, related_name="release_entries"
    )
    # In the release with a final label, or left out with a reason.
    included = models.BooleanField()
    label = models.CharField(max_length=10, blank=True)
    # "adjudicated", "consensus", "gold" or "scores"; for records left out, why.
    label_source = models.CharField(max_length=40)
    # The record's place, as the release prints it.
    category = models.CharField(max_length=100)
    scenario = models.CharField(max_length=100)
    risk_description = models.TextField(blank=True)
    # [{"annotator": "annotator_1", "verdict", "safety_score", "helpfulness_score"}], anonymised
    annotator_labels = models.JSONField(default=list, blank=True)
    # [{"run": name, "label", "score", "parse_status"}]
    verdicts = models.JSONField(default=list, blank=True)
    # The record's 0-3 scores from the release's score source of each scale (a run's score, or
    # the mean of the annotators' scores), for the files and the preference pairs.
    safety_score = models.FloatField(null=True, blank=True)
    helpfulness_score = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["release", "record"]
        constraints = [
            models.UniqueConstraint(fields=["release", "record"], name="releaserecord_once"),
        ]

    def __str__(self) -> str:
        return f"{self.record_id} in {self.release_id}"


class ReleaseTask(models.Model):
    """An approved task as a release holds it: the revision that was approved."""

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="tasks")
    task = models.ForeignKey("authoring.Task", on_delete=models.PROTECT, related_name="+")
    revision = models.ForeignKey(
        "authoring.TaskRevision", on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        ordering = ["release", "task"]
        constraints = [
            models.UniqueConstraint(fields=["release", "task"], name="releasetask_once"),
        ]

    def __str__(self) -> str:
        return f"{self.task_id} in {self.release_id}"
