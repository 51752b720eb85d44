"""Refusals and missing pages look like the studio, say what happened, and lead back home."""

from __future__ import annotations

from django.urls import reverse

from tests.conftest import Cast


def test_a_refused_page_is_a_styled_page_that_says_why(cast: Cast) -> None:
    response = cast.client_for("annotator").get(
        reverse("hub:record_list", args=[cast.project.slug])
    )

    body = response.content.decode()
    assert response.status_code == 403
    assert "css/studio.css" in body
    assert "<h1>Not for you</h1>" in body
    assert reverse("home") in body


def test_a_missing_page_is_a_styled_page(cast: Cast) -> None:
    response = cast.client_for("outsider").get(reverse("hub:record_list", args=[cast.project.slug]))

    body = response.content.decode()
    assert response.status_code == 404
    assert "css/studio.css" in body and "<h1>Not found</h1>" in body
