"""Journal: what a run makes durable as it goes, so that another process can resume it after a crash or a deploy.

The engine calls its run's journal at two moments, and nothing else about persistence is its business:

- `checkpoint(snapshot)`: a step ended (its observations written back, or the plan made): the run as it stands.
- `intend(step, calls)`: these calls are about to run. The intent is durable before any of them starts, so a run
  resumed elsewhere knows which calls may have had their effect. The step's `StepDecided` names them first
  (`intended`): a store may record their intents in the same write as the step, and the journal then only
  confirms they are there — `intend` returning is what lets the calls start, never the event.

A run resumed from its last checkpoint (`Agent.take_over`) gets the intents of the step it was in, those with no
result: a call whose tool is idempotent runs again; any other is fed back to the model as a failed observation,
`OUTCOME_UNKNOWN`, and never run again.

A journal that will not take a write raises `JournalRefused`: this process no longer holds the run (another took
it over, or this one was cut off from its store for too long). The run stops at once, tells nobody, and records
nothing more: whoever holds it now answers it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from agent.messages import ToolCallRequest
from agent.result import RunResult
from agent.snapshot import RunSnapshot

OUTCOME_UNKNOWN_MESSAGE = "outcome unknown: Parley stopped during this call"


class JournalRefused(Exception):
    """This process may not go on with the run: it stops here, silently (see the module's docstring)."""


class CallIntent(BaseModel):
    """A tool call about to run: enough to run it again exactly, or to say which call's outcome is unknown."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    tool: str
    arguments: dict[str, Any]
    signature: str  # sha-256 of the tool and its arguments (key order ignored): what the call was

    @classmethod
    def of(cls, call: ToolCallRequest) -> CallIntent:
        arguments = dict(call.arguments or {})
        return cls(id=call.id, tool=call.name, arguments=arguments, signature=signature_of(call.name, arguments))

    def request(self) -> ToolCallRequest:
        return ToolCallRequest(self.id, self.tool, dict(self.arguments))


def signature_of(tool: str, arguments: dict[str, Any]) -> str:
    said = json.dumps([tool, arguments], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(said.encode("utf-8")).hexdigest()


class Journal(Protocol):
    """Where one run's progress is made durable (implemented by bot/ on its store)."""

    async def checkpoint(self, snapshot: RunSnapshot) -> None:
        """The run after a completed step; `JournalRefused` when this process may not go on with it."""

    async def intend(self, step: int, calls: Sequence[CallIntent]) -> None:
        """These calls of `step` are about to run: on return their intents are in the store (written here, or
        with the step's `StepDecided`); `JournalRefused` when they must not run."""


@dataclass(frozen=True)
class Interrupted:
    """A run its process stopped during, as a survivor takes it over.

    `snapshot` is its last checkpoint (a run stopped before its first one is simply started again: no call ran
    before it); `intents` are the calls of the step after it that had started and left no result; `spent_s` is
    the wall-clock time it already used, which counts against its budget.
    """

    snapshot: RunSnapshot
    intents: tuple[CallIntent, ...]
    resumed_by: str
    spent_s: float


def unknown_note(calls: Sequence[CallIntent]) -> str:
    """What people are told about calls whose outcome is unknown, whatever else the run ends with."""
    said = "; ".join(f"{call.tool} {json.dumps(call.arguments, ensure_ascii=False, default=str)}" for call in calls)
    return (
        f"Parley stopped during {said}: whether it took effect is unknown, and it was not made again. "
        "Check it before asking again."
    )


def with_unknown_outcomes(result: RunResult, calls: Sequence[CallIntent]) -> RunResult:
    """The run's end, saying plainly which calls' outcomes are unknown: in its answer (or partial answer's
    explanation) and in what the reviewers read."""
    if not calls:
        return result
    note = unknown_note(calls)
    update: dict[str, Any] = {}
    if result.degraded is not None:
        degraded = result.degraded.model_copy(update={"explanation": f"{result.degraded.explanation} — {note}"})
        update |= {"degraded": degraded, "answer": degraded.render()}
    else:
        update["answer"] = f"{result.answer}\n\n{note}" if result.answer else note
    if result.escalation is not None:
        update["escalation"] = result.escalation.model_copy(update={"message": f"{result.escalation.message} — {note}"})
    return result.model_copy(update=update)
