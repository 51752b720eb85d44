"""Reads: querysets and small summaries the views and API share."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db.models import Count, QuerySet

from curation.models import Membership, Project, Record

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser


def projects_for_user(user: AbstractBaseUser) -> QuerySet[Project]:
    """The projects `user` is a member of; superusers see every project."""
    if user.is_superuser:
        return Project.objects.all()
    return Project.objects.filter(memberships__user=user).distinct()


def memberships_of(project: Project) -> QuerySet[Membership]:
    return project.memberships.select_related("user").order_by("user__username", "role")


def record_counts_by_category(project: Project) -> list[dict[str, object]]:
    """Rows of {category, gold_label, n}, one aggregate query whatever the number of records."""
    return list(
        Record.objects.filter(project=project)
        .values("category__name", "gold_label")
        .annotate(n=Count("id"))
        .order_by("category__name", "gold_label")
    )


def record_search(
    project: Project,
    *,
    category: str = "",
    scenario: str = "",
    gold_label: str = "",
    attack_type: str = "",
    text: str = "",
) -> QuerySet[Record]:
    """The project's records matching every given filter, in id order, ready for one page.

    `gold_label` is "safe", "unsafe" or "none" (records without a gold label); `text` matches
    anywhere in the interaction, case-insensitively.
    """
    records = Record.objects.filter(project=project)
    if category:
        records = records.filter(category__name=category)
    if scenario:
        records = records.filter(scenario__name=scenario)
    if gold_label:
        records = records.filter(gold_label="" if gold_label == "none" else gold_label)
    if attack_type:
        records = records.filter(attack_type=attack_type)
    if text:
        # search_text is stored lower-cased, so a plain LIKE can use the trigram index.
        records = records.filter(search_text__contains=text.lower())
    return records.select_related("category", "scenario").order_by("id")
