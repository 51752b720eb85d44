"""The navigation's sections: which one a page belongs to."""

from __future__ import annotations

from django import template
from django.urls import ResolverMatch

register = template.Library()

# The section of each app whose pages people find under another's heading: the record pages
# (the hub, which sees labels and verdicts) in Records, beside imports and members; the
# adjudication queue, the reports and judges' versions in Judging, beside runs and judges.
SECTION_OF_APP = {
    "hub": "curation",
    "review": "judging",
    "reports": "judging",
    "alignment": "judging",
}


@register.filter
def nav_section(match: ResolverMatch | None) -> str:
    """The section of the page `match` resolved to: its app's, or the one it is shown under."""
    if match is None:
        return ""
    return SECTION_OF_APP.get(match.namespace, match.namespace)
