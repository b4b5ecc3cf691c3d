"""RepeatDetector: the brakes. Spots loops on canonicalised call signatures before max_steps does."""

from __future__ import annotations

import json
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.result import TerminationReason


def canonical(value: Any) -> Any:
    """Sorted keys, trimmed strings, Unicode NFC: so `" 上海"` and `"上海"` are the same argument."""
    if isinstance(value, str):
        return unicodedata.normalize("NFC", value).strip()
    if isinstance(value, dict):
        return {canonical(str(k)): canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def signature(tool: str, arguments: Any) -> str:
    """A stable text key for one call: its tool name and canonical arguments."""
    body = json.dumps(canonical(arguments), ensure_ascii=False, sort_keys=True, default=str)
    return f"{canonical(tool)}({body})"


@dataclass(frozen=True)
class CallOutcome:
    """What the detector needs to know of one executed call."""

    tool: str
    arguments: Any
    error_code: str | None  # None when the call succeeded


@dataclass
class RepeatDetector:
    """Checks, after every step, the loop patterns of seed 000's 'Repeat-Loop Detection'.

    - same call: the same (tool, args) batch in `same_call_threshold` consecutive steps;
    - same error: the same error code for the same (tool, args) `same_error_threshold` times in the run;
    - alternation: A, B, A, B … over `alternation_cycles` full cycles;
    - critique spin: two consecutive critique verdicts with identical gap lists.
    No-progress is counted by the loop against the Definition of Done.
    """

    same_call_threshold: int = 3
    same_error_threshold: int = 2
    alternation_cycles: int = 2
    _steps: list[str] = field(default_factory=list)
    _errors: Counter[tuple[str, str]] = field(default_factory=Counter)
    _last_gaps: tuple[str, ...] | None = None

    def observe_step(self, calls: Sequence[CallOutcome]) -> TerminationReason | None:
        """Record one step's calls; return the loop it completes, if any."""
        step_key = " & ".join(sorted(signature(c.tool, c.arguments) for c in calls))
        self._steps.append(step_key)
        for call in calls:
            if call.error_code:
                self._errors[(call.error_code, signature(call.tool, call.arguments))] += 1
        if any(count >= self.same_error_threshold for count in self._errors.values()):
            return TerminationReason.REPEAT_SAME_ERROR
        recent = self._steps[-self.same_call_threshold :]
        if len(recent) == self.same_call_threshold and len(set(recent)) == 1:
            return TerminationReason.REPEAT_SAME_CALL
        span = self._steps[-2 * self.alternation_cycles :]
        if len(span) == 2 * self.alternation_cycles and _alternates(span):
            return TerminationReason.REPEAT_ALTERNATION
        return None

    def observe_gaps(self, gaps: Sequence[str]) -> TerminationReason | None:
        """Record a critique verdict's gaps; two identical non-empty lists in a row are a spin."""
        current = tuple(sorted(canonical(g) for g in gaps))
        spinning = bool(current) and current == self._last_gaps
        self._last_gaps = current
        return TerminationReason.CRITIQUE_SPIN if spinning else None

    def repeated_error(self) -> tuple[str, str] | None:
        """The (code, call signature) that tripped the same-error brake, for the degraded final."""
        for key, count in self._errors.items():
            if count >= self.same_error_threshold:
                return key
        return None


def _alternates(span: Sequence[str]) -> bool:
    first, second = span[0], span[1]
    if first == second:
        return False
    return all(key == (first if i % 2 == 0 else second) for i, key in enumerate(span))
