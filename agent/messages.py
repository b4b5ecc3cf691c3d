"""Messages: the engine's wire types — what goes to a brain (`Message`, with the calls a model asked for) and
what comes back (`Decision`, `Completion`, their `Usage`). Brains, tools, the loop and the trace all speak them;
they import nothing of the engine, so no arrow points back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolCallRequest:
    """One call the model asked for. `arguments` is None when `arguments_error` says why it is unusable."""

    id: str
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str = ""
    arguments_error: str | None = None


@dataclass(frozen=True)
class Message:
    role: Role
    content: str = ""
    tool_calls: tuple[ToolCallRequest, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None


class DecisionKind(StrEnum):
    TOOL_CALLS = "tool_calls"
    FINAL = "final"
    GIVE_UP = "give_up"
    INVALID = "invalid"  # the response broke the protocol; the model is told and it counts against bounds


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens)


@dataclass(frozen=True)
class RetryNote:
    """One retried attempt at reaching the LLM (the trace's `LLMRetry` event)."""

    attempt: int  # 1 for the first retry
    problem: str
    delay_s: float


@dataclass(frozen=True)
class Decision:
    """What the model chose this step."""

    kind: DecisionKind
    thought: str = ""
    tool_calls: tuple[ToolCallRequest, ...] = ()
    text: str = ""  # the final answer, the reason for giving up, or what was invalid
    usage: Usage = field(default_factory=Usage)
    raw: Any = None  # the response as received, for the trace
    retry_notes: tuple[RetryNote, ...] = ()  # what the brain had to retry to get this


@dataclass(frozen=True)
class Completion:
    """A plain completion, used by the planner, the critic and repair calls."""

    text: str
    usage: Usage = field(default_factory=Usage)
    retry_notes: tuple[RetryNote, ...] = ()
