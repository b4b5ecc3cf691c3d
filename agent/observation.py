"""Observation: a tool's raw result turned into the short, honest input of the next decision.

`normalise` maps whatever a tool produced (a value, an `{"ok": false}` body, an HTML page, an exception)
to `{ok, data}` or `{ok: false, error: {code, message, retryable, level}}`. `serialise` renders it for the
model within a character budget; the raw result stays in the trace only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic_core import PydanticSerializationError, to_jsonable_python

from agent.errors import ErrorCode, ToolError
from agent.grading import ErrorLevel, GradingTable
from agent.plain import plain_json, plain_text
from agent.reported_failure import reported_failure
from agent.text import shorten

DEFAULT_MAX_OBSERVATION_CHARS = 2000
MAX_MESSAGE_CHARS = 500  # of an error's message, on one line
_SHRINK_LIMITS = (1, 2, 5, 10, 20, 50, 100, 200, 400)  # items per list, ×4 characters per string


@dataclass(frozen=True)
class ObservationError:
    code: str
    message: str
    retryable: bool
    level: ErrorLevel
    retry_after_s: float | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "code": self.code,
            "message": self.message,
            "retryable": self.retryable,
            "level": self.level.name,
        }
        if self.details:
            body["details"] = self.details
        return body


@dataclass(frozen=True)
class Observation:
    """The graded outcome of one tool call, as the model will see it (plus what only the trace keeps)."""

    ok: bool
    data: Any = None
    error: ObservationError | None = None
    hint: str | None = None
    suggested_action: str | None = None
    fallback_tools: tuple[str, ...] = ()

    @property
    def level(self) -> ErrorLevel | None:
        return self.error.level if self.error else None

    @property
    def code(self) -> str | None:
        return self.error.code if self.error else None

    def with_error(self, **changes: Any) -> Observation:
        assert self.error is not None
        return replace(self, error=replace(self.error, **changes))


def failure(
    code: str,
    message: str,
    table: GradingTable,
    *,
    retryable: bool | None = None,
    retry_after_s: float | None = None,
    details: dict[str, Any] | None = None,
    suggested_action: str | None = None,
) -> Observation:
    """A failed observation graded by its code; an explicit `retryable=False` always wins."""
    grade = table.grade(code)
    allowed = grade.retryable if retryable is None else (grade.retryable and retryable)
    return Observation(
        ok=False,
        error=ObservationError(
            code=str(code).upper(),
            message=shorten(plain_text(str(message)), MAX_MESSAGE_CHARS),
            retryable=allowed,
            level=grade.level,
            retry_after_s=retry_after_s,
            details=plain_json(details or {}),
        ),
        suggested_action=suggested_action or grade.suggested_action,
    )


def normalise(raw: Any, table: GradingTable) -> Observation:
    """Map a tool's raw result (or the exception it raised) to an Observation. Never masquerades success."""
    if isinstance(raw, Observation):
        return raw
    if isinstance(raw, ToolError):
        return failure(
            raw.code,
            raw.message,
            table,
            retryable=raw.retryable,
            retry_after_s=raw.retry_after_s,
            details=raw.details,
            suggested_action=raw.suggested_action,
        )
    if isinstance(raw, TimeoutError):
        return failure(ErrorCode.TIMEOUT, str(raw) or "the tool did not answer in time", table)
    if isinstance(raw, BaseException):
        kind = type(raw).__name__
        return failure(ErrorCode.TOOL_CRASHED, f"the tool raised {kind}: {raw}", table)
    if isinstance(raw, bytes | bytearray):
        try:
            raw = bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            return failure(ErrorCode.BAD_RESPONSE, "the tool returned bytes that are not valid UTF-8", table)
    if isinstance(raw, str) and looks_like_html(raw):
        return failure(ErrorCode.BAD_RESPONSE, f"the tool returned an HTML page ({len(raw)} chars), not data", table)
    if isinstance(raw, dict):
        reported = reported_failure(raw)
        if reported is not None:
            return normalise(reported, table)
        if raw.get("ok") is True and set(raw) <= {"ok", "data"}:
            raw = raw.get("data")
    # JSON values; what JSON cannot say (NaN, a lone surrogate) is mended where the observation is rendered,
    # in the one pass that serialises it.
    try:
        data = to_jsonable_python(raw, fallback=str)
    except (ValueError, UnicodeDecodeError, RecursionError, PydanticSerializationError) as exc:
        why = "nested too deeply" if "depth" in str(exc) else f"{type(exc).__name__} while reading it"
        return failure(ErrorCode.BAD_RESPONSE, f"the tool returned something that is not data ({why})", table)
    return Observation(ok=True, data=data)


def looks_like_html(text: str) -> bool:
    head = text.lstrip()[:200].lower()
    return head.startswith(("<!doctype html", "<html", "<head", "<body")) or "<html" in head


def serialise(
    observation: Observation,
    *,
    max_chars: int = DEFAULT_MAX_OBSERVATION_CHARS,
    cite: str | None = None,
    include_hint: bool = False,
    include_suggested_action: bool = True,
) -> str:
    """One short JSON string for the model. Payloads over `max_chars` are cut, with a note of what was cut."""
    return render(
        observation,
        max_chars=max_chars,
        cite=cite,
        include_hint=include_hint,
        include_suggested_action=include_suggested_action,
    ).text


@dataclass(frozen=True)
class Rendered:
    """An observation as the model sees it: the text, and the payload in it (cut like the text).

    `mended`: the payload had values JSON cannot carry (NaN, a lone surrogate, a 5,000-digit integer), shown
    in words instead — the raw result needs the same care before anything serialises it."""

    text: str
    shown: Any
    mended: bool = False


def render(
    observation: Observation,
    *,
    max_chars: int = DEFAULT_MAX_OBSERVATION_CHARS,
    cite: str | None = None,
    include_hint: bool = False,
    include_suggested_action: bool = True,
) -> Rendered:
    """`serialise`, keeping the payload the model was shown: what an answer may rest on (never the cut part)."""
    body: dict[str, Any] = {"ok": observation.ok}
    if observation.ok:
        body["data"] = observation.data
        if cite:
            body["cite"] = cite
    else:
        assert observation.error is not None
        body["error"] = observation.error.as_dict()
    if include_suggested_action and observation.suggested_action:
        body["suggested_action"] = observation.suggested_action
    if include_suggested_action and observation.fallback_tools:
        body["fallback_tools"] = list(observation.fallback_tools)
    if include_hint and observation.hint:
        body["_hint"] = observation.hint
    mended = False
    try:
        text = _dumps(body)
        text.encode("utf-8")
    except (ValueError, UnicodeEncodeError):  # NaN, a lone surrogate, an unprintable integer: said in words
        body, mended = plain_json(body), True
        text = _dumps(body)
    if len(text) <= max_chars:
        return Rendered(text, body.get("data"), mended)
    cut = _cut(body, max_chars, len(text))
    return Rendered(_dumps(cut), cut.get("data"), mended)


def _cut(body: dict[str, Any], max_chars: int, full_size: int) -> dict[str, Any]:
    """Shrink strings and lists in the payload until it fits; say what was cut (`full_size`: chars in full)."""
    key = "data" if body.get("ok") else "error"
    original = body[key]

    def attempt(limit: int) -> dict[str, Any] | None:
        shrunk, notes = _shrink(original, limit)
        note = f"cut to fit the observation budget ({full_size} chars in full, kept in the trace): " + "; ".join(
            notes[:3]
        )
        candidate = {**body, key: shrunk, "_truncated": note}
        return candidate if len(_dumps(candidate)) <= max_chars else None

    # The kept size grows with the limit: binary-search the largest limit that fits (3-4 tries, not 9).
    fitting: dict[str, Any] | None = None
    low, high = 0, len(_SHRINK_LIMITS) - 1  # limits in ascending order
    while low <= high:
        middle = (low + high) // 2
        candidate = attempt(_SHRINK_LIMITS[middle])
        if candidate is None:
            high = middle - 1
        else:
            fitting, low = candidate, middle + 1
    if fitting is not None:
        return fitting
    text = _dumps(original)  # one value so large that even one item of each list does not fit: rare
    room = max(0, max_chars - 200)
    return {
        **{k: v for k, v in body.items() if k != key},
        key: text[:room],
        "_truncated": f"cut to the first {room} of {full_size} chars; the whole result is in the trace",
    }


def _shrink(value: Any, limit: int, path: str = "data") -> tuple[Any, list[str]]:
    notes: list[str] = []
    if isinstance(value, str) and len(value) > limit * 4:
        notes.append(f"{path}: text kept {limit * 4} of {len(value)} chars")
        return value[: limit * 4] + "…", notes
    if isinstance(value, list):
        kept = value[:limit]
        if len(value) > limit:
            notes.append(f"{path}: kept {limit} of {len(value)} items")
        out = []
        for i, item in enumerate(kept):
            item, sub = _shrink(item, limit, f"{path}[{i}]")
            out.append(item)
            notes.extend(sub)
        return out, notes
    if isinstance(value, dict):
        items = list(value.items())
        if len(items) > limit * 2:
            notes.append(f"{path}: kept {limit * 2} of {len(items)} keys")
            items = items[: limit * 2]
        out_dict = {}
        for k, v in items:
            v, sub = _shrink(v, limit, f"{path}.{k}")
            out_dict[k] = v
            notes.extend(sub)
        return out_dict, notes
    return value, notes


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)


def with_hint(observation: Observation, tool: str) -> Observation:
    """Seed 000's optional `_hint`: one short sentence so weaker models read the result right."""
    if observation.ok:
        hint = f"{tool} succeeded; use this data and cite it."
    else:
        assert observation.error is not None
        hint = f"{tool} failed ({observation.error.code}, {observation.error.level.name}); this is not data."
    return replace(observation, hint=hint)
