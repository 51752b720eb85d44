"""The judges' client against a misbehaving endpoint: what it retries, how long it waits."""

from __future__ import annotations

import itertools

import pytest

from judging.client import CallFailed, ChatClient, Endpoint, Failure
from tests.fake_llm import (
    FakeLLM,
    Reply,
    answer,
    hang,
    malformed,
    rate_limited,
    refusing_base_url,
    server_error,
)

HELLO = [{"role": "user", "content": "Hello"}]


def client_of(llm: FakeLLM, **options: object) -> ChatClient:
    # The fake server listens on 127.0.0.1: a connection for a local server.
    settings = {"timeout_seconds": 1, "max_retries": 2, "allow_private": True, **options}
    return ChatClient(Endpoint(base_url=llm.base_url, model="fake-judge-1", **settings))


def gaps(llm: FakeLLM) -> list[float]:
    times = [request.at for request in llm.requests]
    return [later - earlier for earlier, later in itertools.pairwise(times)]


def test_a_429_is_retried_after_the_retry_after_it_names() -> None:
    with FakeLLM(lambda request: answer("fine")) as llm, client_of(llm) as client:
        llm.script(rate_limited(retry_after=2))

        completion = client.complete(HELLO)

    assert (completion.text, completion.attempts) == ("fine", 2)
    # Longer than the backoff would have been (0.5 s at most, for a first retry).
    assert gaps(llm)[0] >= 1.9


def test_server_errors_are_retried_with_growing_waits_then_given_up() -> None:
    with (
        FakeLLM(lambda request: server_error(503)) as llm,
        client_of(llm, max_retries=3) as client,
        pytest.raises(CallFailed) as failure,
    ):
        client.complete(HELLO)

    waits = gaps(llm)
    assert failure.value.attempts == llm.request_count == 4
    assert str(failure.value) == "The endpoint answered 503: a server error, after every retry."
    assert failure.value.kind == Failure.SERVER
    # Exponential backoff from 0.5 s, less up to a quarter of jitter: 0.5, 1, 2.
    for wait, nominal in zip(waits, (0.5, 1.0, 2.0), strict=True):
        assert 0.75 * nominal - 0.05 <= wait <= nominal + 0.25


def test_a_hang_past_the_timeout_is_retried() -> None:
    with FakeLLM(lambda request: answer("late but fine")) as llm, client_of(llm) as client:
        llm.script(hang(3))

        completion = client.complete(HELLO)

    assert completion.text == "late but fine"
    assert completion.attempts == 2 and completion.latency_ms >= 1000


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (malformed(), "The endpoint's answer was not valid JSON"),
        (Reply(body=b'{"choices": []}'), "The endpoint's answer was not a chat completion."),
        (
            Reply(status=400, body=b'{"error": {"message": "Bad model"}}'),
            "The endpoint answered 400: it refused the request.",
        ),
    ],
    ids=["malformed JSON", "no choices", "a client error"],
)
def test_answers_that_retrying_cannot_mend_fail_at_once(reply: Reply, message: str) -> None:
    with FakeLLM() as llm, client_of(llm) as client:
        llm.script(reply)

        with pytest.raises(CallFailed, match=message) as failure:
            client.complete(HELLO)

    assert failure.value.attempts == llm.request_count == 1


def test_usage_and_parameters_travel() -> None:
    with (
        FakeLLM(lambda request: answer("ok", prompt_tokens=11, completion_tokens=3)) as llm,
        client_of(llm, parameters={"temperature": 0, "seed": 1}) as client,
    ):
        completion = client.complete(HELLO)

    body = llm.requests[0].body
    assert (completion.tokens_in, completion.tokens_out) == (11, 3)
    assert (body["model"], body["temperature"], body["seed"]) == ("fake-judge-1", 0, 1)


@pytest.mark.parametrize(
    ("status", "kind", "message"),
    [
        (401, Failure.REFUSED, "The endpoint answered 401: it refused the API key or access."),
        (403, Failure.REFUSED, "The endpoint answered 403: it refused the API key or access."),
        (404, Failure.NOT_FOUND, "The endpoint answered 404: no such model or path."),
    ],
)
def test_a_refusal_is_told_in_fixed_words_never_the_endpoints_own(
    status: int, kind: Failure, message: str
) -> None:
    body = b'{"error": {"message": "<b>hostile</b> words from the endpoint"}}'
    with FakeLLM() as llm, client_of(llm) as client:
        llm.script(Reply(status=status, body=body))

        with pytest.raises(CallFailed) as failure:
            client.complete(HELLO)

    assert (str(failure.value), failure.value.kind) == (message, kind)


def test_an_endpoint_that_refuses_connections_is_unreachable() -> None:
    endpoint = Endpoint(base_url=refusing_base_url(), model="m", max_retries=0, allow_private=True)
    with ChatClient(endpoint) as client, pytest.raises(CallFailed) as failure:
        client.complete(HELLO)

    assert failure.value.kind == Failure.UNREACHABLE
    assert str(failure.value).startswith("Could not reach the endpoint")
