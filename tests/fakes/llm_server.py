"""FakeLLMServer: a real OpenAI-compatible HTTP endpoint on 127.0.0.1:0 that records requests and injects faults.

Tests script it with a queue of `FakeReply`s (`script(...)`) or a handler (`respond_with(fn)`); an empty
queue answers 500 with a body that says so, so a test that under-scripts fails loudly.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

logger = logging.getLogger(__name__)

CHAT_PATH = "/v1/chat/completions"
DEFAULT_HANG_S = 30.0
_POLL_INTERVAL_S = 0.02


@dataclass(frozen=True)
class FakeReply:
    """What the server does with one request: wait `delay_s`, then answer or (`drop`) close the connection."""

    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()
    delay_s: float = 0.0
    drop: bool = False

    @classmethod
    def with_json(cls, payload: Any, *, status: int = 200, headers: Mapping[str, str] | None = None) -> FakeReply:
        body = json.dumps(payload).encode()
        return cls(status, body, (("Content-Type", "application/json"), *(headers or {}).items()))

    @classmethod
    def with_status(cls, status: int, message: str = "", *, headers: Mapping[str, str] | None = None) -> FakeReply:
        """An error in OpenAI's shape: `{"error": {"message": …}}`."""
        return cls.with_json({"error": {"message": message or f"fake error {status}"}}, status=status, headers=headers)

    @classmethod
    def with_bytes(cls, body: bytes, *, status: int = 200, content_type: str = "text/html") -> FakeReply:
        return cls(status, body, (("Content-Type", content_type),))

    @classmethod
    def hang(cls, seconds: float = DEFAULT_HANG_S) -> FakeReply:
        """Say nothing for `seconds` (cut short when the server stops), then close the connection."""
        return cls(delay_s=seconds, drop=True)

    @classmethod
    def disconnect(cls) -> FakeReply:
        return cls(drop=True)

    def after(self, seconds: float) -> FakeReply:
        return replace(self, delay_s=seconds)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes
    json: Any  # None when the body was not JSON
    received_at: float = field(default_factory=time.monotonic)


Handler = Callable[[Any], FakeReply]


def chat_completion(
    message: Mapping[str, Any],
    *,
    finish_reason: str = "stop",
    usage: tuple[int, int] | None = (10, 5),
    model: str = "fake-model",
) -> dict[str, Any]:
    """A `chat.completion` body around one assistant message."""
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": dict(message), "finish_reason": finish_reason}],
    }
    if usage is not None:
        body["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}
    return body


def completion_with_content(content: str, *, usage: tuple[int, int] | None = (10, 5)) -> FakeReply:
    return FakeReply.with_json(chat_completion({"role": "assistant", "content": content}, usage=usage))


def completion_with_tool_calls(
    calls: Sequence[tuple[str | None, str, Mapping[str, Any] | str]],
    *,
    content: str | None = None,
    usage: tuple[int, int] | None = (10, 5),
) -> FakeReply:
    """`calls` are (id or None to leave it out, name, arguments as a dict or as the raw string to send)."""
    entries = []
    for call_id, name, arguments in calls:
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
        entry: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": raw}}
        if call_id is not None:
            entry["id"] = call_id
        entries.append(entry)
    message = {"role": "assistant", "content": content, "tool_calls": entries}
    return FakeReply.with_json(chat_completion(message, finish_reason="tool_calls", usage=usage))


class FakeLLMServer:
    """Serves POST /v1/chat/completions from a background thread; use as a context manager."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: deque[FakeReply] = deque()
        self._handler: Handler | None = None
        self._requests: list[RecordedRequest] = []
        self.stopping = threading.Event()
        self._httpd = _HTTPServer(("127.0.0.1", 0), _RequestHandler)
        self._httpd.fake = self
        self._thread = threading.Thread(target=self._serve, name="fake-llm", daemon=True)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[Any]:
        """The JSON bodies sent to /v1/chat/completions, in order."""
        return [request.json for request in self.requests if request.path == CHAT_PATH]

    def script(self, *replies: FakeReply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def respond_with(self, handler: Handler | None) -> None:
        """Answer every request with `handler(request_json)` (takes precedence over the script)."""
        with self._lock:
            self._handler = handler

    def start(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def _serve(self) -> None:
        self._httpd.serve_forever(poll_interval=_POLL_INTERVAL_S)  # the interval bounds how long stop() waits

    def stop(self) -> None:
        self.stopping.set()  # wakes every hanging handler
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _record(self, request: RecordedRequest) -> int:
        with self._lock:
            self._requests.append(request)
            return len(self._requests)

    def _reply_for(self, request: RecordedRequest, number: int) -> FakeReply:
        if request.path != CHAT_PATH:
            return FakeReply.with_status(404, f"fake LLM server: no route {request.method} {request.path}")
        with self._lock:
            handler = self._handler
            scripted = self._queue.popleft() if handler is None and self._queue else None
        if handler is not None:
            try:
                return handler(request.json)
            except Exception:
                return FakeReply.with_status(
                    500, f"fake LLM server: the test's handler raised\n{traceback.format_exc()}"
                )
        if scripted is not None:
            return scripted
        return FakeReply.with_status(500, f"fake LLM server: no scripted reply left for request #{number}")


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeLLMServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out and hung up is what several tests are about, not a failure of the fake.
        logger.debug("fake LLM server: connection from %s ended abruptly", client_address, exc_info=True)


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like a real server: the client's pool is exercised
    timeout = DEFAULT_HANG_S  # idle keep-alive connections don't keep threads forever
    server: _HTTPServer

    def do_POST(self) -> None:
        self._serve()

    def do_GET(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("fake LLM server: " + format, *args)

    def _serve(self) -> None:
        fake = self.server.fake
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        request = RecordedRequest(
            method=self.command,
            path=self.path,
            headers={name.lower(): value for name, value in self.headers.items()},
            body=body,
            json=parsed,
        )
        reply = fake._reply_for(request, fake._record(request))
        if reply.delay_s and fake.stopping.wait(reply.delay_s):
            reply = FakeReply.disconnect()
        if reply.drop:
            self.close_connection = True
            return
        self.send_response(reply.status)
        for name, value in reply.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        self.wfile.write(reply.body)
