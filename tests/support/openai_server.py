"""A real local HTTP server that speaks OpenAI Chat Completions, with scripted faults.

It listens on 127.0.0.1 on a free port (``http.server.ThreadingHTTPServer``),
answers ``POST /v1/chat/completions`` following a script of behaviours, one
per request (the last one repeats), and records every request so tests can
check what was sent. The real ``openai`` client talks to it unpatched.

Behaviours:
``"ok"``               a summary with every required section (or the split-turn sections
                       when the request asks for them)
``"unauthorized"``     401, echoing the key it was sent in the error text (as some servers do)
``"rate_limited"``     429 with ``retry-after-ms: 20``
``"server_error"``     500, also echoing the key
``"hang"``             no answer until ``hang_seconds`` pass or the server closes
``"empty"``            200 with empty content
``"missing_sections"`` 200 with a summary lacking ``## Next Steps`` and ``## Critical Context``
``Reply(status, body, headers)``  anything else

>>> with FakeOpenAIServer(["rate_limited", "ok"]) as server:
...     server.url.startswith("http://127.0.0.1:")
True

As a pytest fixture: ``openai_server`` (registered in ``tests/conftest.py``) in a
test module, then ``def test_x(openai_server): server = openai_server(["ok"])``.
"""

from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Sequence

import pytest

BEHAVIOURS = ("ok", "unauthorized", "rate_limited", "server_error", "hang", "empty", "missing_sections")

FULL_SUMMARY = """\
## Goal
- Summarised by the local test server.

## Constraints & Preferences
- (none)

## Progress
### Done
- (none)
### In Progress
- (none)
### Blocked
- (none)

## Key Decisions
- (none)

## Next Steps
- (none)

## Critical Context
- (none)
"""

PREFIX_SUMMARY = """\
## Original Request
- Summarised by the local test server (turn prefix).

## Early Progress
- (none)

## Context for Suffix
- (none)
"""

PARTIAL_SUMMARY = FULL_SUMMARY.split("## Next Steps")[0]


@dataclass(frozen=True)
class Reply:
    """A custom answer: status, JSON body and headers."""

    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: Any  # the decoded JSON body (None when it was not JSON)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def unused_url() -> str:
    """A base URL where no server is running."""
    return f"http://127.0.0.1:{free_port()}/v1"


def completion(text: str, *, model: str = "test-model", finish_reason: str = "stop", n: int = 1) -> dict:
    return {"id": f"chatcmpl-local-{n}", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def _error(message: str, kind: str, code: str | None = None) -> dict:
    return {"error": {"message": message, "type": kind, "code": code}}


class FakeOpenAIServer:
    """The server; start with ``start()`` or a ``with`` block, stop with ``close()``."""

    def __init__(self, script: Sequence[str | Reply] | str | Reply = "ok", *, hang_seconds: float = 10.0):
        self.script = [script] if isinstance(script, (str, Reply)) else list(script)
        if not self.script:
            raise ValueError("the script needs at least one behaviour")
        for step in self.script:
            if isinstance(step, str) and step not in BEHAVIOURS:
                raise ValueError(f"unknown behaviour {step!r}; choose from {', '.join(BEHAVIOURS)}")
        self.hang_seconds = hang_seconds
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._httpd is not None, "the server is not running"
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """Base URL for the client (``.../v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "FakeOpenAIServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output quiet
                pass

            def do_POST(self):
                server._handle(self)

            def do_GET(self):
                server._handle(self)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-openai-server", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving; wakes any hanging handler so nothing outlives the test."""
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None

    def __enter__(self) -> "FakeOpenAIServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    # -- requests -------------------------------------------------------------
    def _next(self) -> str | Reply:
        with self._lock:
            n = len(self.requests)
        return self.script[min(n - 1, len(self.script) - 1)]

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        with self._lock:
            self.requests.append(RecordedRequest(handler.command, handler.path,
                                                 {k.lower(): v for k, v in handler.headers.items()}, body))
            n = len(self.requests)
        if handler.command != "POST" or not handler.path.rstrip("/").endswith("/chat/completions"):
            return self._send(handler, 404, _error(f"no route {handler.path}", "not_found"))
        step = self._next()
        key = (handler.headers.get("authorization") or "").removeprefix("Bearer ").strip()
        model = body.get("model", "test-model") if isinstance(body, dict) else "test-model"
        wants_prefix = "## Original Request" in json.dumps(body)
        if isinstance(step, Reply):
            return self._send(handler, step.status, step.body, step.headers)
        if step == "ok":
            return self._send(handler, 200, completion(PREFIX_SUMMARY if wants_prefix else FULL_SUMMARY,
                                                       model=model, n=n))
        if step == "empty":
            return self._send(handler, 200, completion("", model=model, n=n))
        if step == "missing_sections":
            return self._send(handler, 200, completion(PARTIAL_SUMMARY, model=model, n=n))
        if step == "unauthorized":
            return self._send(handler, 401, _error(f"Incorrect API key provided: {key}",
                                                   "invalid_request_error", "invalid_api_key"))
        if step == "rate_limited":
            return self._send(handler, 429, _error("Rate limit reached; slow down", "rate_limit_exceeded"),
                              {"retry-after-ms": "20"})
        if step == "server_error":
            return self._send(handler, 500, _error(f"The server had an error (request by {key})", "server_error"))
        if step == "hang":
            self._stop.wait(self.hang_seconds)
            return self._send(handler, 200, completion(FULL_SUMMARY, model=model, n=n))
        raise AssertionError(step)  # pragma: no cover

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, body: Any, headers: dict | None = None) -> None:
        data = json.dumps(body).encode()
        try:
            handler.send_response(status)
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(data)))
            for k, v in (headers or {}).items():
                handler.send_header(k, v)
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass  # the client gave up (a timeout); nothing to answer


@pytest.fixture
def openai_server():
    """A factory: ``openai_server(script, **options)`` starts a server closed after the test."""
    started: list[FakeOpenAIServer] = []

    def make(script: Sequence[str | Reply] | str | Reply = "ok", **options) -> FakeOpenAIServer:
        server = FakeOpenAIServer(script, **options).start()
        started.append(server)
        return server

    yield make
    for server in started:
        server.close()
