"""A project's annotation settings and its guidelines, which managers change."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.db.models import Max
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore

from annotation.models import GuidelineVersion
from curation.errors import DomainError
from curation.models import Project
from curation.services.audit import audit_log
from curation.services.projects import project_fields_change

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# What managers set on the annotation settings page, besides the guidelines.
ANNOTATION_SETTINGS = (
    "overlap",
    "lease_minutes",
    "ask_risk_types",
    "ask_risk_description",
    "ask_safety_score",
    "ask_helpfulness_score",
    "ask_evidence_turns",
    "consensus_rule",
)
GUIDELINES_MAX_CHARS = 100_000

# CommonMark with tables and strikethrough; raw HTML in the text is shown as text, and links
# with javascript: or data: URLs are not made into links (markdown-it's default check).
_markdown = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def _aligned_by_class(state: StateCore) -> None:
    # markdown-it aligns a table's columns with style attributes, which the CSP refuses (a
    # violation per cell, on every record of the labelling page): a class aligns them instead.
    for token in state.tokens:
        style = token.attrs.pop("style", None) if token.type in ("th_open", "td_open") else None
        if style:
            token.attrSet("class", "align-" + str(style).removeprefix("text-align:"))


_markdown.core.ruler.push("aligned_by_class", _aligned_by_class)


@transaction.atomic
def annotation_settings_update(*, project: Project, actor: User, **settings: Any) -> Project:
    """Change how the project is labelled: overlap k, lease time and the fields asked.

    Labels already given stay as they are. Lowering k below the labels a record has leaves the
    record complete; raising it offers records again until they have k.
    """
    return project_fields_change(
        actor=actor,
        project=project,
        fields=settings,
        allowed=ANNOTATION_SETTINGS,
        kind="annotation setting",
        action="curation.project.annotation_settings_changed",
    )


@transaction.atomic
def guidelines_publish(*, project: Project, actor: User, text: str) -> GuidelineVersion:
    """Publish a new version of the guidelines; labels from now on record it.

    Versions are never edited, so that every label keeps the text it was made under.
    """
    text = text.strip()
    if not text:
        raise DomainError("Write the guidelines before publishing them.")
    if len(text) > GUIDELINES_MAX_CHARS:
        raise DomainError(f"Guidelines are limited to {GUIDELINES_MAX_CHARS:,} characters.")
    # Publishing twice at once would pick the same number: the project's row serialises it.
    Project.objects.select_for_update().filter(pk=project.pk).first()
    latest = project.guideline_versions.aggregate(number=Max("number"))["number"] or 0
    version = GuidelineVersion(project=project, number=latest + 1, text=text, created_by=actor)
    version.full_clean()
    version.save()
    audit_log(
        actor=actor,
        action="curation.guidelines.published",
        project=project,
        obj=version,
        after={"number": version.number, "text": text},
    )
    return version


def guidelines_html(version: GuidelineVersion) -> SafeString:
    """The guidelines as HTML. Versions never change, so each is rendered once per process."""
    return _render(version.pk, version.text)


@lru_cache(maxsize=64)
def _render(pk: int, text: str) -> SafeString:
    # Safe to mark: with raw HTML off, markdown-it escapes every character of the text it
    # does not turn into markup itself, and managers (not records) write guidelines.
    return mark_safe(_markdown.render(text))  # noqa: S308
