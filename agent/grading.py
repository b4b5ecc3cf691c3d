"""Error grading: which level (L0–L4) a code belongs to, and whether it may be retried."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer

from agent.errors import ConfigError, ErrorCode


class ErrorLevel(IntEnum):
    """Seed 000's levels: what the orchestration does with a failure."""

    L0 = 0  # transient: auto-retried within the step, same tool and arguments
    L1 = 1  # correctable: written back; the model fixes its arguments
    L2 = 2  # switch path: written back with fallback tools
    L3 = 3  # irrecoverable: the path stops; degrade if nothing else can answer
    L4 = 4  # business rejection: refuse with the reason, hand over to people

    @classmethod
    def parse(cls, value: Any) -> ErrorLevel:
        if isinstance(value, ErrorLevel):
            return value
        text = str(value).strip().upper()
        if text.isdigit():
            text = f"L{text}"
        try:
            return cls[text]
        except KeyError:
            raise ConfigError(f"unknown error level {value!r}; use one of L0, L1, L2, L3, L4") from None


# An ErrorLevel in a model field, written by its name ("L2") in JSON and read back from it: stored traces,
# escalations and `parley ask --json` say "L2", never the bare 2 an IntEnum would serialise to.
NamedLevel = Annotated[
    ErrorLevel,
    BeforeValidator(ErrorLevel.parse),
    PlainSerializer(lambda level: level.name, return_type=str),
]


@dataclass(frozen=True)
class Grade:
    level: ErrorLevel
    retryable: bool
    suggested_action: str | None = None


DEFAULT_GRADES: Mapping[str, Grade] = {
    ErrorCode.TIMEOUT: Grade(ErrorLevel.L0, True),
    ErrorCode.RATE_LIMIT: Grade(ErrorLevel.L0, True),
    ErrorCode.CONNECTION_ERROR: Grade(ErrorLevel.L0, True),
    ErrorCode.INVALID_ARGS: Grade(ErrorLevel.L1, False, "fix_arguments"),
    ErrorCode.NOT_FOUND: Grade(ErrorLevel.L1, False, "change_arguments"),
    ErrorCode.CITY_NOT_FOUND: Grade(ErrorLevel.L1, False, "retry_with_pinyin"),
    ErrorCode.MATH_ERROR: Grade(ErrorLevel.L1, False, "fix_expression"),
    ErrorCode.INVALID_RESPONSE: Grade(ErrorLevel.L1, False, "follow_the_protocol"),
    # 502/503/504 and the like: retried within the step first (L0), then the model should switch path (L2).
    ErrorCode.UPSTREAM_DOWN: Grade(ErrorLevel.L0, True, "switch_tool"),
    ErrorCode.BAD_RESPONSE: Grade(ErrorLevel.L2, False, "switch_tool"),
    ErrorCode.TOOL_CRASHED: Grade(ErrorLevel.L2, False, "switch_tool"),
    ErrorCode.FORBIDDEN: Grade(ErrorLevel.L3, False),
    ErrorCode.UNKNOWN_TOOL: Grade(ErrorLevel.L3, False, "use_a_listed_tool"),
    ErrorCode.TOOL_DISABLED: Grade(ErrorLevel.L3, False, "use_a_listed_tool"),
    ErrorCode.POLICY_VIOLATION: Grade(ErrorLevel.L4, False),
    # Parley stopped during the call (a crash, a deploy), or the connection to its MCP server did: it may have had
    # its effect. Never retried, and its tool is stopped for the run, so the model cannot make the call again (L3).
    ErrorCode.OUTCOME_UNKNOWN: Grade(ErrorLevel.L3, False),
    # A tool's own result says it failed without naming a code (an MCP `isError` result, `{"ok": false}`).
    ErrorCode.TOOL_REPORTED_FAILURE: Grade(ErrorLevel.L1, False),
    # An MCP tool's definition changed since it was pinned: refused until an operator re-trusts it.
    ErrorCode.TOOL_CHANGED: Grade(ErrorLevel.L3, False, "use_a_listed_tool"),
}

# A code nobody graded is something the model should see and correct, never something retried blindly.
UNKNOWN_CODE_GRADE = Grade(ErrorLevel.L1, False)


class GradingTable:
    """Code → Grade. Built from the defaults, overridden by `config/errors.yaml` and the run's config."""

    def __init__(self, grades: Mapping[str, Grade] | None = None) -> None:
        self._grades = dict(DEFAULT_GRADES if grades is None else grades)

    @classmethod
    def from_mapping(cls, overrides: Mapping[str, Any], base: GradingTable | None = None) -> GradingTable:
        """Parse `{CODE: {level: L1, retryable: false, suggested_action: …}}` on top of `base`."""
        grades = dict((base or cls())._grades)
        for code, spec in (overrides or {}).items():
            if not isinstance(spec, Mapping) or "level" not in spec:
                raise ConfigError(f"error table entry {code!r} needs at least a level, e.g. {{level: L1}}")
            level = ErrorLevel.parse(spec["level"])
            retryable = bool(spec.get("retryable", level == ErrorLevel.L0))
            grades[str(code).upper()] = Grade(level, retryable, spec.get("suggested_action"))
        return cls(grades)

    def grade(self, code: str) -> Grade:
        return self._grades.get(str(code).upper(), UNKNOWN_CODE_GRADE)

    def codes(self) -> dict[str, Grade]:
        return dict(self._grades)
