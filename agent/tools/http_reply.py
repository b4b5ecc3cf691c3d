"""HttpReply: what an HTTP API answered, and the verdict on it — data, or a `ToolError` with a code.

The body decides before the status: `{"ok": false}` or `{"error": {"code": "CITY_NOT_FOUND"}}` is a failure
with that code even under 200, and an HTML page or undecodable bytes under 200 are `BAD_RESPONSE`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

import httpx

from agent.backoff import parse_retry_after
from agent.errors import ErrorCode, ToolError, code_for_status
from agent.observation import looks_like_html
from agent.reported_failure import reported_failure
from agent.text import shorten

_EXCERPT_CHARS = 300


@dataclass(frozen=True)
class HttpReply:
    """A reply read within the size cap; `body` is None when it was larger (`size_note` says by how much)."""

    status: int
    reason: str
    headers: httpx.Headers
    body: bytes | None
    size_note: str = ""


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
        reported = reported_failure(parsed, status=reply.status, retry_after_s=retry_after)
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
    return shorten(text, _EXCERPT_CHARS)
