"""What task authoring does when curation signals something."""

from __future__ import annotations

from typing import Any

from authoring.models import (
    DEFAULT_RUBRIC,
    SAFEPRO_RISK_CATEGORIES,
    Review,
    RiskCategory,
    RubricCheck,
    Task,
)
from curation.models import Project


def seed_review_settings(sender: object, *, project: Project, **kwargs: Any) -> None:
    """A project is being created: give it SafePro's risk categories and the default review
    rubric, which its managers then edit."""
    RiskCategory.objects.bulk_create(
        RiskCategory(project=project, slug=risk_slug, name=risk_name, position=position)
        for position, (risk_slug, risk_name) in enumerate(SAFEPRO_RISK_CATEGORIES)
    )
    RubricCheck.objects.bulk_create(
        RubricCheck(project=project, text=text, position=position)
        for position, text in enumerate(DEFAULT_RUBRIC)
    )


def clear_task_holds(sender: object, *, project: Project, **kwargs: Any) -> None:
    """The project is being deleted: let its tasks, their revisions and its risk categories go
    by cascade, which reviews (holding the revision reviewed) and tasks (holding their risk
    category) would stop."""
    Review.objects.filter(task__project=project).delete()
    Task.objects.filter(project=project).update(risk_category=None)
