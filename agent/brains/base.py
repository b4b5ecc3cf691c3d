"""Brain: the LLM back-end behind one protocol. It decides; everything else is the engine's."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, Protocol

from agent.tools.base import ToolSpec

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


# Seed 003's `give_up` action as a function a tool-calling model can call. The engine offers it once there is
# something to give up on (a failed call, a rejected draft); the JSON-ReAct protocol always lists it.
GIVE_UP = ToolSpec(
    "give_up",
    "Stop when the tools cannot answer: say what is missing and why.",
    {"type": "object", "properties": {"reason": {"type": "string"}}, "required": ["reason"]},
)


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


class BrainError(Exception):
    """A brain could not produce an answer (base class)."""


class LLMUnavailable(BrainError):
    """The LLM stayed unreachable after bounded retries: the run ends with `llm_unavailable`."""

    def __init__(self, message: str, *, retry_notes: tuple[RetryNote, ...] = ()) -> None:
        super().__init__(message)
        self.retry_notes = retry_notes


class NotRecorded(BrainError):
    """A replay script has no recorded answer for this request; callers fall back to their rules."""


class Brain(Protocol):
    """An LLM back-end. `decide` picks the next action; `complete` answers a side request (plan, critique)."""

    name: str
    replayed: bool

    async def decide(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Decision: ...

    async def complete(self, messages: Sequence[Message], *, purpose: str) -> Completion: ...

    async def aclose(self) -> None: ...
