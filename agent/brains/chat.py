"""ChatCompletionsClient: the wire to an OpenAI-compatible `/chat/completions` endpoint, with bounded retries."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx

from agent.backoff import Backoff, parse_retry_after
from agent.brains.base import LLMUnavailable
from agent.config import BrainConfig
from agent.errors import ConfigError
from agent.limits import DEFAULT_LLM_MAX_RETRIES, DEFAULT_RETRY_BACKOFF_BASE_S, DEFAULT_RETRY_BACKOFF_MAX_S, Limits
from agent.messages import Decision, DecisionKind, RetryNote, ToolCallRequest, Usage
from agent.text import exception_line, shorten

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 60.0
_RETRYABLE_STATUS = frozenset({408, 429})  # and every 5xx
_MAX_DETAIL_CHARS = 200
_MIN_REDACTED_KEY_CHARS = 4  # shorter "keys" are placeholders; replacing them would garble every message
_JSON_TYPE_NAMES = {dict: "object", list: "array", str: "string", int: "number", float: "number", bool: "boolean"}


@dataclass(frozen=True)
class ChatReply:
    """One chat completion as received, parsed where it enters.

    `problem` is set when the endpoint answered 2xx without a usable assistant message (body not JSON, not
    an object, no `choices`, no `message`). That is the model's or server's fault for this one reply, not
    an outage: the brains turn it into an INVALID decision instead of raising.
    """

    content: str = ""
    tool_calls: tuple[Any, ...] = ()  # raw entries; the tool-calling brain validates them
    reasoning: str = ""
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    problem: str | None = None
    raw: Any = None  # the body as received: parsed JSON, or the decoded text when it was not JSON
    retry_notes: tuple[RetryNote, ...] = ()

    @property
    def retries(self) -> int:
        return len(self.retry_notes)

    def decision(
        self,
        kind: DecisionKind,
        *,
        thought: str = "",
        text: str = "",
        tool_calls: tuple[ToolCallRequest, ...] = (),
    ) -> Decision:
        """A `Decision` carrying this reply's usage, raw body and retry count."""
        return Decision(
            kind=kind,
            thought=thought,
            tool_calls=tool_calls,
            text=text,
            usage=self.usage,
            raw=self.raw,
            retry_notes=self.retry_notes,
        )


class _AttemptFailed(Exception):
    """One attempt failed; `retryable` says whether another attempt may succeed. Never leaves this module."""

    def __init__(self, reason: str, *, retryable: bool, retry_after_s: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.retry_after_s = retry_after_s


@contextmanager
def _map_httpx_exceptions(timeout_s: float) -> Iterator[None]:
    """Translate every httpx exception into `_AttemptFailed`: the one place where they enter our code."""
    try:
        yield
    except httpx.TimeoutException as exc:
        raise _AttemptFailed(f"no answer within {timeout_s:g}s ({type(exc).__name__})", retryable=True) from exc
    except (httpx.NetworkError, httpx.RemoteProtocolError, httpx.ProxyError) as exc:
        raise _AttemptFailed(exception_line(exc, _MAX_DETAIL_CHARS), retryable=True) from exc
    except (httpx.HTTPError, httpx.InvalidURL, httpx.CookieConflict, httpx.StreamError) as exc:
        # UnsupportedProtocol, LocalProtocolError, DecodingError, TooManyRedirects…: another try won't help.
        raise _AttemptFailed(exception_line(exc, _MAX_DETAIL_CHARS), retryable=False) from exc


class ChatCompletionsClient:
    """POSTs to `{base_url}/chat/completions` through one shared `httpx.AsyncClient`.

    Connection errors, timeouts, 408, 429 and 5xx are retried up to `max_retries` times with capped
    exponential backoff and jitter (`Retry-After` is a floor, capped by `backoff_max_s`); after that,
    or at once for any other 4xx, `LLMUnavailable` says why in one line that never contains the API key.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_retries: int = DEFAULT_LLM_MAX_RETRIES,
        backoff_base_s: float = DEFAULT_RETRY_BACKOFF_BASE_S,
        backoff_max_s: float = DEFAULT_RETRY_BACKOFF_MAX_S,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        base = base_url.strip().rstrip("/")
        base = base.removesuffix("/chat/completions")  # people paste the full endpoint as often as the base
        if not base.startswith(("http://", "https://")):
            raise ConfigError(f"the LLM base URL must start with http:// or https://, got {base_url!r}")
        self._base_url = base
        self._url = f"{base}/chat/completions"
        self._model = model
        self._api_key = api_key or None
        self._timeout_s = timeout_s
        self._max_retries = max(0, max_retries)
        backoff_max_s = max(0.0, backoff_max_s)
        self._backoff = Backoff(max(0.0, backoff_base_s), backoff_max_s, retry_after_cap_s=backoff_max_s)
        self._temperature = temperature
        self._max_tokens = max_tokens
        self._owns_http = http_client is None
        self._http = http_client if http_client is not None else httpx.AsyncClient()
        self._headers = {"Accept": "application/json"}
        if self._api_key:
            self._headers["Authorization"] = f"Bearer {self._api_key}"

    @classmethod
    def from_config(
        cls,
        *,
        base_url: str,
        model: str,
        api_key: str | None,
        brain: BrainConfig,
        limits: Limits,
        http_client: httpx.AsyncClient | None = None,
    ) -> ChatCompletionsClient:
        return cls(
            base_url,
            model,
            api_key=api_key,
            timeout_s=brain.timeout_s,
            max_retries=limits.llm_max_retries,
            backoff_base_s=limits.retry_backoff_base_s,
            backoff_max_s=limits.retry_backoff_max_s,
            temperature=brain.temperature,
            max_tokens=brain.max_tokens,
            http_client=http_client,
        )

    @property
    def model(self) -> str:
        return self._model

    @property
    def base_url(self) -> str:
        return self._base_url

    async def create(
        self, messages: Sequence[Mapping[str, Any]], *, tools: Sequence[Mapping[str, Any]] | None = None
    ) -> ChatReply:
        """Send one chat completion request; retry what is worth retrying; raise `LLMUnavailable` otherwise."""
        payload: dict[str, Any] = {"model": self._model, "messages": list(messages), "temperature": self._temperature}
        if self._max_tokens is not None:
            payload["max_tokens"] = self._max_tokens
        if tools:
            payload["tools"] = list(tools)
        notes: list[RetryNote] = []
        while True:
            try:
                reply = await self._attempt(payload)
            except _AttemptFailed as failure:
                problem = self._redact(failure.reason)
                if not failure.retryable:
                    raise LLMUnavailable(
                        f"the LLM refused the request: {problem}", retry_notes=tuple(notes)
                    ) from failure
                if len(notes) >= self._max_retries:
                    raise LLMUnavailable(
                        f"the LLM is unavailable after {len(notes) + 1} attempt(s): {problem}",
                        retry_notes=tuple(notes),
                    ) from failure
                note = RetryNote(len(notes) + 1, problem, self._backoff.delay(len(notes) + 1, failure.retry_after_s))
                notes.append(note)
                logger.warning(
                    "LLM call failed (%s); retry %d/%d in %.2fs", problem, note.attempt, self._max_retries, note.delay_s
                )
                await asyncio.sleep(note.delay_s)
                continue
            return dataclasses.replace(reply, retry_notes=tuple(notes))

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def _attempt(self, payload: dict[str, Any]) -> ChatReply:
        with _map_httpx_exceptions(self._timeout_s):
            response = await self._http.post(self._url, json=payload, headers=self._headers, timeout=self._timeout_s)
        status = response.status_code
        if 200 <= status < 300:
            return parse_chat_body(response.content)
        if status in _RETRYABLE_STATUS or status >= 500:
            retry_after = parse_retry_after(response.headers.get("retry-after"))
            raise _AttemptFailed(f"HTTP {status}{_detail(response)}", retryable=True, retry_after_s=retry_after)
        raise _AttemptFailed(self._refusal(status, response), retryable=False)

    def _refusal(self, status: int, response: httpx.Response) -> str:
        if status == 401:
            # The body may echo (part of) the key, so it is not quoted at all.
            if self._api_key:
                return "the API key was rejected (HTTP 401)"
            return "the endpoint needs an API key and none is configured (HTTP 401)"
        if status == 403:
            return f"access denied (HTTP 403){_detail(response)}"
        if status == 404:
            return f"HTTP 404 at {self._url}: check the base URL (usually ends in /v1) and the model {self._model!r}"
        return f"HTTP {status}{_detail(response)}"

    def _redact(self, text: str) -> str:
        if self._api_key and len(self._api_key) >= _MIN_REDACTED_KEY_CHARS:
            return text.replace(self._api_key, "***")
        return text


def parse_chat_body(content: bytes) -> ChatReply:
    """Parse a 2xx body into a `ChatReply`, with `problem` set when it holds no assistant message."""
    try:
        body = json.loads(content)
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are both ValueErrors
        text = content.decode("utf-8", errors="replace")
        return ChatReply(problem=f"the response body is not JSON: {shorten(text, _MAX_DETAIL_CHARS)!r}", raw=text)
    if not isinstance(body, dict):
        return ChatReply(problem=f"the response body is a JSON {json_type_name(body)}, not an object", raw=body)
    usage = _usage(body.get("usage"))
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        said = _error_text(body)
        problem = "the response has no choices" + (f" (the endpoint said: {said})" if said else "")
        return ChatReply(problem=problem, usage=usage, raw=body)
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        return ChatReply(problem="the first choice has no message", usage=usage, raw=body)
    tool_calls = message.get("tool_calls") or []
    if not isinstance(tool_calls, list):
        return ChatReply(problem="the message's tool_calls is not a list", usage=usage, raw=body)
    legacy_call = message.get("function_call")
    if not tool_calls and isinstance(legacy_call, dict):  # the pre-2023 single `function_call` shape
        tool_calls = [{"type": "function", "function": legacy_call}]
    finish_reason = choice.get("finish_reason")
    return ChatReply(
        content=_text(message.get("content")),
        tool_calls=tuple(tool_calls),
        reasoning=_text(message.get("reasoning_content") or message.get("reasoning")),
        finish_reason=finish_reason if isinstance(finish_reason, str) else None,
        usage=usage,
        raw=body,
    )


def json_type_name(value: Any) -> str:
    return "null" if value is None else _JSON_TYPE_NAMES.get(type(value), type(value).__name__)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content parts: [{"type": "text", "text": "…"}, …]
        return "".join(part["text"] for part in value if isinstance(part, dict) and isinstance(part.get("text"), str))
    return ""


def _usage(value: Any) -> Usage:
    if not isinstance(value, dict):
        return Usage()
    return Usage(_count(value.get("prompt_tokens")), _count(value.get("completion_tokens")))


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _error_text(body: Mapping[str, Any]) -> str:
    error = body.get("error", body.get("detail", body.get("message")))
    if isinstance(error, dict):
        error = error.get("message")
    return shorten(error, _MAX_DETAIL_CHARS) if isinstance(error, str) else ""


def _detail(response: httpx.Response) -> str:
    text = response.content.decode("utf-8", errors="replace")
    try:
        body = json.loads(text) if text.strip() else None
    except (ValueError, RecursionError):
        body = None
    said = _error_text(body) if isinstance(body, dict) else shorten(text, _MAX_DETAIL_CHARS)
    return f": {said}" if said else ""
