"""What both databases accept as JSON: a value made plain, without NaN, Infinity or NUL characters."""

from __future__ import annotations

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
