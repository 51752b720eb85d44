"""Answers to signed-in people and every API answer are kept out of caches (`no-store,
private`): they carry labels, verdicts and gold labels. Static files stay cacheable."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from tests.access import RULES
from tests.conftest import Cast
from tests.curation.api_clients import token_client
from tests.factories import RecordFactory, rjudge_record
from tests.review.opinions import annotate, judge_run
from tests.test_access import STUDIO_ROUTES, url_values

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path: Path) -> None:
    # url_values() builds a release: keep its files out of the development media folder.
    settings.MEDIA_ROOT = tmp_path / "media"


def is_private(response) -> bool:
    directives = {part.strip() for part in response.get("Cache-Control", "").split(",")}
    return {"no-store", "private"} <= directives


def test_the_adjudication_page_with_labels_and_verdicts_is_not_stored(cast: Cast) -> None:
    record = RecordFactory(project=cast.project, source=rjudge_record(1, label=1))
    annotate(record, cast.annotator, "safe")
    judge_run(cast.project, "judge A", {record: "unsafe"})
    url = reverse("review:adjudication_record", args=[cast.project.slug, record.pk])

    response = cast.client_for("reviewer").get(url)

    assert response.status_code == 200
    assert "judge A thinks unsafe" in response.content.decode()
    assert is_private(response)


def test_an_api_answer_with_gold_labels_is_not_stored(cast: Cast) -> None:
    record = RecordFactory(project=cast.project, source=rjudge_record(1, label=1))
    url = reverse("api:record_detail", args=[cast.project.slug, record.pk])

    response = token_client(cast.reviewer).get(url)

    assert response.status_code == 200
    assert response.json()["gold_label"] == "unsafe"
    assert is_private(response)


def test_api_refusals_are_not_stored_either(cast: Cast) -> None:
    url = reverse("hub_api:record_list", args=[cast.project.slug])

    assert is_private(token_client(cast.annotator).get(url))
    assert is_private(cast.client_for("anonymous").get(url))


def test_every_page_and_api_answer_to_a_signed_in_person_is_not_stored(cast: Cast) -> None:
    values = url_values(cast)
    stored = {}
    for route in STUDIO_ROUTES:
        rule = RULES[route.name]
        if rule.method != "get":
            continue
        url = reverse(route.name, kwargs={p: values[p] for p in route.params})
        persona = sorted(rule.allowed - {"anonymous"})[0]
        response = cast.client_for(persona).get(url)
        if response.streaming:
            # Read to its end, a download closes the file it streams from.
            b"".join(response.streaming_content)
        if response.status_code >= 400 or not is_private(response):
            stored[route.name] = (persona, response.status_code, response.get("Cache-Control"))
    assert not stored


def test_static_files_stay_cacheable(cast: Cast, settings) -> None:
    # Served from the source folders, as in development: the suite runs no collectstatic.
    settings.WHITENOISE_USE_FINDERS = True

    response = cast.client_for("reviewer").get("/static/css/studio.css")

    assert response.status_code == 200
    b"".join(response.streaming_content)
    assert not is_private(response)
