"""The API's project endpoints, and how callers authenticate."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from curation.models import Role
from curation.services.projects import membership_grant, project_create
from tests.conftest import Cast
from tests.curation.api_clients import token_client
from tests.factories import ProjectFactory

PROJECTS = reverse("api:project_list")


def detail_url(slug: str) -> str:
    return reverse("api:project_detail", args=[slug])


def test_a_token_authenticates_without_a_session(cast: Cast) -> None:
    response = token_client(cast.reviewer).get(PROJECTS)

    assert response.status_code == 200
    assert [p["slug"] for p in response.json()["results"]] == ["agent-safety"]


def test_a_session_authenticates_as_in_the_browser(cast: Cast) -> None:
    response = cast.client_for("reviewer").get(PROJECTS)

    assert response.status_code == 200
    assert [p["slug"] for p in response.json()["results"]] == ["agent-safety"]


def test_it_asks_anonymous_callers_for_a_token(cast: Cast) -> None:
    for url in (PROJECTS, detail_url(cast.project.slug)):
        response = Client().get(url)

        assert response.status_code == 401
        assert response["WWW-Authenticate"] == "Token"


def test_it_refuses_an_unknown_token(cast: Cast) -> None:
    response = Client(headers={"Authorization": "Token not-a-real-token"}).get(PROJECTS)

    assert response.status_code == 401
    assert response.json() == {"detail": "Invalid token."}


def test_it_lists_only_the_users_projects_with_their_roles(cast: Cast) -> None:
    other = project_create(actor=cast.manager, name="Other", slug="other")
    membership_grant(actor=cast.manager, project=other, user=cast.reviewer, role=Role.ANNOTATOR)
    membership_grant(actor=cast.manager, project=other, user=cast.reviewer, role=Role.AUTHOR)
    project_create(actor=cast.manager, name="Hidden", slug="hidden")

    response = token_client(cast.reviewer).get(PROJECTS)

    assert response.status_code == 200
    assert response.json()["count"] == 2
    assert {p["slug"]: p["roles"] for p in response.json()["results"]} == {
        "agent-safety": ["reviewer"],
        "other": ["annotator", "author"],
    }


def test_an_outsider_has_no_projects(cast: Cast) -> None:
    response = token_client(cast.outsider).get(PROJECTS)

    assert response.json() == {"count": 0, "next": None, "previous": None, "results": []}


def test_a_site_administrator_sees_every_project(cast: Cast) -> None:
    ProjectFactory(slug="unmanaged")

    response = token_client(cast.superuser).get(PROJECTS)

    assert {p["slug"]: p["roles"] for p in response.json()["results"]} == {
        "agent-safety": [],
        "unmanaged": [],
    }


def test_listing_projects_costs_the_same_queries_for_two_or_twelve(cast: Cast) -> None:
    client = token_client(cast.superuser)

    def queries_for_the_list() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(PROJECTS).status_code == 200
        return len(queries)

    ProjectFactory()
    # The first call also records when the token was used, which the next minute's do not.
    queries_for_the_list()
    few = queries_for_the_list()
    for _ in range(10):
        membership_grant(
            actor=None, project=ProjectFactory(), user=cast.superuser, role=Role.MANAGER
        )
    assert queries_for_the_list() == few


def test_a_member_reads_the_project_with_their_roles(cast: Cast) -> None:
    cast.project.description = "Records from R-Judge."
    cast.project.save()

    response = token_client(cast.annotator).get(detail_url("agent-safety"))

    assert response.status_code == 200
    body = response.json()
    assert body["name"] == "Agent Safety"
    assert body["description"] == "Records from R-Judge."
    assert body["roles"] == ["annotator"]


@pytest.mark.parametrize(
    ("persona", "status"),
    [
        ("outsider", 404),
        ("annotator", 200),
        ("author", 200),
        ("reviewer", 200),
        ("manager", 200),
        ("superuser", 200),
    ],
)
def test_every_member_and_nobody_else_reads_a_project(
    cast: Cast, persona: str, status: int
) -> None:
    response = token_client(getattr(cast, persona)).get(detail_url("agent-safety"))

    assert response.status_code == status


def test_an_outsider_cannot_tell_a_project_exists(cast: Cast) -> None:
    client = token_client(cast.outsider)

    existing = client.get(detail_url("agent-safety"))
    missing = client.get(detail_url("no-such-project"))

    assert existing.status_code == missing.status_code == 404
    assert existing.json() == missing.json()
