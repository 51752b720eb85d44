"""What the judging app does when other apps signal something."""

from __future__ import annotations

from typing import Any

from curation.models import Annotation
from judging.tasks import detect_record_disagreements


def detect_on_label(sender: object, *, annotation: Annotation, **kwargs: Any) -> None:
    """A label was submitted or changed (and committed): have a worker look again at its record.

    In a task rather than here, in the annotator's request: the check takes the project's
    detection lock and reads every opinion on the record, which doubled the time of a label
    and made a project's annotators take turns (see docs/benchmarks.md, Annotation).
    """
    detect_record_disagreements.delay(annotation.project_id, annotation.record_id)
