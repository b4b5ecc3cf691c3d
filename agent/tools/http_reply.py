"""HttpReply: what an HTTP API answered, and the verdict on it — data, or a `ToolError` with a code.

The body decides before the status: `{"ok": false}` or `{"error": {"code": "CITY_NOT_FOUND"}}` is a failure
with that code even under 200, and an HTML page or undecodable bytes under 200 are `BAD_RESPONSE`.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from http import HTTPStatus
from typing import Any

import httpx

from agent.errors import ErrorCode, ToolError
from agent.observation import looks_like_html

# The code of a body that says `{"ok": false}` without naming one (the same word `normalise` uses).
REPORTED_FAILURE_CODE = "TOOL_REPORTED_FAILURE"

_CODE_SHAPE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")
_EXCERPT_CHARS = 300


@dataclass(frozen=True)
class HttpReply:
    """A reply read within the size cap; `body` is None when it was larger (`size_note` says by how much)."""

    status: int
    reason: str
    headers: httpx.Headers
    body: bytes | None
    size_note: str = ""


def code_for_status(status: int) -> ErrorCode:
    """The error code of a non-success HTTP status."""
    match status:
        case 429:
            return ErrorCode.RATE_LIMIT
        case 400 | 409 | 413 | 414 | 422:
            return ErrorCode.INVALID_ARGS
        case 404 | 410:
            return ErrorCode.NOT_FOUND
        case 401 | 403 | 407:
            return ErrorCode.FORBIDDEN
        case 408:
            return ErrorCode.TIMEOUT
        case 451:
            return ErrorCode.POLICY_VIOLATION
        case _ if status >= 500:
            return ErrorCode.UPSTREAM_DOWN
        case _:
            return ErrorCode.BAD_RESPONSE


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """`Retry-After` as seconds to wait: a number of seconds or an HTTP-date; None when absent or unreadable."""
    if not value:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def interpret_reply(reply: HttpReply, max_bytes: int) -> Any:
    """The parsed JSON of a successful reply; a `ToolError` with a code for everything else."""
    retry_after = parse_retry_after(reply.headers.get("retry-after"))
    if reply.body is None:
        if reply.status >= 400:
            raise _status_error(reply, None, retry_after)
        raise ToolError(
            ErrorCode.BAD_RESPONSE,
            f"the API's answer is larger than the {max_bytes} byte cap ({reply.size_note})",
            details={"http_status": reply.status, "max_response_bytes": max_bytes},
        )
    text = _decode(reply)
    parsed = _parse_json(text)
    if isinstance(parsed, dict):
        reported = _reported_failure(parsed, reply.status, retry_after)
        if reported is not None:
            raise reported
    if not 200 <= reply.status < 300:
        raise _status_error(reply, _excerpt(text, parsed), retry_after)
    if text is None:
        raise ToolError(ErrorCode.BAD_RESPONSE, "the API's answer is not valid UTF-8 text")
    if not text.strip():
        return None
    if parsed is _NOT_JSON:
        what = f"an HTML page ({len(reply.body)} bytes)" if looks_like_html(text) else "not JSON"
        content_type = reply.headers.get("content-type", "no content type")
        raise ToolError(
            ErrorCode.BAD_RESPONSE,
            f"the API answered HTTP {reply.status} with {what} where JSON was expected",
            details={"http_status": reply.status, "content_type": content_type},
        )
    return parsed


_NOT_JSON: Any = object()


def _decode(reply: HttpReply) -> str | None:
    """UTF-8 (with or without BOM) unless the Content-Type names another charset; None when undecodable."""
    assert reply.body is not None
    charset = _charset(reply.headers.get("content-type", ""))
    try:
        return reply.body.decode(charset or "utf-8-sig")
    except (UnicodeDecodeError, LookupError):
        return None


def _charset(content_type: str) -> str | None:
    for part in content_type.split(";")[1:]:
        name, _, value = part.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip('"').lower()
            return None if charset in {"utf-8", "utf8"} else charset
    return None


def _parse_json(text: str | None) -> Any:
    if text is None or not text.strip():
        return _NOT_JSON
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _NOT_JSON


def _reported_failure(body: dict[str, Any], status: int, retry_after: float | None) -> ToolError | None:
    """`{"ok": false, …}` or `{"error": {"code": …}}` is the API's own verdict, whatever the status said."""
    error = body.get("error")
    said_failed = isinstance(error, str) and bool(error) and body.get("ok") is not True
    if not (body.get("ok") is False or isinstance(error, dict) or said_failed):
        return None
    spec: dict[str, Any] = error if isinstance(error, dict) else {}
    code = _body_code(spec.get("code")) or _body_code(body.get("code"))
    if code is None:
        code = code_for_status(status) if status >= 400 else REPORTED_FAILURE_CODE
    message = spec.get("message") or (error if isinstance(error, str) else None) or body.get("message")
    action = spec.get("suggested_action") or body.get("suggested_action")
    retryable = spec.get("retryable")
    details = {k: v for k, v in spec.items() if k not in {"code", "message", "retryable", "suggested_action"}}
    skip = {"ok", "error", "code", "message", "suggested_action", "data"}
    details.update({k: v for k, v in body.items() if k not in skip})
    details["http_status"] = status
    return ToolError(
        code,
        str(message or "the API reported a failure"),
        retryable=retryable if isinstance(retryable, bool) else None,
        details=details,
        suggested_action=action if isinstance(action, str) else None,
        retry_after_s=retry_after,
    )


def _body_code(value: Any) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool) and 400 <= value <= 599:
        return code_for_status(value)  # Google-style `{"error": {"code": 404, …}}`
    if isinstance(value, str) and _CODE_SHAPE.match(value.strip()):
        return value.strip().upper()
    return None


def _status_error(reply: HttpReply, excerpt: str | None, retry_after: float | None) -> ToolError:
    code = code_for_status(reply.status)
    try:
        phrase = HTTPStatus(reply.status).phrase
    except ValueError:
        phrase = reply.reason or "unknown status"
    details: dict[str, Any] = {"http_status": reply.status}
    if excerpt:
        details["body"] = excerpt
    message = f"the API answered HTTP {reply.status} ({phrase})"
    return ToolError(code, message, details=details, retry_after_s=retry_after)


def _excerpt(text: str | None, parsed: Any) -> str | None:
    """A short look at an error body for the model; HTML pages and undecodable bytes are not shown."""
    if text is None or not text.strip() or (parsed is _NOT_JSON and looks_like_html(text)):
        return None
    flat = " ".join(text.split())
    return flat if len(flat) <= _EXCERPT_CHARS else flat[: _EXCERPT_CHARS - 1] + "…"
