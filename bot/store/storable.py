"""What both databases accept as JSON: a value made plain, without NaN, Infinity or NUL characters."""

from __future__ import annotations

import json
from typing import Any

from agent import plain_json


def storable(value: Any) -> Any:
    """Plain JSON without NaN, Infinity or NUL characters: what both databases accept."""
    return _no_nul(plain_json(value))


def _no_nul(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, list):
        return [_no_nul(v) for v in value]
    if isinstance(value, dict):
        return {_no_nul(k): _no_nul(v) for k, v in value.items()}
    return value


def storable_text(value: Any) -> str:
    """`storable(value)` as JSON text, for a value that is plain already but for NaN or NUL characters (a snapshot
    the engine dumped, whose values were made plain where they entered it): one pass of the C encoder finds the
    usual case, instead of two walks in Python and the encoding after them."""
    try:
        said = json.dumps(value, ensure_ascii=False, allow_nan=False)
        said.encode("utf-8")
    except (ValueError, TypeError, UnicodeEncodeError, RecursionError):
        return json.dumps(storable(value), ensure_ascii=False)
    if "\\u0000" in said:  # the encoder escapes every NUL
        return json.dumps(storable(value), ensure_ascii=False)
    return said
