"""Signals the apps built on curation listen to, so that curation never imports them."""

from __future__ import annotations

from django.dispatch import Signal

# Sent with `project` inside the transaction that creates it, so that what a receiver adds to
# the new project commits or rolls back with it. Task authoring listens, to seed the project's
# risk categories and review rubric.
project_created = Signal()

# Sent with `batch` and `evaluations` (a list of curation.importers.engine.ScoredFile) inside the
# import's transaction, once its records are written, when it held ToolEmu evaluator files.
# Judging listens, to keep them as runs of verdicts; a receiver that raises ImportFailed fails
# the import, and nothing of it is kept.
evaluations_imported = Signal()

# Sent with `actor`, `batch` and `changes` (RecordChange rows with `verdict_of`) inside the
# transaction in which a manager takes an import's changes, when some change an imported
# evaluator's verdict. Judging listens, to replace those verdicts with the new evaluations.
verdict_changes_taken = Signal()

# Sent with `batch` and `scores` (a list of curation.importers.inspect_logs.ScorerScores) inside
# the import's transaction, once its records are written, when it held Inspect samples with
# scores. Judging listens, to keep each task's scorer as a run of verdicts, as above.
sample_scores_imported = Signal()

# Sent with `project` inside the transaction that deletes it, before anything of it is deleted.
# The project's rows go by cascade, which a PROTECT between two rows of the same project would
# stop: each app clears those of its own (a review's hold on a task's revision, a run's on its
# judge). A receiver that raises DomainError refuses the deletion, and nothing is deleted:
# releases refuse while the project has releases that are built or being built.
project_deleting = Signal()
