"""Judges' calls go only where a site administrator's connection says, and nothing an endpoint
says about itself comes back: loopback, link-local and private addresses are refused unless the
connection allows them, redirects are not followed, error texts are the studio's own."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from dataclasses import replace

import pytest
from django.urls import reverse

from judging.client import (
    REFUSED_ADDRESS,
    UNREACHABLE,
    AddressRefused,
    CallFailed,
    ChatClient,
    Endpoint,
    checked_address,
)
from judging.models import ConnectionCheck, JudgeRun
from judging.services.judges import (
    connection_check_execute,
    connection_check_start,
    endpoint_of,
    judge_snapshot,
)
from judging.services.run_engine import judge_run_execute
from judging.services.runs import judge_run_create
from tests.fake_llm import SECRET_TEXT, FakeLLM, redirect, revealing_error
from tests.judging.judge_runs import make_connection, make_judge, numbered_records

KEY_VARIABLE = "STUDIO_GUARD_TEST_API_KEY"
KEY = "sk-guard-test-0a1b2c3d"
HELLO = [{"role": "user", "content": "Hello"}]


@pytest.fixture(autouse=True)
def key(monkeypatch) -> None:
    monkeypatch.setenv(KEY_VARIABLE, KEY)


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "localhost",
        "::1",
        "169.254.169.254",
        "10.0.0.5",
        "172.16.3.4",
        "192.168.1.1",
        "100.64.0.1",
        "0.0.0.0",  # noqa: S104 (an address refused, not one bound)
        "::ffff:127.0.0.1",
        "fd00::1",
        "fe80::1",
        # IPv4 addresses that are not public, reached through IPv6: NAT64 (127.0.0.1, 10.0.0.1),
        # a network's own NAT64 prefix, the IPv4-compatible form, 6to4 and Teredo.
        "64:ff9b::7f00:1",
        "64:ff9b::a00:1",
        "64:ff9b:1::a00:1",
        "::7f00:1",
        "::10.0.0.1",
        "2002:7f00:1::1",
        "2001:0:4136:e378:8000:63bf:f5ff:fffe",
    ],
)
def test_addresses_that_are_not_public_are_refused(host: str) -> None:
    with pytest.raises(AddressRefused, match="loopback, link-local or private"):
        checked_address(host, allow_private=False)

    checked_address(host, allow_private=True)


@pytest.mark.parametrize("host", ["8.8.8.8", "64:ff9b::808:808"])
def test_a_public_address_is_called(host: str) -> None:
    checked_address(host, allow_private=False)
    checked_address("2001:4860:4860::8888", allow_private=False)


def test_a_host_that_does_not_resolve_is_refused_in_words_of_its_own() -> None:
    with pytest.raises(AddressRefused, match="could not be resolved"):
        checked_address("no-such-host.invalid", allow_private=False)


def test_a_loopback_endpoint_the_connection_may_not_reach_never_gets_the_key(cast) -> None:
    numbered_records(cast.project, 3)
    with FakeLLM() as llm:
        connection = make_connection(llm.base_url, api_key_env=KEY_VARIABLE, allow_private=False)
        judge = make_judge(cast.project, "", connection=connection)
        run = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)
        check = connection_check_start(
            actor=cast.manager, connection=judge.connection, model=judge.model, judge=judge
        )

        judge_run_execute(run_id=run.pk)
        connection_check_execute(check_id=check.pk)

        assert llm.request_count == 0
    run.refresh_from_db()
    check.refresh_from_db()
    assert (run.state, run.error) == (JudgeRun.State.FAILED, REFUSED_ADDRESS)
    assert (check.state, check.message) == (ConnectionCheck.State.FAILED, REFUSED_ADDRESS)
    page = cast.client_for("manager").get(
        reverse("judging:run_detail", args=[cast.project.slug, run.pk])
    )
    assert "loopback, link-local or private address" in page.content.decode()
    assert "127.0.0.1" not in page.content.decode()


def test_the_same_endpoint_is_called_once_an_administrator_allows_private_addresses(
    cast,
) -> None:
    numbered_records(cast.project, 3)
    with FakeLLM() as llm:
        connection = make_connection(llm.base_url, api_key_env=KEY_VARIABLE, allow_private=False)
        judge = make_judge(cast.project, "", connection=connection)
        connection.allow_private = True
        connection.save()
        run = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)

        judge_run_execute(run_id=run.pk)

        assert {request.headers["authorization"] for request in llm.requests} == {f"Bearer {KEY}"}
    run.refresh_from_db()
    assert (run.state, run.valid_count) == (JudgeRun.State.SUCCEEDED, 3)


def test_a_redirect_is_not_followed_and_the_key_stays_home(cast) -> None:
    numbered_records(cast.project, 2)
    with FakeLLM() as elsewhere, FakeLLM() as llm:
        llm.respond = lambda request: redirect(f"{elsewhere.base_url}/chat/completions")
        judge = make_judge(cast.project, llm.base_url, api_key_env=KEY_VARIABLE, max_retries=0)
        run = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)

        judge_run_execute(run_id=run.pk)

        assert elsewhere.request_count == 0
        assert llm.request_count == 2
    errors = set(run.verdicts.values_list("error", flat=True))
    assert errors == {"The endpoint answered 307: a redirect, which is never followed."}


def test_an_endpoints_own_error_text_is_never_shown(cast) -> None:
    numbered_records(cast.project, 2)
    with FakeLLM(lambda request: revealing_error()) as llm:
        judge = make_judge(cast.project, llm.base_url, api_key_env=KEY_VARIABLE)
        run = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)
        check = connection_check_start(
            actor=cast.manager, connection=judge.connection, model=judge.model, judge=judge
        )

        judge_run_execute(run_id=run.pk)
        connection_check_execute(check_id=check.pk)

    slug = cast.project.slug
    client = cast.client_for("manager")
    shown = [
        client.get(reverse("judging:run_detail", args=[slug, run.pk])),
        client.get(reverse("judging:judge_test_detail", args=[slug, judge.pk, check.pk])),
        client.get(reverse("judging_api:run_verdicts", args=[slug, run.pk])),
        client.get(reverse("judging_api:judge_test_detail", args=[slug, judge.pk, check.pk])),
    ]
    said = "The endpoint answered 400: it refused the request."
    assert set(run.verdicts.values_list("error", flat=True)) == {said}
    for response in shown:
        body = response.content.decode()
        assert said in body
        assert "hunter2" not in body and SECRET_TEXT not in body and "Bad request" not in body


class Resolver:
    """A DNS whose answers for one name the test decides, in turn; other names resolve as
    usual."""

    def __init__(self, monkeypatch, name: str, *answers: str) -> None:
        self.name = name
        self.answers = list(answers)
        self.asked = 0
        real = socket.getaddrinfo

        def getaddrinfo(host: str, *args: object, **kwargs: object) -> list:
            if host != name:
                return real(host, *args, **kwargs)
            answer = self.answers[min(self.asked, len(self.answers) - 1)]
            self.asked += 1
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (answer, 0))]

        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def test_a_connection_allowed_private_addresses_reaches_a_local_server_by_name(
    cast, monkeypatch
) -> None:
    with FakeLLM() as llm:
        port = llm.base_url.split(":")[2].split("/")[0]
        Resolver(monkeypatch, "vllm.lab.test", "127.0.0.1")
        connection = make_connection(f"http://vllm.lab.test:{port}/v1")
        endpoint = replace(
            endpoint_of(judge_snapshot(make_judge(cast.project, "", connection=connection))),
            max_retries=0,
        )

        with ChatClient(endpoint) as client:
            completion = client.complete(HELLO)

        assert llm.request_count == 1
    assert completion.attempts == 1


def test_a_name_that_turns_private_after_the_first_check_gets_nowhere(cast, monkeypatch) -> None:
    numbered_records(cast.project, 1)
    with FakeLLM() as llm:
        port = llm.base_url.split(":")[2].split("/")[0]
        # Public when the run starts, loopback from then on: were the connection to look the
        # name up again after the check, it would reach the fake server.
        Resolver(monkeypatch, "judge.rebind.test", "93.184.216.34", "127.0.0.1")
        connection = make_connection(
            f"http://judge.rebind.test:{port}/v1", api_key_env=KEY_VARIABLE, allow_private=False
        )
        judge = make_judge(cast.project, "", connection=connection, max_retries=0)
        run = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)

        judge_run_execute(run_id=run.pk)

        assert llm.request_count == 0
    assert run.verdicts.get().error == REFUSED_ADDRESS


@pytest.fixture
def not_http() -> Iterator[int]:
    """A port that accepts connections and answers like an SSH server, not HTTP."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                peer, _ = server.accept()
            except OSError:
                return
            with peer:
                peer.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1]
    server.close()


def closed_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        return probe.getsockname()[1]


def test_closed_ports_and_ports_that_do_not_speak_http_read_the_same(not_http: int) -> None:
    messages = []
    for port in (closed_port(), not_http):
        endpoint = Endpoint(
            base_url=f"http://127.0.0.1:{port}/v1",
            model="m",
            allow_private=True,
            max_retries=0,
            timeout_seconds=2,
        )
        with ChatClient(endpoint) as client, pytest.raises(CallFailed) as failure:
            client.complete(HELLO)
        messages.append(str(failure.value))

    assert messages == [UNREACHABLE, UNREACHABLE]


def test_a_run_of_a_model_its_connection_no_longer_offers_fails_saying_so(cast) -> None:
    numbered_records(cast.project, 1)
    with FakeLLM() as llm:
        judge = make_judge(cast.project, llm.base_url)
        run = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)
        judge.connection.model_names = "another-model"
        judge.connection.save()

        judge_run_execute(run_id=run.pk)

        assert llm.request_count == 0
    run.refresh_from_db()
    assert run.state == JudgeRun.State.FAILED
    assert run.error.startswith(f"The connection {judge.connection} no longer offers fake-judge-1")
