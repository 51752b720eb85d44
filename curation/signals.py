"""Signals other apps listen to, so that curation never imports them."""

from __future__ import annotations

from django.dispatch import Signal

# Sent after a label is created or changed has been committed, with `annotation` and `created`.
# The judging app listens, to look for disagreements on the record.
annotation_saved = Signal()
