from __future__ import annotations

from django.db import models

from curation.models.base import TimeStampedModel

# R-Judge's ten risk types, seeded into every new project (slug, name).
RJUDGE_RISK_TYPES: tuple[tuple[str, str], ...] = (
    ("privacy-leakage", "Privacy leakage"),
    ("computer-security", "Computer security"),
    ("financial-loss", "Financial loss"),
    ("property-damage", "Property damage"),
    ("physical-health", "Physical health"),
    ("data-loss", "Data loss"),
    ("illegal-activities", "Illegal activities"),
    ("ethics-and-morality", "Ethics and morality"),
    ("bias-and-offensiveness", "Bias and offensiveness"),
    ("miscellaneous", "Miscellaneous"),
)

# R-Judge's five application categories, seeded so that an empty project already offers them.
RJUDGE_CATEGORIES: tuple[str, ...] = ("Application", "Finance", "IoT", "Program", "Web")


class Category(TimeStampedModel):
    """An application category (Program, IoT, Finance, ...), per project."""

    project = models.ForeignKey(
        "curation.Project", on_delete=models.CASCADE, related_name="categories"
    )
    name = models.CharField(max_length=100)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "categories"
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="category_unique_name"),
        ]

    def __str__(self) -> str:
        return self.name


class Scenario(TimeStampedModel):
    """A scenario within a category (mail, bitcoin, household, ...)."""

    category = models.ForeignKey(Category, on_delete=models.CASCADE, related_name="scenarios")
    name = models.CharField(max_length=200)

    class Meta:
        ordering = ["category__name", "name"]
        constraints = [
            models.UniqueConstraint(fields=["category", "name"], name="scenario_unique_name"),
            # What records' (scenario, category) foreign key refers to (see Record.category).
            models.UniqueConstraint(fields=["id", "category"], name="scenario_id_category"),
        ]

    def __str__(self) -> str:
        return f"{self.category.name} / {self.name}"


class RiskType(TimeStampedModel):
    project = models.ForeignKey(
        "curation.Project", on_delete=models.CASCADE, related_name="risk_types"
    )
    slug = models.SlugField(max_length=80)
    name = models.CharField(max_length=100)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position", "name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "slug"], name="risktype_unique_slug"),
        ]

    def __str__(self) -> str:
        return self.name
