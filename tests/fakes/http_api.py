"""FakeHttpApi: a team's HTTP API as a real server on 127.0.0.1:0, scripted per path, recording every request.

Tests route a path to an `ApiReply` (status, body, headers, a delay, chunked transfer) and read back what the
client sent — raw request target, decoded path, query, headers and body. An unrouted path answers 500 with a
body that says so, so a test that forgot a route fails loudly.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

logger = logging.getLogger(__name__)

_POLL_INTERVAL_S = 0.02
_IDLE_CONNECTION_S = 30.0
_CHUNK_BYTES = 64 * 1024


@dataclass(frozen=True)
class ApiReply:
    """How the fake answers: wait `delay_s` (cut short when the server stops), then send the reply."""

    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()
    delay_s: float = 0.0
    chunked: bool = False  # no Content-Length: the client only learns the size by reading

    @classmethod
    def with_json(cls, payload: Any, *, status: int = 200, headers: dict[str, str] | None = None) -> ApiReply:
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        return cls(status, body, (("Content-Type", "application/json"), *(headers or {}).items()))

    @classmethod
    def with_bytes(
        cls,
        body: bytes,
        *,
        status: int = 200,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> ApiReply:
        return cls(status, body, (("Content-Type", content_type), *(headers or {}).items()))

    def after(self, seconds: float) -> ApiReply:
        return replace(self, delay_s=seconds)

    def in_chunks(self) -> ApiReply:
        return replace(self, chunked=True)


@dataclass(frozen=True)
class ApiRequest:
    method: str
    target: str  # the raw request target, as sent: percent-encoding intact
    path: str  # decoded, without the query
    query: dict[str, list[str]]
    headers: dict[str, str]  # names lower-cased
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


class FakeHttpApi:
    """Serves any method on any routed path from a background thread; use as a context manager."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._routes: dict[str, list[ApiReply]] = {}
        self._requests: list[ApiRequest] = []
        self.stopping = threading.Event()
        self._httpd = _HTTPServer(("127.0.0.1", 0), _RequestHandler)
        self._httpd.fake = self
        self._thread = threading.Thread(target=self._serve, name="fake-http-api", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def url(self, path: str) -> str:
        return self.base_url + path

    @property
    def requests(self) -> list[ApiRequest]:
        with self._lock:
            return list(self._requests)

    def route(self, path: str, reply: ApiReply, *then: ApiReply) -> None:
        """Answer requests to the decoded `path` (any method, any query) with `reply`, then each of `then` in
        turn; the last one answers every request after that."""
        with self._lock:
            self._routes[path] = [reply, *then]

    def start(self) -> FakeHttpApi:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeHttpApi:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _serve(self) -> None:
        self._httpd.serve_forever(poll_interval=_POLL_INTERVAL_S)

    def _answer(self, request: ApiRequest) -> ApiReply:
        with self._lock:
            self._requests.append(request)
            replies = self._routes.get(request.path)
            reply = (replies.pop(0) if len(replies) > 1 else replies[0]) if replies else None
        if reply is None:
            return ApiReply.with_json({"fake": f"no route for {request.method} {request.path}"}, status=500)
        return reply


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeHttpApi

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that hang up mid-reply (a timeout, a size cap) are what several tests are about.
        logger.debug("fake HTTP API: connection from %s ended abruptly", client_address, exc_info=True)


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = _IDLE_CONNECTION_S
    server: _HTTPServer

    def do_GET(self) -> None:
        self._serve()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("fake HTTP API: " + format, *args)

    def _serve(self) -> None:
        fake = self.server.fake
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        parts = urlsplit(self.path)
        request = ApiRequest(
            method=self.command,
            target=self.path,
            path=unquote(parts.path),
            query=parse_qs(parts.query, keep_blank_values=True),
            headers={name.lower(): value for name, value in self.headers.items()},
            body=body,
        )
        reply = fake._answer(request)
        if reply.delay_s and fake.stopping.wait(reply.delay_s):
            self.close_connection = True
            return
        self.send_response(reply.status)
        for name, value in reply.headers:
            self.send_header(name, value)
        if reply.chunked:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for start in range(0, len(reply.body), _CHUNK_BYTES):
                chunk = reply.body[start : start + _CHUNK_BYTES]
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)
