"""Brain: the LLM back-end behind one protocol. It decides; everything else is the engine's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from agent.messages import Completion, Decision, Message, RetryNote
from agent.tools.base import ToolSpec

# Seed 003's `give_up` action as a function a tool-calling model can call. The engine offers it once there is
# something to give up on (a failed call, a rejected draft); the JSON-ReAct protocol always lists it.
GIVE_UP = ToolSpec(
    "give_up",
    "Stop when the tools cannot answer: say what is missing and why.",
    {"type": "object", "properties": {"reason": {"type": "string"}}, "required": ["reason"]},
)


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
