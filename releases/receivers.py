"""What the releases app does when curation signals something."""

from __future__ import annotations

import shutil
from functools import partial
from typing import Any

from django.db import transaction

from curation.errors import Conflict
from curation.models import Project
from releases.build import release_folder
from releases.models import Release


def refuse_or_drop_releases(sender: object, *, project: Project, **kwargs: Any) -> None:
    """The project is being deleted: refused while it has a release that is built or being
    built, whose files people may have downloaded and cite; its failed releases go, with
    whatever files their builds left."""
    releases = list(project.releases.order_by("created_at"))
    standing = [release for release in releases if release.state != Release.State.FAILED]
    if standing:
        named = ", ".join(
            f"{release.version} ({release.get_state_display().lower()})" for release in standing
        )
        raise Conflict(
            f"The project has releases, which are never deleted with it: {named}. A site "
            "administrator may delete them first, on their pages."
        )
    for release in releases:
        folder = release_folder(release)
        # The entries of a failed release hold its records and tasks: gone first.
        release.delete()
        transaction.on_commit(partial(shutil.rmtree, folder, ignore_errors=True))
