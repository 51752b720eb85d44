from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.utils.text import slugify

from curation.errors import DomainError
from curation.models import Category, Membership, Project, RiskType, Role
from curation.models.taxonomy import RJUDGE_CATEGORIES, RJUDGE_RISK_TYPES
from curation.services.audit import audit_log
from curation.signals import project_created

if TYPE_CHECKING:
    from django.contrib.auth.models import User


@transaction.atomic
def project_create(
    *,
    actor: User | None,
    name: str,
    slug: str = "",
    description: str = "",
    license: str = "",
) -> Project:
    """Create a project seeded with R-Judge's categories and risk types (and, by the apps that
    listen to project_created, with theirs); its creator manages it. Without a slug, its slug
    is made from its name."""
    slug = slug or unique_project_slug(name)
    project = Project(name=name, slug=slug, description=description, license=license)
    project.full_clean()
    project.save()
    Category.objects.bulk_create(
        Category(project=project, name=category_name) for category_name in RJUDGE_CATEGORIES
    )
    RiskType.objects.bulk_create(
        RiskType(project=project, slug=risk_slug, name=risk_name, position=position)
        for position, (risk_slug, risk_name) in enumerate(RJUDGE_RISK_TYPES)
    )
    project_created.send(sender=Project, project=project)
    if actor is not None and actor.is_authenticated:
        Membership.objects.create(project=project, user=actor, role=Role.MANAGER)
    audit_log(
        actor=actor,
        action="curation.project.created",
        project=project,
        obj=project,
        after={"name": name, "slug": slug},
    )
    return project


# What a project's settings page and `PATCH /api/projects/<slug>/` change. The slug is not among
# them: it is in every address of the project, links and scripts included.
PROJECT_SETTINGS = ("name", "description", "license")


@transaction.atomic
def project_update(*, actor: User, project: Project, **settings: str) -> Project:
    """Change the project's name, description or license."""
    return project_fields_change(
        actor=actor,
        project=project,
        fields=settings,
        allowed=PROJECT_SETTINGS,
        kind="project setting",
        action="curation.project.changed",
    )


def project_fields_change(
    *,
    actor: User,
    project: Project,
    fields: Mapping[str, Any],
    allowed: Sequence[str],
    kind: str,
    action: str,
) -> Project:
    """Set some of the project's own fields (those `allowed`, a `kind` of setting), checked by
    the model, under the project's row lock; the audit event (`action`) keeps what each changed
    field was before and is after, and none is written when nothing changed. Call it inside the
    caller's transaction."""
    unknown = set(fields) - set(allowed)
    if unknown:
        raise DomainError(f"Not a {kind}: {', '.join(sorted(unknown))}.")
    project = Project.objects.select_for_update().get(pk=project.pk)
    before = {name: getattr(project, name) for name in fields}
    for name, value in fields.items():
        setattr(project, name, value)
    project.full_clean()
    project.save(update_fields=[*fields, "updated_at"])
    changed = {name: value for name, value in fields.items() if before[name] != value}
    if changed:
        audit_log(
            actor=actor,
            action=action,
            project=project,
            obj=project,
            before={name: before[name] for name in changed},
            after=changed,
        )
    return project


def unique_project_slug(name: str) -> str:
    """The name as a slug ("Agent Safety" is agent-safety), with -2, -3, ... added when another
    project has it; "project" for a name without a letter or a digit to make one of."""
    max_length = Project._meta.get_field("slug").max_length or 80
    base = slugify(name)[:max_length].strip("-") or "project"
    slug, number = base, 1
    while Project.objects.filter(slug=slug).exists():
        number += 1
        suffix = f"-{number}"
        slug = base[: max_length - len(suffix)].rstrip("-") + suffix
    return slug


@transaction.atomic
def membership_grant(*, actor: User | None, project: Project, user: User, role: Role) -> Membership:
    """Give `user` a role in `project`; granting a role they already hold changes nothing."""
    membership, created = Membership.objects.get_or_create(project=project, user=user, role=role)
    if created:
        audit_log(
            actor=actor,
            action="curation.membership.granted",
            project=project,
            obj=membership,
            after={"user": user.get_username(), "role": role},
        )
    return membership


@transaction.atomic
def membership_revoke(*, actor: User | None, membership: Membership) -> None:
    audit_log(
        actor=actor,
        action="curation.membership.revoked",
        project=membership.project,
        obj=membership,
        before={"user": membership.user.get_username(), "role": membership.role},
    )
    membership.delete()
