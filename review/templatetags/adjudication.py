"""The project menu's count of disagreements waiting for a reviewer."""

from __future__ import annotations

from django import template

from curation.models import Project
from review.selectors import open_disagreement_count

register = template.Library()


@register.simple_tag
def open_disagreements(project: Project) -> int:
    return open_disagreement_count(project)
