"""Chat completions from any OpenAI-compatible endpoint, with retries, for judges.

The openai client does the retrying: 408, 409, 429, 5xx, timeouts and dropped connections are
tried again with exponential backoff (0.5 s doubling to 8 s, less up to 25 % jitter), or after
the server's Retry-After when it gives one (up to two minutes). When the last retry fails, or
the answer is unusable, `complete` raises CallFailed with a message fit for a verdict's error:
one of a few fixed descriptions, never the endpoint's own words (an endpoint may say anything,
the key it was sent included), and a `kind` by which a run tells a broken endpoint from a record
the judge could not answer.

Where calls go is a model connection's, chosen by a site administrator, and every call is
guarded as if it were not:
- the host is resolved whenever a connection is opened (retries included) and nothing is sent
  if any of its addresses is loopback, link-local, private or otherwise not public, unless the
  connection allows private addresses. The connection is opened to the very address checked,
  not to the name resolved again, so that a name whose answers change in between (DNS
  rebinding) gets nowhere. What the check cannot see is where a public address leads: a
  public address that routes back inside, or a proxy, is for an egress firewall to stop;
- redirects are never followed, and no proxy from the environment is used: the request goes
  to the address checked, or nowhere;
- what went wrong is told in fixed words with the status code, never in the endpoint's own
  text (which could quote anything, the key included), and a closed port, an open one that
  does not speak HTTP and a reset connection all read the same.

The API key is read from the connection's environment variable at each request and goes
nowhere but the request's Authorization header.
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import threading
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, cast

import httpx2

from judging.limits import (
    ANYONE,
    Caller,
    Limits,
    LimitWait,
    pause_connection,
    retry_after_seconds,
    settle_tokens,
    wait_for_turn,
)

if TYPE_CHECKING:
    from httpcore2 import NetworkBackend

# Sent when the connection names no variable: local servers (vLLM, Ollama, llama.cpp) want no
# key, but the client insists on one.
NO_KEY = "no-key"
UNREACHABLE = "Could not reach the endpoint: the connection was refused, dropped or never made."
REFUSED_ADDRESS = (
    "The connection's endpoint resolves to a loopback, link-local or private address, which "
    "this connection may not reach."
)
UNRESOLVED = "The connection's host name could not be resolved."


class EndpointUnavailable(Exception):
    """No call can be made at all; `str()` is fit to show a manager."""


class ApiKeyMissing(EndpointUnavailable):
    """The connection names a variable that is not set where the call would be made."""

    def __init__(self) -> None:
        super().__init__(
            "The API key of the judge's connection is not set where the worker runs: ask a "
            "site administrator."
        )


class AddressRefused(EndpointUnavailable):
    """The endpoint's host resolves to an address the connection may not reach, or to none."""


class Failure(StrEnum):
    """Why a call failed, as far as a run needs to know."""

    UNREACHABLE = "unreachable"
    REFUSED = "refused"  # 401 or 403: the key or the access
    NOT_FOUND = "not_found"  # 404: no such model (or path)
    SERVER = "server"  # 5xx or 429, after every retry
    TIMEOUT = "timeout"
    REJECTED = "rejected"  # another status: this request was refused
    BAD_ANSWER = "bad_answer"


class CallFailed(Exception):
    """No usable answer; `str()` is a fixed description, safe to store and show."""

    def __init__(
        self, message: str, *, attempts: int, latency_ms: int, kind: Failure = Failure.BAD_ANSWER
    ) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.latency_ms = latency_ms
        self.kind = kind


@dataclass(frozen=True)
class Endpoint:
    """Where and how a judge's calls go: its connection's address, key variable and limits,
    and the judge's model and settings."""

    base_url: str
    model: str
    api_key_env: str = ""
    allow_private: bool = False
    # The connection's id and its limits per minute, shared by every worker (None: no limit).
    connection_id: int | None = None
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None
    parameters: dict[str, Any] = field(default_factory=dict)
    timeout_seconds: float = 60
    max_retries: int = 4
    concurrency: int = 8


@dataclass(frozen=True)
class Completion:
    text: str
    tokens_in: int
    tokens_out: int
    # HTTP requests made, the retries included.
    attempts: int
    latency_ms: int


def api_key_is_set(variable: str) -> bool:
    """Whether the variable holds a key here. Administrators see this, never the key."""
    return bool(variable) and bool(os.environ.get(variable))


def checked_address(host: str, *, allow_private: bool) -> str:
    """An address of the host that may be called; AddressRefused if the host resolves to none,
    or to any address that may not be called."""
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise AddressRefused(UNRESOLVED) from None
    if not infos:
        raise AddressRefused(UNRESOLVED)
    # The address's text: typeshed allows an int there for families other than the IP ones,
    # which a host's SOCK_STREAM addresses never are.
    addresses = [str(info[4][0]) for info in infos]
    if not allow_private:
        for text in addresses:
            address = ipaddress.ip_address(text.split("%")[0])
            if not address.is_global or address.is_multicast or _embeds_a_refused_ipv4(address):
                raise AddressRefused(REFUSED_ADDRESS)
    return addresses[0]


# IPv6 prefixes that carry an IPv4 address in their last 32 bits: NAT64's well-known prefix
# (RFC 6052), which a NAT64 gateway translates to that IPv4 address, and the deprecated
# IPv4-compatible form (::a.b.c.d). Python's ipaddress calls both global.
_IPV4_IN_LAST_32_BITS = (
    ipaddress.IPv6Network("64:ff9b::/96"),
    ipaddress.IPv6Network("::/96"),
)
# NAT64 prefixes a network chooses for itself (RFC 8215), whose IPv4 addresses may sit at any of
# several offsets: refused whole.
_LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")


def _embeds_a_refused_ipv4(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether an IPv6 address reaches an IPv4 address that may not be called: written as IPv6
    (::ffff:127.0.0.1), through NAT64, 6to4 or Teredo, or in the IPv4-compatible form."""
    if not isinstance(address, ipaddress.IPv6Address):
        return False
    if address in _LOCAL_NAT64:
        return True
    embedded = [address.ipv4_mapped, address.sixtofour]
    if any(address in prefix for prefix in _IPV4_IN_LAST_32_BITS):
        embedded.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    if address.teredo is not None:
        embedded.append(address.teredo[1])
    return any(ipv4 is not None and (not ipv4.is_global or ipv4.is_multicast) for ipv4 in embedded)


class _CheckedBackend:
    """The HTTP client's network backend, opening connections only to an address it has just
    checked (see the module's docstring)."""

    def __init__(self, *, allow_private: bool) -> None:
        import httpcore2  # loaded with the openai client, when a judge calls

        self._backend = httpcore2.SyncBackend()
        self._allow_private = allow_private

    def connect_tcp(self, host: str, port: int, *args: Any, **kwargs: Any) -> Any:
        address = checked_address(host, allow_private=self._allow_private)
        return self._backend.connect_tcp(address, port, *args, **kwargs)

    def connect_unix_socket(self, *args: Any, **kwargs: Any) -> Any:
        raise AddressRefused(REFUSED_ADDRESS)

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def _checked_transport(endpoint: Endpoint) -> httpx2.HTTPTransport:
    """A transport whose every connection goes through _CheckedBackend, with no proxy."""
    limits = httpx2.Limits(
        max_connections=endpoint.concurrency, max_keepalive_connections=endpoint.concurrency
    )
    transport = httpx2.HTTPTransport(limits=limits, trust_env=False)
    # httpx takes no network backend of its own; its connection pool reads this attribute for
    # every connection it opens. tests/judging/test_connection_guard.py fails if it stops.
    # _CheckedBackend does what a NetworkBackend does without subclassing it: httpcore is
    # imported only once a judge calls (see _CheckedBackend.__init__).
    transport._pool._network_backend = cast(
        "NetworkBackend", _CheckedBackend(allow_private=endpoint.allow_private)
    )
    return transport


class ChatClient:
    """One endpoint's client, shared by the threads of a run (it is thread-safe).

    Every request waits for its caller's turn at the connection's limits (judging/limits.py):
    `complete` raises LimitWait rather than wait longer than `patience` seconds for one (None:
    as long as it takes), and as soon as the client is closed, so that a run steps aside
    instead of holding its worker, and stops waiting when it stops."""

    def __init__(
        self, endpoint: Endpoint, *, caller: Caller = ANYONE, patience: float | None = None
    ) -> None:
        if endpoint.api_key_env and not api_key_is_set(endpoint.api_key_env):
            raise ApiKeyMissing
        # Refused here, a run to a forbidden address fails at once instead of record by record.
        checked_address(httpx2.URL(endpoint.base_url).host, allow_private=endpoint.allow_private)
        # Imported here: the openai package takes 25 MB and 0.4 s to load, which every process
        # that loads this module (pages, imports) would pay though only judge runs call it.
        import openai

        self.endpoint = endpoint
        self._limits = (
            None
            if endpoint.connection_id is None
            else Limits(
                endpoint.connection_id, endpoint.requests_per_minute, endpoint.tokens_per_minute
            )
        )
        self._caller = caller
        self._patience = patience
        self._closed = threading.Event()
        # Per thread: the HTTP requests of the current call, the tokens they drew and not yet
        # settled, and those of the last request.
        self._attempts = threading.local()
        http_client = openai.DefaultHttpxClient(
            transport=_checked_transport(endpoint),
            event_hooks={"request": [self._before_request], "response": [self._after_response]},
            follow_redirects=False,
            trust_env=False,
        )
        self._client = openai.OpenAI(
            base_url=endpoint.base_url,
            api_key=self._api_key,
            timeout=endpoint.timeout_seconds,
            max_retries=endpoint.max_retries,
            http_client=http_client,
        )

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._closed.set()
        self._client.close()

    def complete(self, messages: list[dict[str, str]], **parameters: Any) -> Completion:
        """One chat completion, retried as the module says; raises CallFailed."""
        self._attempts.count = self._attempts.drawn = self._attempts.last = 0
        started = time.monotonic()
        options = {**self.endpoint.parameters, **parameters}
        self._attempts.answer_tokens = int(options.get("max_tokens") or 0)
        try:
            # Posted and read as plain JSON, through the client still (its retries, backoff and
            # errors): its typed `chat.completions.create` spent more of a worker's CPU walking
            # the messages' type hints and building models of the answer than the HTTP call
            # took (docs/benchmarks.md, "CPU a call").
            answer = json.loads(
                self._client.post(
                    "/chat/completions",
                    cast_to=bytes,
                    body={"model": self.endpoint.model, "messages": messages, **options},
                )
            )
            text = answer["choices"][0]["message"]["content"]
            usage = answer.get("usage") or {}
            tokens_in = int(usage.get("prompt_tokens") or 0)
            tokens_out = int(usage.get("completion_tokens") or 0)
        except Exception as error:
            # A request that got no answer to count took nothing: what it drew goes back.
            self._settle(-self._attempts.drawn)
            if isinstance(error, LimitWait):
                raise
            kind, message = _describe(error, self.endpoint)
            raise CallFailed(
                message,
                attempts=self._attempts.count,
                latency_ms=_elapsed_ms(started),
                kind=kind,
            ) from None
        if not isinstance(text, str):
            raise CallFailed(
                "The endpoint's answer held no message.",
                attempts=self._attempts.count,
                latency_ms=_elapsed_ms(started),
            )
        if usage:
            self._settle(tokens_in + tokens_out - self._attempts.drawn)
        return Completion(
            text=text,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            attempts=self._attempts.count,
            latency_ms=_elapsed_ms(started),
        )

    def _api_key(self) -> str:
        if not self.endpoint.api_key_env:
            return NO_KEY
        key = os.environ.get(self.endpoint.api_key_env)
        if not key:
            raise ApiKeyMissing
        return key

    def _settle(self, extra_tokens: int) -> None:
        if self._limits is not None and extra_tokens:
            settle_tokens(self._limits, extra_tokens)
        self._attempts.drawn = getattr(self._attempts, "drawn", 0) + extra_tokens

    def _before_request(self, request: httpx2.Request) -> None:
        """Every HTTP request, retries included, before it is sent: counted, and held back to
        the connection's limits and pauses, in the caller's turn (judging/limits.py)."""
        self._attempts.count = getattr(self._attempts, "count", 0) + 1
        self._attempts.last = 0
        if self._limits is None:
            return
        # About four bytes a token, JSON and all, and the answer's largest; the answer's usage
        # settles the difference.
        tokens = len(request.content) // 4 + getattr(self._attempts, "answer_tokens", 0)
        wait_for_turn(
            self._limits, tokens, self._caller, patience=self._patience, stop=self._closed
        )
        self._attempts.drawn = getattr(self._attempts, "drawn", 0) + tokens
        self._attempts.last = tokens

    def _after_response(self, response: httpx2.Response) -> None:
        """An answer that refuses the request gives back the tokens it drew (a provider counts
        none for it), and a 429 that says how long to wait pauses every worker on the
        connection."""
        if self._limits is None or response.is_success:
            return
        self._settle(-getattr(self._attempts, "last", 0))
        self._attempts.last = 0
        seconds = retry_after_seconds(response.headers) if response.status_code == 429 else None
        if seconds:
            pause_connection(self._limits.connection_id, seconds)


def _describe(error: Exception, endpoint: Endpoint) -> tuple[Failure, str]:
    """Why a call failed, in fixed words a manager can act on: never the endpoint's own text."""
    import openai  # loaded by ChatClient already; see there

    unavailable = error if isinstance(error, EndpointUnavailable) else error.__cause__
    if isinstance(unavailable, ApiKeyMissing):
        return Failure.REFUSED, str(unavailable)
    if isinstance(unavailable, EndpointUnavailable):
        # An address the connection may not reach, or a name that does not resolve: no record
        # will fare better.
        return Failure.UNREACHABLE, str(unavailable)
    if isinstance(error, openai.APITimeoutError):
        return (
            Failure.TIMEOUT,
            f"No answer within {endpoint.timeout_seconds:g} s, after every retry.",
        )
    if isinstance(error, openai.APIConnectionError):
        return Failure.UNREACHABLE, UNREACHABLE
    if isinstance(error, openai.APIStatusError):
        return _describe_status(error.status_code)
    if isinstance(error, json.JSONDecodeError):
        return Failure.BAD_ANSWER, "The endpoint's answer was not valid JSON."
    if isinstance(error, LookupError | TypeError | AttributeError | ValueError):
        return Failure.BAD_ANSWER, "The endpoint's answer was not a chat completion."
    return Failure.BAD_ANSWER, f"The call failed unexpectedly ({type(error).__name__})."


def _describe_status(status: int) -> tuple[Failure, str]:
    if status in (401, 403):
        return Failure.REFUSED, f"The endpoint answered {status}: it refused the API key or access."
    if status == 404:
        return Failure.NOT_FOUND, "The endpoint answered 404: no such model or path."
    if status == 429:
        return Failure.SERVER, "The endpoint answered 429: rate limited, after every retry."
    if status >= 500:
        return Failure.SERVER, f"The endpoint answered {status}: a server error, after every retry."
    if 300 <= status < 400:
        return (
            Failure.REJECTED,
            f"The endpoint answered {status}: a redirect, which is never followed.",
        )
    return Failure.REJECTED, f"The endpoint answered {status}: it refused the request."


def _elapsed_ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)
