"""Plain values: what every JSON encoder, database driver and HTTP client accepts, whatever a tool or a model
handed us — no NaN or Infinity, no lone surrogate ("\\ud83d" survives `json.loads`), no integer past Python's
printing limit, no bytes that are not UTF-8, nothing nested past what a reader can walk.

The engine makes values plain where they enter it: tool results (`observation.normalise`), what the brain
decided (`loop`), and what the trace keeps of a raw result.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from typing import Any

from pydantic_core import PydanticSerializationError, to_jsonable_python

from agent.messages import Decision, ToolCallRequest

MAX_DEPTH = 200  # deeper than any real payload; far from Python's recursion limit
MAX_INT_BITS = 13_000  # about 3,900 digits: Python refuses to print integers past 4,300
REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


def plain_text(text: str) -> str:
    """The text with lone surrogates replaced (U+FFFD): it can be encoded as UTF-8 again."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub(REPLACEMENT, text)
    return text


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _plain_call(call: ToolCallRequest) -> bool:
    try:
        fields = [call.id, call.name, call.arguments, call.raw_arguments, call.arguments_error]
        json.dumps(fields, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (ValueError, TypeError, UnicodeEncodeError, RecursionError):
        return False
    return True


def plain_json(value: Any) -> Any:
    """Plain JSON values only: NaN/Infinity as strings, unknown objects as their text, bytes as text (or base64
    when they are not UTF-8), over-long integers and over-deep nesting described instead of kept."""
    for mode in ("utf8", "base64"):
        try:
            converted = to_jsonable_python(value, fallback=str, bytes_mode=mode)
        except (ValueError, PydanticSerializationError, RecursionError, UnicodeDecodeError):
            continue
        return _plain(converted, 0)
    return f"<a value that cannot be shown as data: {type(value).__name__}>"


def _plain(value: Any, depth: int) -> Any:
    if isinstance(value, str):
        return plain_text(value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        if value.bit_length() > MAX_INT_BITS:
            return f"<an integer of about {int(value.bit_length() * 0.30103)} digits>"
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if depth >= MAX_DEPTH:
        return "<nested too deeply to show>"
    if isinstance(value, list):
        return [_plain(item, depth + 1) for item in value]
    if isinstance(value, dict):
        return {plain_text(str(key)): _plain(item, depth + 1) for key, item in value.items()}
    return plain_text(str(value))


def plain_decision(decision: Decision) -> Decision:
    """A brain's decision with its texts and arguments plain: a model can send "\\ud83d" inside valid JSON."""
    if _encodes(decision.text) and _encodes(decision.thought) and all(_plain_call(c) for c in decision.tool_calls):
        return decision  # the usual case: one cheap look, no copy
    calls = tuple(
        replace(
            call,
            id=plain_text(call.id),
            name=plain_text(call.name),
            arguments=plain_json(call.arguments) if call.arguments is not None else None,
            raw_arguments=plain_text(call.raw_arguments),
            arguments_error=plain_text(call.arguments_error) if call.arguments_error is not None else None,
        )
        for call in decision.tool_calls
    )
    # `raw` stays as received: only an unusable reply's text is shown again, and that is made plain there.
    return replace(decision, thought=plain_text(decision.thought), text=plain_text(decision.text), tool_calls=calls)
