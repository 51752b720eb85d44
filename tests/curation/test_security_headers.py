"""A strict Content-Security-Policy on every page: record content is hostile, no inline script."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.conftest import Cast
from tests.factories import RecordFactory


def policy(response) -> dict[str, list[str]]:
    assert "Content-Security-Policy-Report-Only" not in response, "the policy must be enforced"
    header = response["Content-Security-Policy"]
    directives = (part.split() for part in header.split(";") if part.strip())
    return {name: values for name, *values in directives}


def pages(cast: Cast) -> dict[str, tuple[str, str, int]]:
    """Page -> (persona, URL, expected status)."""
    record = RecordFactory(project=cast.project)
    slug = cast.project.slug
    return {
        "login": ("anonymous", reverse("login"), 200),
        "home": ("reviewer", reverse("home"), 200),
        "record list": ("reviewer", reverse("hub:record_list", args=[slug]), 200),
        "record": ("reviewer", reverse("hub:record_detail", args=[slug, record.pk]), 200),
        "not found": ("reviewer", reverse("hub:record_detail", args=[slug, 10**9]), 404),
        "forbidden": ("annotator", reverse("hub:record_list", args=[slug]), 403),
    }


@pytest.mark.parametrize(
    "page", ["login", "home", "record list", "record", "not found", "forbidden"]
)
def test_every_page_sends_a_strict_content_security_policy(cast: Cast, page: str) -> None:
    persona, url, status = pages(cast)[page]

    response = cast.client_for(persona).get(url)

    assert response.status_code == status
    directives = policy(response)
    assert directives["script-src"] == ["'self'"]
    assert directives["style-src"] == ["'self'"]
    assert directives["default-src"] == ["'self'"]
    assert directives["object-src"] == ["'none'"]
    assert directives["base-uri"] == ["'none'"]
    assert directives["frame-ancestors"] == ["'none'"]
    for loophole in ["'unsafe-inline'", "'unsafe-eval'", "'unsafe-hashes'"]:
        assert loophole not in response["Content-Security-Policy"]
    assert not [source for sources in directives.values() for source in sources if "*" in source]


def test_the_htmx_partial_carries_the_policy_too(cast: Cast) -> None:
    url = reverse("hub:record_list", args=[cast.project.slug])

    response = cast.client_for("reviewer").get(url, headers={"HX-Request": "true"})

    assert policy(response)["script-src"] == ["'self'"]


def test_pages_carry_no_inline_script_or_style(cast: Cast) -> None:
    for persona, url, _ in pages(cast).values():
        page = cast.client_for(persona).get(url).content.decode()
        for inline in ["<script>", "<style", " style=", " onload=", " onclick=", "javascript:"]:
            assert inline not in page, (url, inline)
