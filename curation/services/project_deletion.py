"""Deleting a project with everything of it: records, labels, runs, tasks, imports, members.

Refused while the project has releases (the releases app says which); the site's connections
and accounts stay. The audit event outlives the project (its project is set to null) and keeps
its name and what it held.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import ProtectedError, RestrictedError

from curation.errors import Conflict, DomainError
from curation.models import Project
from curation.services.audit import audit_log
from curation.services.record_deletion import records_deletion_count
from curation.signals import project_deleting

if TYPE_CHECKING:
    from django.contrib.auth.models import User


@transaction.atomic
def project_delete(*, actor: User, project: Project, typed_name: str) -> None:
    """Delete `project`, once its name was typed to confirm; the caller checked that `actor`
    manages it or is a site administrator."""
    project = Project.objects.select_for_update().get(pk=project.pk)
    if typed_name.strip() != project.name:
        raise DomainError("Type the project's name exactly as it is, to confirm.")
    held = records_deletion_count(project.records.all())
    counts = {
        "records": held.records,
        **{f"{name}s": count for name, count in held.going_with},
        "members": project.memberships.values("user").distinct().count(),
        "imports": project.import_batches.count(),
    }
    # Receivers refuse (releases) or clear what would stop the cascade (see the signal).
    project_deleting.send(sender=Project, project=project)
    audit_log(
        actor=actor,
        action="curation.project.deleted",
        project=project,
        obj=project,
        before={"name": project.name, "slug": project.slug, **counts},
    )
    try:
        # Records first: each holds its category and scenario (PROTECT), which the project's
        # cascade would otherwise reach while records still stand on them.
        project.records.all().delete()
        project.delete()
    except (ProtectedError, RestrictedError) as error:
        raise Conflict(f"The project cannot be deleted: {error.args[0]}") from error
