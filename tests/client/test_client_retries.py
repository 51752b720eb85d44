"""Which calls the client tries again, and where it sends the token, seen from the network: a
transport of httpx's that answers as a proxy in front of a studio might."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from studio_client import ServerError, StudioClient

Handler = Callable[[httpx.Request], httpx.Response]


def studio(handler: Handler, seen: list[httpx.Request]) -> StudioClient:
    def recording(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return handler(request)

    return StudioClient(
        "https://studio.example.org/", "secret", transport=httpx.MockTransport(recording)
    )


def page(results: list[dict], next: str | None = None) -> httpx.Response:
    return httpx.Response(200, json={"count": 3, "next": next, "results": results})


def test_a_read_is_tried_again_after_a_gateway_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("studio_client.http.time.sleep", lambda seconds: None)
    answers = iter([httpx.Response(503), httpx.Response(200, json={"slug": "agent-safety"})])
    seen: list[httpx.Request] = []

    with studio(lambda request: next(answers), seen) as client:
        project = client.project("agent-safety")

    assert project["slug"] == "agent-safety"
    assert [request.method for request in seen] == ["GET", "GET"]


def test_a_change_is_sent_once_whatever_the_answer() -> None:
    seen: list[httpx.Request] = []

    with (
        studio(lambda request: httpx.Response(503), seen) as client,
        pytest.raises(ServerError) as raised,
    ):
        client.start_run("agent-safety", 1)

    assert raised.value.status == 503
    assert [request.method for request in seen] == ["POST"]


def test_pages_are_followed_on_the_studio_the_client_was_given() -> None:
    # The studio writes the next page's address with the host it was asked by; behind a proxy
    # that may be another, which must not get the token.
    answers = iter(
        [
            page([{"slug": "a"}, {"slug": "b"}], next="http://internal:8000/api/projects/?page=2"),
            page([{"slug": "c"}]),
        ]
    )
    seen: list[httpx.Request] = []

    with studio(lambda request: next(answers), seen) as client:
        slugs = [project["slug"] for project in client.projects()]

    assert slugs == ["a", "b", "c"]
    assert [str(request.url) for request in seen] == [
        "https://studio.example.org/api/projects/",
        "https://studio.example.org/api/projects/?page=2",
    ]
    assert {request.headers["Authorization"] for request in seen} == {"Token secret"}


def test_a_server_error_carries_its_status_and_the_call() -> None:
    seen: list[httpx.Request] = []

    error_page = httpx.Response(500, text="<h1>Server Error</h1>")
    with studio(lambda request: error_page, seen) as client, pytest.raises(ServerError) as raised:
        client.create_release("agent-safety", "1.0.0")

    assert raised.value.status == 500
    assert raised.value.method == "POST"
    assert raised.value.url == "https://studio.example.org/api/projects/agent-safety/releases/"
    assert raised.value.body == "<h1>Server Error</h1>"
