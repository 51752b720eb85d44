"""Signals the apps built on curation listen to, so that curation never imports them."""

from __future__ import annotations

from django.dispatch import Signal

# Sent with `project` inside the transaction that creates it, so that what a receiver adds to
# the new project commits or rolls back with it. Task authoring listens, to seed the project's
# risk categories and review rubric.
project_created = Signal()
