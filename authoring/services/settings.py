"""A project's task review settings: K, the hold time, risk categories and the rubric."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import Max
from django.utils.text import slugify

from authoring.models import RiskCategory, RubricCheck
from curation.errors import DomainError
from curation.models import Project
from curation.services.audit import audit_log

if TYPE_CHECKING:
    from django.contrib.auth.models import User


@transaction.atomic
def review_settings_update(
    *,
    actor: User,
    project: Project,
    required_approvals: int,
    review_lease_minutes: int,
) -> Project:
    """Change K and the hold time. Tasks approved already stay approved."""
    before = {
        "required_approvals": project.required_approvals,
        "review_lease_minutes": project.review_lease_minutes,
    }
    project.required_approvals = required_approvals
    project.review_lease_minutes = review_lease_minutes
    project.full_clean()
    project.save(update_fields=["required_approvals", "review_lease_minutes", "updated_at"])
    audit_log(
        actor=actor,
        action="curation.project.review_settings_changed",
        project=project,
        obj=project,
        before=before,
        after={
            "required_approvals": required_approvals,
            "review_lease_minutes": review_lease_minutes,
        },
    )
    return project


@transaction.atomic
def risk_category_add(*, actor: User, project: Project, name: str) -> RiskCategory:
    name = name.strip()
    slug = slugify(name)[:80]
    if not slug:
        raise DomainError("Name the risk category with letters or digits.")
    taken = project.risk_categories.filter(slug=slug) | project.risk_categories.filter(
        name__iexact=name
    )
    if taken.exists():
        raise DomainError(f"The project has a risk category “{name}” already.")
    position = (project.risk_categories.aggregate(last=Max("position"))["last"] or 0) + 1
    category = RiskCategory(project=project, slug=slug, name=name, position=position)
    category.full_clean()
    category.save()
    audit_log(
        actor=actor,
        action="curation.risk_category.created",
        project=project,
        obj=category,
        after={"name": name, "slug": slug},
    )
    return category


@transaction.atomic
def risk_category_remove(*, actor: User, category: RiskCategory) -> None:
    """Remove a risk category no task uses (revisions keep the names they were submitted with)."""
    used = category.tasks.count()
    if used:
        raise DomainError(
            f"{used} task(s) have the risk category “{category.name}”: change them first."
        )
    audit_log(
        actor=actor,
        action="curation.risk_category.deleted",
        project=category.project,
        obj=category,
        before={"name": category.name, "slug": category.slug},
    )
    category.delete()


@transaction.atomic
def rubric_check_add(*, actor: User, project: Project, text: str) -> RubricCheck:
    position = (project.rubric_checks.aggregate(last=Max("position"))["last"] or 0) + 1
    check = RubricCheck(project=project, text=text.strip(), position=position)
    check.full_clean()
    check.save()
    audit_log(
        actor=actor,
        action="curation.rubric_check.created",
        project=project,
        obj=check,
        after={"text": check.text},
    )
    return check


@transaction.atomic
def rubric_check_toggle(*, actor: User, check: RubricCheck) -> RubricCheck:
    """Retire a check from new reviews, or bring a retired one back; past reviews keep it."""
    check.active = not check.active
    check.save(update_fields=["active", "updated_at"])
    audit_log(
        actor=actor,
        action="curation.rubric_check.activated"
        if check.active
        else "curation.rubric_check.retired",
        project=check.project,
        obj=check,
        after={"active": check.active},
    )
    return check
