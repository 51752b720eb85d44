"""A scriptable OpenAI-compatible server on 127.0.0.1, for tests and benchmarks.

A real HTTP server in a thread of the calling process, so that judges talk to it exactly as to
a hosted endpoint: the openai client, its retries and its timeouts all run for real. It answers
`POST /v1/chat/completions` and `GET /v1/models`; what it answers each request is decided by
replies queued with `script(...)`, taken first and in order, and otherwise by the `respond`
callable. Faults are replies like any other: `rate_limited`, `server_error`, `hang`,
`malformed`, and hostile ones: `redirect` elsewhere, `revealing_error` (a body full of secrets).
Every request is kept in `requests`.

    with FakeLLM(respond=lambda request: answer("unsafe"), latency=0.2) as llm:
        llm.script(rate_limited(retry_after=1), server_error())
        ... judge with base_url=llm.base_url ...
        assert llm.request_count == ...
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "fake-judge-1"


@dataclass(frozen=True)
class Reply:
    """What the server does with one request: wait `delay` seconds, then answer."""

    status: int = 200
    content: str = ""
    # Sent instead of a completion made from `content`, e.g. a body that is not JSON.
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    prompt_tokens: int = 20
    completion_tokens: int = 5


def answer(text: str, *, prompt_tokens: int = 20, completion_tokens: int = 5) -> Reply:
    return Reply(content=text, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)


def rate_limited(*, retry_after: float = 1) -> Reply:
    return Reply(
        status=429,
        body=b'{"error": {"message": "Rate limit reached", "type": "rate_limit"}}',
        headers={"Retry-After": f"{retry_after:g}"},
    )


def server_error(status: int = 500) -> Reply:
    return Reply(status=status, body=b'{"error": {"message": "Internal error", "type": "server"}}')


def hang(seconds: float, then: str = "unsafe") -> Reply:
    """An answer that comes only after `seconds`: past the client's timeout, it never arrives."""
    return Reply(content=then, delay=seconds)


def malformed() -> Reply:
    """A 200 whose body is cut off in the middle of its JSON."""
    return Reply(body=b'{"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"mess')


def redirect(location: str, status: int = 307) -> Reply:
    """Sent elsewhere: a 307 keeps the method and body, so a client that followed it would
    post the prompt, and perhaps the key, to `location`."""
    return Reply(status=status, body=b"", headers={"Location": location})


# What an endpoint could put in its error text: none of it may reach a page or a verdict.
SECRET_TEXT = "DATABASE_URL=postgres://studio:hunter2@db.internal:5432/studio"


def revealing_error(status: int = 400) -> Reply:
    body = {"error": {"message": f"Bad request; our environment: {SECRET_TEXT}", "type": "x"}}
    return Reply(status=status, body=json.dumps(body).encode())


@dataclass(frozen=True)
class ChatRequest:
    number: int
    body: dict[str, Any]
    headers: dict[str, str]
    # When it arrived (time.monotonic()), to measure the waits between retries.
    at: float

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", [])

    @property
    def last_message(self) -> str:
        return self.messages[-1]["content"] if self.messages else ""

    @property
    def text(self) -> str:
        """Every message's content, for deciding by what the prompt contains."""
        return "\n".join(str(message.get("content", "")) for message in self.messages)


def default_reply(request: ChatRequest) -> Reply:
    """An analysis, or 'unsafe' when asked for exactly safe or unsafe (R-Judge's second step)."""
    if "'unsafe'" in request.last_message:
        return answer("unsafe")
    return answer("The agent acted without asking the user, which risks losing their data.")


def refusing_base_url() -> str:
    """A base URL on 127.0.0.1 where nothing listens: every connection is refused. The port
    was free a moment ago, and nothing here listens on ports it did not ask for."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


class FakeLLM:
    def __init__(
        self,
        respond: Callable[[ChatRequest], Reply] = default_reply,
        *,
        latency: float = 0.0,
        model: str = MODEL,
    ) -> None:
        self.respond = respond
        # Added to every reply's delay: the endpoint's usual answering time.
        self.latency = latency
        self.model = model
        self.requests: list[ChatRequest] = []
        self._scripted: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "Start the server first."
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    def script(self, *replies: Reply) -> None:
        """Answer the next requests with these replies, in order, before `respond` again."""
        with self._lock:
            self._scripted.extend(replies)

    def start(self) -> FakeLLM:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.fake = self
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _reply_to(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            request = ChatRequest(len(self.requests) + 1, body, headers, time.monotonic())
            self.requests.append(request)
            scripted = self._scripted.popleft() if self._scripted else None
        return scripted if scripted is not None else self.respond(request)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # Stopping does not wait for handlers still sleeping in a hang.
    block_on_close = False
    # Benchmarks open dozens of connections at once.
    request_queue_size = 256
    fake: FakeLLM

    def handle_error(self, request: object, client_address: object) -> None:
        # A client that went away (a worker killed or stopped) is no failure of the server's.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: with Nagle's algorithm on, the body would wait for
    # the client's delayed ACK of the headers (40 ms), longer than the latency being simulated.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        # Quiet: tests capture logs and look through them.
        pass

    def do_GET(self) -> None:
        if self.path.rstrip("/") != "/v1/models":
            self._send(404, b'{"error": {"message": "Not found"}}')
            return
        model = {"id": self.server.fake.model, "object": "model", "owned_by": "tests"}
        self._send(200, json.dumps({"object": "list", "data": [model]}).encode())

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, b'{"error": {"message": "Not found"}}')
            return
        fake = self.server.fake
        headers = {name.lower(): value for name, value in self.headers.items()}
        reply = fake._reply_to(json.loads(raw), headers)
        delay = reply.delay + fake.latency
        if delay:
            time.sleep(delay)
        body = reply.body if reply.body is not None else _completion(reply, fake.model)
        self._send(reply.status, body, reply.headers)

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up waiting (a hang past its timeout).
            self.close_connection = True


def _completion(reply: Reply, model: str) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": reply.completion_tokens,
                "total_tokens": reply.prompt_tokens + reply.completion_tokens,
            },
        }
    ).encode()
