"""The navigation's sections: which one a page belongs to."""

from __future__ import annotations

from django import template
from django.urls import ResolverMatch

register = template.Library()

# The record pages are judging's, which sees labels and verdicts (docs/architecture.md, "The
# record as the hub"), but people find them in the Records section, beside imports and members.
RECORDS_SECTION = frozenset({"judging:record_list", "judging:record_detail", "judging:record_bulk"})


@register.filter
def nav_section(match: ResolverMatch | None) -> str:
    """The section of the page `match` resolved to: its app's, the record pages' Records."""
    if match is None:
        return ""
    return "curation" if match.view_name in RECORDS_SECTION else match.namespace
