"""The route table for the role-by-route access test, and how to walk the URLconf.

Every named route must have a rule here; the access test fails for any route that has none,
so a new page or endpoint cannot slip past without saying who may use it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from django.urls import URLPattern, URLResolver, get_resolver

EVERYONE = frozenset(
    {"anonymous", "outsider", "annotator", "author", "reviewer", "manager", "superuser"}
)
LOGGED_IN = EVERYONE - {"anonymous"}
MEMBERS = frozenset({"annotator", "author", "reviewer", "manager", "superuser"})
RECORD_READERS = frozenset({"reviewer", "manager", "superuser"})
MANAGERS = frozenset({"manager", "superuser"})
SUPERUSERS = frozenset({"superuser"})


@dataclass(frozen=True)
class Rule:
    allowed: frozenset[str]
    # "html": anonymous users are sent to the login page; "api": they get 401 or 403.
    kind: str = "html"
    method: str = "get"
    # Project routes hide the project from outsiders (404) rather than refusing them (403).
    in_project: bool = True
    data: dict[str, object] = field(default_factory=dict)


# Route name -> who may use it. Keep in step with the URLconf (the test checks).
RULES: dict[str, Rule] = {
    "home": Rule(LOGGED_IN, in_project=False),
    "healthz": Rule(EVERYONE, in_project=False),
    "login": Rule(EVERYONE, in_project=False),
    "logout": Rule(LOGGED_IN, method="post", in_project=False),
    "account": Rule(LOGGED_IN, in_project=False),
    "api-schema": Rule(LOGGED_IN, kind="api", in_project=False),
    "api-docs": Rule(LOGGED_IN, in_project=False),
    "api:project_list": Rule(LOGGED_IN, kind="api", in_project=False),
    "api:project_detail": Rule(MEMBERS, kind="api"),
    "api:record_list": Rule(RECORD_READERS, kind="api"),
    "api:record_detail": Rule(RECORD_READERS, kind="api"),
    # GET here; who may upload (POST) is tested in tests/curation/test_api_imports.py.
    "api:import_list": Rule(MANAGERS, kind="api"),
    "api:import_detail": Rule(MANAGERS, kind="api"),
    "curation:project_new": Rule(SUPERUSERS, in_project=False),
    "curation:project": Rule(MEMBERS),
    "curation:members": Rule(MANAGERS),
    "curation:member_remove": Rule(MANAGERS, method="post"),
    "curation:record_list": Rule(RECORD_READERS),
    "curation:record_detail": Rule(RECORD_READERS),
    "curation:import_list": Rule(MANAGERS),
    "curation:import_detail": Rule(MANAGERS),
    "curation:export_rjudge": Rule(MANAGERS),
}


@dataclass(frozen=True)
class Route:
    name: str
    params: tuple[str, ...]


def walk_urlconf() -> Iterator[Route]:
    """Every named route of the URLconf with the parameters its pattern takes."""

    def walk(patterns: list, namespace: str, params: tuple[str, ...]) -> Iterator[Route]:
        for pattern in patterns:
            own = tuple(pattern.pattern.regex.groupindex)
            if isinstance(pattern, URLResolver):
                inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
                yield from walk(pattern.url_patterns, inner, params + own)
            elif isinstance(pattern, URLPattern) and pattern.name:
                yield Route(f"{namespace}{pattern.name}", params + own)

    seen: set[str] = set()
    for route in walk(get_resolver().url_patterns, "", ()):
        if route.name not in seen:
            seen.add(route.name)
            yield route
