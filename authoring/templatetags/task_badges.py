"""The project navigation's counts of tasks: what waits for me as an author, and as a reviewer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django import template

from authoring.selectors import TaskBadges, roles_of, task_badges

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from curation.access import ProjectAccess

register = template.Library()


@register.simple_tag
def tasks_waiting(access: ProjectAccess, user: User) -> TaskBadges:
    return task_badges(access.project, user, roles_of(access))
