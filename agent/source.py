"""Source: a successful tool result an answer may cite.

A source holds what the model was shown (`data`: the observation's payload after any cut), never the whole
raw result: a figure only in the part the model never saw cannot back an answer. What it states, as figures
and dates an answer may show, is read by the fact-checker (`agent.grounding`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar

from agent.result import Citation
from agent.text import clip

T = TypeVar("T")


@dataclass(frozen=True)
class Source:
    """A successful observation that an answer may cite."""

    number: int
    tool: str
    tool_call_id: str
    step: int
    arguments: dict[str, Any]
    data: Any  # the payload as the model was shown it

    @cached_property
    def tag(self) -> str:
        return f"[{self.number}]"

    def memo(self, key: str, build: Callable[[], T]) -> T:
        """What `build` derives from this source, built on first use and kept with it (not a field: snapshots and
        equality ignore it). The fact-checker keeps here what it read of the source, for every later draft."""
        kept = self.__dict__.get(key, _MISSING)
        if kept is _MISSING:
            kept = build()
            object.__setattr__(self, key, kept)  # beside the frozen fields, as functools.cached_property does
        return kept

    def citation(self) -> Citation:
        return Citation(
            marker=self.tag, tool=self.tool, tool_call_id=self.tool_call_id, step=self.step, arguments=self.arguments
        )

    def summary(self, limit: int = 160) -> str:
        """The result for a person: `key: value` pairs, not JSON."""
        return clip(describe(self.data), limit)


def describe(data: Any) -> str:
    """A tool's result in words a person reads: `temp_c: 28, condition: cloudy`; a key/value pair as
    `cost_per_satellite_musd: 12`."""
    if isinstance(data, dict):
        if set(data) == {"key", "value"} or (set(data) >= {"key", "value"} and len(data) <= 3):
            return f"{data['key']}: {describe(data['value'])}"
        return ", ".join(f"{key}: {describe(value)}" for key, value in data.items())
    if isinstance(data, list):
        return "; ".join(describe(item) for item in data)
    if data is None:
        return "nothing"
    if isinstance(data, bool):
        return "yes" if data else "no"
    return str(data)


_MISSING = object()
