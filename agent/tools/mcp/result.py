"""What an MCP tool's result becomes: data for the observation, or a `ToolError` when the result says it failed.

Structured content is the data (cited and grounded like an HTTP API's JSON); otherwise the text content is,
parsed as JSON when it is JSON. Images, audio and embedded resources are named, not passed on. An `isError`
result is a failure the model sees: its code, when its structured content names one, grades it through the
table; otherwise it is `TOOL_REPORTED_FAILURE` (L1).
"""

from __future__ import annotations

import json
from typing import Any

from mcp.types import CallToolResult, TextContent

from agent.errors import ErrorCode, ToolError
from agent.reported_failure import reported_failure
from agent.text import clip

DEFAULT_MAX_RESULT_CHARS = 10 * 1024 * 1024  # the same cap as an HTTP tool's answer
_ERROR_CHARS = 500


def result_data(result: CallToolResult, *, server: str, max_chars: int = DEFAULT_MAX_RESULT_CHARS) -> Any:
    """The data of a successful result; `ToolError` for a failed, oversized or empty one."""
    texts = [item.text for item in result.content if isinstance(item, TextContent)]
    others = [item.type for item in result.content if not isinstance(item, TextContent)]
    if result.is_error:
        raise _reported(result, texts, server)
    size = sum(len(text) for text in texts)
    if size > max_chars:
        raise ToolError(
            ErrorCode.BAD_RESPONSE,
            f"{server}'s result is larger than the {max_chars} character cap ({size} characters)",
            details={"max_result_chars": max_chars},
        )
    if result.structured_content is not None:
        return result.structured_content
    if not texts:
        if others:
            return {"content": [f"({kind} omitted)" for kind in others]}
        raise ToolError(ErrorCode.BAD_RESPONSE, f"{server} returned an empty result")
    data: Any = _json_or_text(texts[0]) if len(texts) == 1 else [_json_or_text(text) for text in texts]
    if others:
        data = {"content": data, "omitted": others}
    return data


def _reported(result: CallToolResult, texts: list[str], server: str) -> ToolError:
    said = clip(" ".join(texts).strip(), _ERROR_CHARS) or "no message"
    structured = result.structured_content
    if isinstance(structured, dict):
        body = structured if "error" in structured or "ok" in structured else {"error": structured}
        named = reported_failure(body)
        if named is not None and named.code != ErrorCode.TOOL_REPORTED_FAILURE:
            return named
    return ToolError(ErrorCode.TOOL_REPORTED_FAILURE, f"{server} reported that the call failed: {said}")


def _json_or_text(text: str) -> Any:
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            return json.loads(stripped)
        except ValueError:
            pass
    return text
