"""Role by route: every route of the URLconf, every persona, on the server."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.access import RULES, Rule, walk_urlconf
from tests.conftest import PERSONAS, Cast
from tests.factories import RecordFactory, UserFactory

ROUTES = list(walk_urlconf())
ADMIN_ROUTES = [r for r in ROUTES if r.name.startswith("admin:")]
STUDIO_ROUTES = [r for r in ROUTES if not r.name.startswith("admin:")]


def test_every_route_has_an_access_rule() -> None:
    missing = sorted(r.name for r in STUDIO_ROUTES if r.name not in RULES)
    assert not missing, f"Routes without an access rule in tests/access.py: {missing}"


def test_every_rule_names_a_route() -> None:
    stale = sorted(set(RULES) - {r.name for r in STUDIO_ROUTES})
    assert not stale, f"Rules for routes that no longer exist: {stale}"


def url_values(cast: Cast) -> dict[str, object]:
    """A value for each URL parameter, naming fresh objects of the cast's project.

    Made anew for each persona, since a permitted POST may delete what the URL names.
    """
    record = RecordFactory(project=cast.project)
    batch = cast.project.import_batches.create(source_name="x.json", created_by=cast.manager)
    membership = cast.project.memberships.create(user=UserFactory(), role="annotator")
    return {
        "slug": cast.project.slug,
        "record_id": record.pk,
        "batch_id": batch.pk,
        "membership_id": membership.pk,
        "format": "json",
    }


def expected(rule: Rule, persona: str) -> str:
    if persona in rule.allowed:
        return "allowed"
    if persona == "anonymous":
        # The API answers 401 or 403 rather than redirecting to a login page.
        return "login" if rule.kind == "html" else "forbidden"
    if persona == "outsider" and rule.in_project:
        return "not found"
    return "forbidden"


def outcome(response) -> str:
    if response.status_code in (401, 403):
        return "forbidden"
    if response.status_code == 404:
        return "not found"
    if response.status_code == 302 and "/login/?next=" in response["Location"]:
        return "login"
    if response.status_code < 400:
        return "allowed"
    return f"status {response.status_code}"


@pytest.mark.parametrize("route", STUDIO_ROUTES, ids=lambda r: r.name)
def test_route_admits_exactly_the_roles_of_its_rule(route, cast: Cast) -> None:
    rule = RULES[route.name]
    wrong = {}
    for persona in PERSONAS:
        values = url_values(cast)
        missing = [p for p in route.params if p not in values]
        assert not missing, f"No test value for URL parameters {missing} of {route.name}"
        url = reverse(route.name, kwargs={p: values[p] for p in route.params})
        client = cast.client_for(persona)
        response = getattr(client, rule.method)(url, rule.data)
        want, got = expected(rule, persona), outcome(response)
        if response.streaming:
            # Read to its end, a download closes the file it streams from.
            b"".join(response.streaming_content)
        if got != want:
            wrong[persona] = f"expected {want}, got {got} ({response.status_code})"
    assert not wrong, f"{route.name} {url}: {wrong}"


# The admin's index and every model's list.
ADMIN_PAGES = [r for r in ADMIN_ROUTES if r.name == "admin:index" or r.name.endswith("_changelist")]


@pytest.mark.parametrize("route", ADMIN_PAGES, ids=lambda r: r.name)
def test_admin_pages_are_for_staff_only(route, cast: Cast) -> None:
    url = reverse(route.name)
    for persona in PERSONAS:
        response = cast.client_for(persona).get(url)
        if persona == "superuser":
            assert response.status_code == 200, (persona, url, response.status_code)
        else:
            assert response.status_code == 302, (persona, url, response.status_code)
            assert "login/?next=" in response["Location"], (persona, url)
