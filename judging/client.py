"""Chat completions from any OpenAI-compatible endpoint, with retries, for judges.

The openai client does the retrying: 408, 409, 429, 5xx, timeouts and dropped connections are
tried again with exponential backoff (0.5 s doubling to 8 s, less up to 25 % jitter), or after
the server's Retry-After when it gives one (up to two minutes). When the last retry fails, or
the answer is unusable, `complete` raises CallFailed with a message fit for a verdict's error:
one of a few fixed descriptions, never the endpoint's own words (an endpoint may say anything,
the key it was sent included), and a `kind` by which a run tells a broken endpoint from a record
the judge could not answer.

The API key is read from the environment variable the judge names, at each request, and goes
nowhere but the request's Authorization header: every message that leaves this module has it
blanked out, in case an endpoint echoes it back in an error.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import httpx2

# Sent when the judge names no variable: local servers (vLLM, Ollama, llama.cpp) want no key,
# but the client insists on one.
NO_KEY = "no-key"
# Sampling parameters a judge may set; anything else would be refused by the client.
PARAMETERS = frozenset(
    {"temperature", "top_p", "max_tokens", "seed", "presence_penalty", "frequency_penalty", "stop"}
)


class ApiKeyMissing(Exception):
    """The judge names a variable that is not set where the call would be made."""

    def __init__(self, variable: str) -> None:
        super().__init__(
            f"The environment variable {variable} that the judge reads its API key from is not "
            "set where the worker runs."
        )


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
    """Where and how a judge's calls go; built from a judge or a run's snapshot of it."""

    base_url: str
    model: str
    api_key_env: str = ""
    parameters: dict[str, Any] = field(default_factory=dict)
    timeout_seconds: float = 60
    max_retries: int = 4
    concurrency: int = 8

    @classmethod
    def from_snapshot(cls, snapshot: dict[str, Any]) -> Endpoint:
        return cls(
            base_url=snapshot["base_url"],
            model=snapshot["model"],
            api_key_env=snapshot.get("api_key_env", ""),
            parameters=snapshot.get("parameters") or {},
            timeout_seconds=snapshot.get("timeout_seconds", 60),
            max_retries=snapshot.get("max_retries", 4),
            concurrency=snapshot.get("concurrency", 8),
        )


@dataclass(frozen=True)
class Completion:
    text: str
    tokens_in: int
    tokens_out: int
    # HTTP requests made, the retries included.
    attempts: int
    latency_ms: int


def api_key_is_set(variable: str) -> bool:
    """Whether the variable holds a key here. Pages show this, never the key."""
    return bool(variable) and bool(os.environ.get(variable))


class ChatClient:
    """One endpoint's client, shared by the threads of a run (it is thread-safe)."""

    def __init__(self, endpoint: Endpoint) -> None:
        if endpoint.api_key_env and not api_key_is_set(endpoint.api_key_env):
            raise ApiKeyMissing(endpoint.api_key_env)
        # Imported here: the openai package takes 25 MB and 0.4 s to load, which every process
        # that loads this module (pages, imports) would pay though only judge runs call it.
        import openai

        self.endpoint = endpoint
        self._attempts = threading.local()
        http_client = openai.DefaultHttpxClient(
            limits=httpx2.Limits(
                max_connections=endpoint.concurrency,
                max_keepalive_connections=endpoint.concurrency,
            ),
            event_hooks={"request": [self._count_attempt]},
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
        self._client.close()

    def complete(self, messages: list[dict[str, str]], **parameters: Any) -> Completion:
        """One chat completion, retried as the module says; raises CallFailed."""
        self._attempts.count = 0
        started = time.monotonic()
        options = {**self.endpoint.parameters, **parameters}
        try:
            response = self._client.chat.completions.with_raw_response.create(
                model=self.endpoint.model, messages=messages, **options
            )
            completion = response.parse()
            text = completion.choices[0].message.content
        except Exception as error:
            kind, message = _describe(error, self.endpoint)
            raise CallFailed(
                self._redact(message),
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
        usage = completion.usage
        return Completion(
            text=text,
            tokens_in=(usage.prompt_tokens or 0) if usage else 0,
            tokens_out=(usage.completion_tokens or 0) if usage else 0,
            attempts=self._attempts.count,
            latency_ms=_elapsed_ms(started),
        )

    def _api_key(self) -> str:
        if not self.endpoint.api_key_env:
            return NO_KEY
        key = os.environ.get(self.endpoint.api_key_env)
        if not key:
            raise ApiKeyMissing(self.endpoint.api_key_env)
        return key

    def _count_attempt(self, request: httpx2.Request) -> None:
        self._attempts.count = getattr(self._attempts, "count", 0) + 1

    def _redact(self, text: str) -> str:
        key = os.environ.get(self.endpoint.api_key_env) if self.endpoint.api_key_env else None
        return text.replace(key, "[redacted]") if key else text


def _describe(error: Exception, endpoint: Endpoint) -> tuple[Failure, str]:
    """Why a call failed, in fixed words a manager can act on."""
    import openai  # loaded by ChatClient already; see there

    if isinstance(error, ApiKeyMissing):
        return Failure.REFUSED, str(error)
    if isinstance(error, openai.APITimeoutError):
        return (
            Failure.TIMEOUT,
            f"No answer within {endpoint.timeout_seconds:g} s, after every retry.",
        )
    if isinstance(error, openai.APIConnectionError):
        return Failure.UNREACHABLE, (
            "Could not reach the endpoint: the connection was refused, dropped or never made."
        )
    if isinstance(error, openai.APIStatusError):
        return _describe_status(error.status_code)
    if isinstance(error, json.JSONDecodeError):
        return Failure.BAD_ANSWER, "The endpoint's answer was not valid JSON."
    if isinstance(error, LookupError | TypeError | AttributeError):
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
    return Failure.REJECTED, f"The endpoint answered {status}: it refused the request."


def _elapsed_ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)
