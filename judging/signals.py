"""Signals other apps listen to, so that judging never imports them."""

from __future__ import annotations

from django.dispatch import Signal

# Sent when verdicts are written (a judge run's chunk, an import of verdicts or of a ToolEmu
# study's evaluator files, a panel's verdicts), with `project_id` and `record_ids`, inside the
# transaction that writes them, so that what a receiver writes commits or rolls back with them.
# The review app listens, to look for disagreements on those records.
verdicts_saved = Signal()
