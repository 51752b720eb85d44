"""The releases API answers as its served schema says: a first release, which follows none, and
the download of a file of each kind."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api_schema import CHECKS, served_schema, token
from tests.conftest import Cast
from tests.releases.helpers import annotators, built_release, label, record

pytestmark = pytest.mark.django_db(transaction=True)

RELEASE = "/api/projects/{slug}/releases/{release_id}/"


@pytest.fixture
def labelled(cast: Cast) -> None:
    """A record with a final label, so that every file of a release has content."""
    cast.project.overlap = 1
    cast.project.save()
    (annotator,) = annotators(cast.project, 1)
    label(record(cast.project, 1), annotator, "unsafe", risk_description="Deletes mail.")


def test_a_first_release_answers_as_the_schema_says(cast: Cast, live_server: Any) -> None:
    release = built_release(cast.project, cast.manager)
    schema = served_schema(live_server.url, cast.manager)
    path = {"slug": cast.project.slug, "release_id": release.pk}
    calls = [
        schema["/api/projects/{slug}/releases/"]["GET"].Case(path_parameters=path),
        schema[RELEASE]["GET"].Case(path_parameters=path),
        schema[RELEASE]["PATCH"].Case(
            path_parameters=path, body={"public": True}, media_type="application/json"
        ),
    ]

    for case in calls:
        response = case.call_and_validate(headers=token(cast.manager), checks=CHECKS)
        assert response.status_code == 200
        body = response.json()
        assert body.get("results", [body])[0]["previous"] is None


@pytest.mark.parametrize("name", ["README.md", "labels.csv", "records.jsonl", "rjudge.zip"])
def test_each_file_downloads_as_the_schema_says(
    cast: Cast, live_server: Any, labelled: None, name: str
) -> None:
    release = built_release(cast.project, cast.manager)
    schema = served_schema(live_server.url, cast.manager)
    download = schema[f"{RELEASE}files/{{name}}"]["GET"].Case(
        path_parameters={"slug": cast.project.slug, "release_id": release.pk, "name": name}
    )

    response = download.call_and_validate(headers=token(cast.manager), checks=CHECKS)

    assert response.status_code == 200
    assert response.content
