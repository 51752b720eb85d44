"""Who may see a release: managers always; anyone at all once it is public and built."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.http import Http404
from django.shortcuts import get_object_or_404

from curation.access import MANAGERS, project_access
from curation.models import Project
from releases.models import Release

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User


def is_published(release: Release) -> bool:
    return release.public and release.state == Release.State.BUILT


def readable_release(user: User | AnonymousUser, slug: str, release_id: int) -> Release:
    """The release if `user` may read it and download its files.

    A public, built release is open to everyone, members or not. Any other is for the project's
    managers: outsiders get 404 (the project's existence does not leak), members 403.
    """
    project = get_object_or_404(Project, slug=slug)
    release = get_object_or_404(
        Release.objects.select_related("project", "previous", "created_by"),
        project=project,
        pk=release_id,
    )
    if is_published(release):
        return release
    if not user.is_authenticated:
        raise Http404("No such release.")
    project_access(user, slug, MANAGERS)
    return release
