"""FakeSlackApi: Slack's Web API as a real server on 127.0.0.1:0, recording every call and injecting faults.

Point slack_sdk at it with `AsyncWebClient(token=BOT_TOKEN, base_url=f"{fake.base_url}/")`: calls arrive as
Slack receives them (POST or GET `/api/<method>`, a JSON, form or query body, `Authorization: Bearer xoxb-…`)
and are answered from a `FakeWorkspace` that remembers what was posted. Tests read back `calls(method)` and
`messages_in(channel, thread_ts)`, wait with a deadline (`wait_for` / `wait_for_async`), and script Slack's
failures: `fail_next` (429 with Retry-After, `ok: false`, 5xx) and `limit_rate` (429 past a call budget).
A wrong token gets `invalid_auth`, a method the fake lacks `unknown_method`, so a gap fails loudly.
Streaming (`chat.startStream` / `appendStream` / `stopStream`) is answered only with `streaming=True`; without
it the fake is a workspace that does not have it (`unknown_method`). Agent sessions (`agents.sessions.setStatus` /
`rename`, and `chat.stopStream`'s `session_status`) are answered like Slack; `refuse` makes a method fail for good
(a workspace without sessions: `refuse("agents.sessions.setStatus", "unknown_method")`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

from tests.fakes.slack_workspace import BOT_ID, BOT_TOKEN, BOT_USER_ID, TEAM_ID, FakeWorkspace, Message, SlackError

logger = logging.getLogger(__name__)

API_PREFIX = "/api/"
DEFAULT_WAIT_S = 5.0
_POLL_INTERVAL_S = 0.02
_IDLE_CONNECTION_S = 30.0
# Fields slack_sdk sends as JSON text in forms.
_JSON_FIELDS = ("blocks", "attachments", "view", "metadata", "loading_messages", "prompts")
_DEFAULT_ERRORS = {429: "ratelimited", 500: "internal_error", 503: "service_unavailable"}
STREAM_METHODS = ("chat.startStream", "chat.appendStream", "chat.stopStream")

T = TypeVar("T")


@dataclass(frozen=True)
class SlackCall:
    """One Web API request as the fake received it, and what it answered."""

    method: str  # "chat.postMessage"
    params: dict[str, Any]  # query, form and JSON body merged; blocks, view, … JSON-decoded
    headers: dict[str, str]  # names lower-cased
    http_method: str
    status: int
    response: dict[str, Any]
    received_at: float = field(default_factory=time.monotonic)
    peer: tuple[str, int] = ("", 0)  # the client's address: one per TCP connection

    @property
    def ok(self) -> bool:
        return self.status == 200 and bool(self.response.get("ok"))


@dataclass(frozen=True)
class _Fault:
    status: int
    error: str
    retry_after: int


@dataclass
class _RateLimit:
    max_calls: int
    per_s: float
    retry_after: int
    accepted: deque[float] = field(default_factory=deque)


class FakeSlackApi:
    """Serves Slack's Web API from a background thread; use as a context manager."""

    def __init__(
        self,
        *,
        token: str = BOT_TOKEN,
        bot_user_id: str = BOT_USER_ID,
        bot_id: str = BOT_ID,
        team_id: str = TEAM_ID,
        streaming: bool = False,
        refuse: Mapping[str, str] | None = None,
    ) -> None:
        self.token = token
        self._workspace = FakeWorkspace(team_id=team_id, bot_user_id=bot_user_id, bot_id=bot_id)
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._generation = 0  # bumped on every call, so a waiter never misses one between look and sleep
        self._calls: list[SlackCall] = []
        self._faults: dict[str, deque[_Fault]] = defaultdict(deque)
        self._limits: dict[str, _RateLimit] = {}
        # Methods answered `ok: false` for good (a workspace without streaming, a missing scope, …).
        self._refused: dict[str, str] = {} if streaming else dict.fromkeys(STREAM_METHODS, "unknown_method")
        self._refused.update(refuse or {})
        self._started_at = time.monotonic()
        self._httpd = _HTTPServer(("127.0.0.1", 0), _RequestHandler)
        self._httpd.fake = self
        self._thread = threading.Thread(target=self._serve, name="fake-slack-api", daemon=True)

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>/api`: give slack_sdk `base_url=f"{fake.base_url}/"`."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}{API_PREFIX.rstrip('/')}"

    def start(self) -> FakeSlackApi:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeSlackApi:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- reading back ---------------------------------------------------------------------------------------

    def calls(self, method: str | None = None) -> list[SlackCall]:
        """Every call received (answered or failed), oldest first; only `method`'s when given."""
        with self._lock:
            return [call for call in self._calls if method is None or call.method == method]

    def messages_in(self, channel: str, thread_ts: str | None = None) -> list[Message]:
        """The bot's and seeded replies in `thread_ts`'s thread (parent left out), or the channel's top-level
        messages when `thread_ts` is None; oldest first, with every chat.update applied."""
        with self._lock:
            return self._workspace.messages_in(channel, thread_ts)

    def thread_status(self, channel: str, thread_ts: str) -> str | None:
        """The assistant.threads.setStatus text showing now (None once cleared or ended by a reply)."""
        with self._lock:
            return self._workspace.thread_status(channel, thread_ts)

    def suggested_prompts(self, channel: str, thread_ts: str | None) -> dict[str, Any] | None:
        """The assistant thread's suggested prompts as last set: `{"title": …, "prompts": [{title, message}]}`;
        with `thread_ts` None, the Messages tab's (set without a thread)."""
        with self._lock:
            return self._workspace.suggested_prompts(channel, thread_ts)

    def session(self, channel: str, thread_ts: str) -> dict[str, Any] | None:
        """The thread's agent session (agents.sessions.*): `status`, `title`, `initiator_user_id`, `statuses`."""
        with self._lock:
            return self._workspace.session(channel, thread_ts)

    def thread_title(self, channel: str, thread_ts: str) -> str | None:
        """The assistant thread's title as last set (None when never set)."""
        with self._lock:
            return self._workspace.thread_title(channel, thread_ts)

    def view(self, view_id: str) -> dict[str, Any] | None:
        with self._lock:
            return self._workspace.view(view_id)

    def rate_limited(self, method: str | None = None) -> int:
        """How many calls (to `method`, or to any) were answered 429."""
        return sum(1 for call in self.calls(method) if call.status == 429)

    def describe_calls(self) -> str:
        calls = self.calls()
        if not calls:
            return "  (no Slack API calls)"
        return "\n".join(f"  #{number} {self._describe(call)}" for number, call in enumerate(calls, 1))

    # -- seeding --------------------------------------------------------------------------------------------

    def add_message(
        self, channel: str, text: str, *, user: str, ts: str | None = None, thread_ts: str | None = None
    ) -> str:
        """Remember a user's message (e.g. the question an event announced) for conversations.replies; its ts."""
        with self._lock:
            return self._workspace.add_message(channel, text, user=user, ts=ts, thread_ts=thread_ts)

    def add_user(
        self, user_id: str, *, name: str, real_name: str | None = None, tz: str = "UTC", is_bot: bool = False
    ) -> None:
        """A users.info profile; ids never added still get a plain one, as every member of a team would."""
        with self._lock:
            self._workspace.add_user(user_id, name=name, real_name=real_name, tz=tz, is_bot=is_bot)

    def set_group_members(self, usergroup: str, members: list[str]) -> None:
        """The members usergroups.users.list returns for `usergroup` (S…); a group never set is `no_such_subteam`."""
        with self._lock:
            self._workspace.set_group_members(usergroup, members)

    # -- faults ---------------------------------------------------------------------------------------------

    def fail_next(
        self,
        method: str,
        *,
        status: int | None = None,
        error: str | None = None,
        retry_after: int = 1,
        times: int = 1,
    ) -> None:
        """Fail the next `times` calls to `method` (after the token check), then answer normally again.

        No arguments: HTTP 429 `ratelimited` with `Retry-After: retry_after`, as Slack rate-limits. `error` alone:
        HTTP 200 `{"ok": false, "error": error}`. `status=500` (or any): that status with a JSON error body.
        """
        resolved = status if status is not None else (200 if error else 429)
        if resolved == 200 and not error:
            raise ValueError("fail_next with status 200 needs an error code")
        fault = _Fault(resolved, error or _DEFAULT_ERRORS.get(resolved, "fake_error"), retry_after)
        with self._lock:
            self._faults[method].extend([fault] * times)

    def refuse(self, method: str, error: str) -> None:
        """Answer every call to `method` from now on with `{"ok": false, "error": error}` (e.g. `not_allowed`,
        `missing_scope`, `unknown_method`) — what a workspace that does not support it answers."""
        with self._lock:
            self._refused[method] = error

    def limit_rate(self, method: str, *, max_calls: int, per_s: float, retry_after: int = 1) -> None:
        """Answer 429 (with Retry-After) to calls to `method` beyond `max_calls` in any `per_s` window."""
        with self._lock:
            self._limits[method] = _RateLimit(max_calls, per_s, retry_after)

    # -- waiting --------------------------------------------------------------------------------------------

    def wait_for(self, predicate: Callable[[], T], timeout_s: float = DEFAULT_WAIT_S, *, what: str = "") -> T:
        """Block until `predicate()` is truthy and return its value; AssertionError with the calls seen after
        `timeout_s`. An AssertionError or LookupError from the predicate means "not yet". Don't call it on
        the event loop that runs the client: use `wait_for_async` there."""
        deadline = time.monotonic() + timeout_s
        while True:
            with self._lock:
                generation = self._generation
            value, miss = _check(predicate)
            if value:
                return value
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(self._timeout_message(predicate, timeout_s, what, miss))
            with self._changed:  # wakes on the next call, or polls for predicates that watch something else
                if self._generation == generation:
                    self._changed.wait(min(remaining, _POLL_INTERVAL_S * 5))

    async def wait_for_async(
        self, predicate: Callable[[], T], timeout_s: float = DEFAULT_WAIT_S, *, what: str = ""
    ) -> T:
        """`wait_for` for a test on the event loop: polls in small `asyncio.sleep` steps, so the loop runs."""
        deadline = time.monotonic() + timeout_s
        while True:
            value, miss = _check(predicate)
            if value:
                return value
            if time.monotonic() >= deadline:
                raise AssertionError(self._timeout_message(predicate, timeout_s, what, miss))
            await asyncio.sleep(_POLL_INTERVAL_S / 2)

    # -- serving --------------------------------------------------------------------------------------------

    def _serve(self) -> None:
        self._httpd.serve_forever(poll_interval=_POLL_INTERVAL_S)

    def _handle(
        self,
        http_method: str,
        path: str,
        params: dict[str, Any] | None,
        headers: dict[str, str],
        peer: tuple[str, int] = ("", 0),
    ) -> tuple[SlackCall, dict[str, str]]:
        """Answer one request and record it; the extra response headers come back with the call."""
        method = path.removeprefix(API_PREFIX) if path.startswith(API_PREFIX) else path
        extra_headers: dict[str, str] = {}
        with self._changed:
            if not path.startswith(API_PREFIX):
                status, response = 404, {"ok": False, "error": "not_found", "fake": f"no route {path}"}
            elif params is None:
                status, response = 200, {"ok": False, "error": "invalid_json"}
            else:
                status, response, extra_headers = self._answer(method, params, headers)
            call = SlackCall(method, params or {}, headers, http_method, status, response, peer=peer)
            self._calls.append(call)
            self._generation += 1
            self._changed.notify_all()
        return call, extra_headers

    def _answer(
        self, method: str, params: dict[str, Any], headers: dict[str, str]
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        authorization = headers.get("authorization", "")
        token = authorization.removeprefix("Bearer ") if authorization.startswith("Bearer ") else params.get("token")
        if not token:
            return 200, {"ok": False, "error": "not_authed"}, {}
        if token != self.token:
            return 200, {"ok": False, "error": "invalid_auth"}, {}
        if method in self._refused:
            return 200, {"ok": False, "error": self._refused[method]}, {}
        faults = self._faults.get(method)
        if faults:
            fault = faults.popleft()
            retry = {"Retry-After": str(fault.retry_after)} if fault.status == 429 else {}
            return fault.status, {"ok": False, "error": fault.error}, retry
        limit = self._limits.get(method)
        if limit is not None:
            now = time.monotonic()
            while limit.accepted and now - limit.accepted[0] >= limit.per_s:
                limit.accepted.popleft()
            if len(limit.accepted) >= limit.max_calls:
                return 429, {"ok": False, "error": "ratelimited"}, {"Retry-After": str(limit.retry_after)}
            limit.accepted.append(now)
        try:
            return 200, self._workspace.answer(method, params), {}
        except SlackError as failure:
            return 200, {"ok": False, "error": failure.error, **failure.extra}, {}

    def _describe(self, call: SlackCall) -> str:
        shown = []
        for name, value in call.params.items():
            if name == "token":
                continue
            if isinstance(value, list):
                shown.append(f"{name}=[{len(value)} items]")
            elif isinstance(value, dict):
                shown.append(f"{name}={{{value.get('type', '…')}}}")
            else:
                text = str(value)
                shown.append(f"{name}={text[:60]!r}" + ("…" if len(text) > 60 else ""))
        outcome = "ok" if call.ok else f"{call.status} {call.response.get('error', '')}".strip()
        offset = call.received_at - self._started_at
        return f"+{offset:.3f}s {call.http_method} {call.method} → {outcome}  {' '.join(shown)}"

    def _timeout_message(
        self, predicate: Callable[[], Any], timeout_s: float, what: str, miss: Exception | None
    ) -> str:
        lines = [f"timed out after {timeout_s}s waiting for {what or getattr(predicate, '__qualname__', predicate)}"]
        if miss is not None:
            lines.append(f"last check said: {type(miss).__name__}: {miss}")
        lines.append("Slack API calls seen:")
        lines.append(self.describe_calls())
        return "\n".join(lines)


def _check(predicate: Callable[[], T]) -> tuple[T | None, Exception | None]:
    try:
        return predicate(), None
    except (AssertionError, LookupError) as miss:
        return None, miss


def _parse_params(query: str, body: bytes, content_type: str) -> dict[str, Any] | None:
    """A Web API call's arguments as Slack reads them: query string, then form or JSON body; None if the JSON is
    broken. Fields slack_sdk sends as JSON text in forms (blocks, view, …) are decoded."""
    params: dict[str, Any] = {name: values[-1] for name, values in parse_qs(query, keep_blank_values=True).items()}
    if body:
        text = body.decode("utf-8", errors="replace")
        if content_type.startswith("application/json") or (not content_type and text.lstrip().startswith("{")):
            try:
                decoded = json.loads(text)
            except ValueError:
                return None
            if not isinstance(decoded, dict):
                return None
            params.update(decoded)
        elif not content_type.startswith("multipart/"):
            params.update({name: values[-1] for name, values in parse_qs(text, keep_blank_values=True).items()})
    for name in _JSON_FIELDS:
        if isinstance(params.get(name), str):
            with contextlib.suppress(ValueError):  # Slack would reject it; the call keeps the text to show why
                params[name] = json.loads(params[name])
    return params


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeSlackApi

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up mid-reply is a test's business, not a failure of the fake.
        logger.debug("fake Slack API: connection from %s ended abruptly", client_address, exc_info=True)


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like Slack: the client's connection pool is exercised
    timeout = _IDLE_CONNECTION_S
    server: _HTTPServer

    def do_POST(self) -> None:
        self._serve()

    do_GET = do_POST

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("fake Slack API: " + format, *args)

    def _serve(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        parts = urlsplit(self.path)
        headers = {name.lower(): value for name, value in self.headers.items()}
        params = _parse_params(parts.query, body, headers.get("content-type", ""))
        call, extra_headers = self.server.fake._handle(
            self.command, parts.path, params, headers, tuple(self.client_address[:2])
        )
        payload = json.dumps(call.response, ensure_ascii=False).encode("utf-8")
        self.send_response(call.status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        for name, value in extra_headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
