"""Signals other apps listen to, so that annotation never imports them."""

from __future__ import annotations

from django.dispatch import Signal

# Sent when a label is created or changed, with `annotation` and `created`, inside the
# transaction that writes it: what a receiver writes commits or rolls back with the label, and
# what must wait for the commit is the receiver's to defer (`transaction.on_commit`). The review
# app listens, to look for disagreements on the record.
annotation_saved = Signal()
