from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db import models

from curation.models import AuditEvent, Project

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def audit_log(
    *,
    actor: User | None,
    action: str,
    project: Project | None = None,
    obj: models.Model | None = None,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
) -> AuditEvent:
    """Write one audit event; call it inside the service's transaction so both land or neither."""
    return AuditEvent.objects.create(
        actor=actor if actor is not None and actor.is_authenticated else None,
        project=project,
        action=action,
        object_type=obj._meta.label_lower if obj is not None else "",
        object_id=str(obj.pk) if obj is not None else "",
        object_repr=str(obj)[:200] if obj is not None else "",
        before=before,
        after=after,
    )
