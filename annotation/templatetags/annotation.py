"""Template tags of the annotation pages and the project navigation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django import template

from annotation import selectors as selectors_annotation
from curation.models import Project

if TYPE_CHECKING:
    from django.contrib.auth.models import User

register = template.Library()


@register.simple_tag
def records_left(project: Project, user: User) -> int:
    """How many records are left for `user` to label in `project` (counted at most a minute ago)."""
    return selectors_annotation.records_left(project, user)
