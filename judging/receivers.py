"""What the judging app does when other apps signal something."""

from __future__ import annotations

from typing import Any

from curation.models import Annotation
from judging.services.disagreements import detect_disagreements


def detect_on_label(sender: object, *, annotation: Annotation, **kwargs: Any) -> None:
    """A label was submitted or changed (and committed): look again at its record."""
    detect_disagreements(project_id=annotation.project_id, record_ids=[annotation.record_id])
