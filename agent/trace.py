"""Trace: typed, frozen events for everything a run does, emitted through a `Recorder`.

The engine writes every event as it happens; front ends show progress from them and the store persists
them. A recorder that fails never takes the run down with it (the loop logs and carries on).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from agent.done import DoneItem
from agent.grading import NamedLevel
from agent.limits import Limits
from agent.messages import DecisionKind, ToolCallRequest
from agent.result import HeldCall, RunResult
from agent.snapshot import RunSnapshot

# Which closing check refused a draft answer.
Rejecter = Literal["done", "critique", "grounding", "output"]
# What an LLM request was for: the step's decision, the Definition of Done, a critique, a JSON repair.
LLMPurpose = Literal["decide", "plan", "critique", "repair_json", "other"]


def _now() -> datetime:
    return datetime.now(UTC)


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)

    run_id: str
    at: datetime = Field(default_factory=_now)


class RunStarted(_Event):
    kind: Literal["run_started"] = "run_started"
    question: str
    brain: str
    replayed: bool
    tools: list[str]
    limits: Limits
    config_hash: str = ""


class PlanMade(_Event):
    """The Definition of Done for this run."""

    kind: Literal["plan_made"] = "plan_made"
    items: list[DoneItem]
    source: Literal["llm", "rules"]
    note: str = ""


class StepDecided(_Event):
    kind: Literal["step_decided"] = "step_decided"
    step: int
    decision: DecisionKind
    thought: str = ""
    tool_calls: list[ToolCallRequest] = Field(default_factory=list)  # as the model asked (ids made unique)
    # The ids of the calls that run now (a policy holds none of them), for a journaled run only: a store that
    # records their intents with the step itself saves the run's journal a write (`Journal.intend`).
    intended: list[str] = Field(default_factory=list)
    text: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: int = 0


class ToolAttempt(BaseModel):
    model_config = ConfigDict(frozen=True)

    attempt: int
    ok: bool
    code: str | None = None
    latency_ms: int = 0
    delay_before_s: float = 0.0


class ToolCallFinished(_Event):
    """One tool call's graded outcome: the structured fields for people and the store, and the exact text the
    model saw (`observation`) — readers use the fields, never parse that text back."""

    kind: Literal["tool_call_finished"] = "tool_call_finished"
    step: int
    tool_call_id: str
    tool: str
    arguments: dict[str, Any] | None
    ok: bool
    code: str | None = None  # an ErrorCode, or whatever code the tool or back-end reported
    level: NamedLevel | None = None
    retryable: bool | None = None
    message: str | None = None  # what went wrong, in one line (a failure)
    cite: str | None = None  # the marker an answer cites it by, "[2]" (a success)
    shown: Any = None  # the payload as the model was shown it, cut like `observation` (a success)
    retries: int = 0
    latency_ms: int = 0
    observation: str  # exactly what the model saw
    raw: Any = None  # the whole raw result (or the exception's text)
    attempts: list[ToolAttempt] = Field(default_factory=list)


class RetryScheduled(_Event):
    kind: Literal["retry_scheduled"] = "retry_scheduled"
    step: int
    tool_call_id: str
    tool: str
    attempt: int
    code: str
    delay_s: float


class LLMCallFinished(_Event):
    """One request to the LLM, answered or not: what it was for, how long the run waited for it (its retries
    included) and the tokens the LLM reported. No text: the prompt and the reply are in the other events."""

    kind: Literal["llm_call_finished"] = "llm_call_finished"
    step: int  # 0: before the first step (the plan)
    purpose: LLMPurpose
    ok: bool  # False: the LLM stayed unreachable or refused the request
    latency_ms: int
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0


class LLMRetry(_Event):
    kind: Literal["llm_retry"] = "llm_retry"
    attempt: int
    problem: str
    delay_s: float


class CritiqueVerdictMade(_Event):
    kind: Literal["critique_verdict"] = "critique_verdict"
    step: int
    stage: Literal["in_step", "closing"]
    satisfied: bool
    gaps: list[str]
    next_action: str
    source: str  # "rules", "llm" or "rules+llm"
    round: int


class DoneItemTicked(_Event):
    kind: Literal["done_ticked"] = "done_ticked"
    step: int
    item: str
    tool_call_id: str | None = None


class FinalRejected(_Event):
    kind: Literal["final_rejected"] = "final_rejected"
    step: int
    by: Rejecter
    gaps: list[str]
    draft: str


class RunHeld(_Event):
    """A policy held tool calls before they ran; `snapshot` is everything a resume needs (any process)."""

    kind: Literal["run_held"] = "run_held"
    step: int
    held: list[HeldCall]
    snapshot: RunSnapshot


class RunResumed(_Event):
    """A person approved the held calls: they run now, exactly as held, and the run goes on."""

    kind: Literal["run_resumed"] = "run_resumed"
    step: int
    approved_by: str
    held: list[HeldCall]


class RunTakenOver(_Event):
    """The process running it stopped (a crash, a deploy); `by` goes on from its last completed step. `rerun`:
    calls in flight run again (their tools are idempotent); `unknown`: calls whose outcome is unknown, never run
    again."""

    kind: Literal["run_taken_over"] = "run_taken_over"
    step: int
    by: str
    rerun: list[str]
    unknown: list[str]


class RunFinished(_Event):
    kind: Literal["run_finished"] = "run_finished"
    result: RunResult


TraceEvent = Annotated[
    RunStarted
    | PlanMade
    | StepDecided
    | ToolCallFinished
    | RetryScheduled
    | LLMCallFinished
    | LLMRetry
    | CritiqueVerdictMade
    | DoneItemTicked
    | FinalRejected
    | RunHeld
    | RunTakenOver
    | RunResumed
    | RunFinished,
    Field(discriminator="kind"),
]


class Recorder(Protocol):
    """Receives every trace event of a run, in order, as it happens."""

    async def record(self, event: TraceEvent) -> None: ...


class MemoryRecorder:
    """Keeps the events in a list: the default for the CLI and for tests."""

    def __init__(self) -> None:
        self.events: list[TraceEvent] = []

    async def record(self, event: TraceEvent) -> None:
        self.events.append(event)

    def of(self, kind: type[_Event]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


class FanoutRecorder:
    """Sends each event to several recorders (e.g. the store and a progress display).

    One failing recorder does not starve the others: every recorder gets the event, then the first
    failure is raised for the loop to report.
    """

    def __init__(self, *recorders: Recorder) -> None:
        self._recorders = recorders

    async def record(self, event: TraceEvent) -> None:
        failure: Exception | None = None
        for recorder in self._recorders:
            try:
                await recorder.record(event)
            except Exception as exc:
                failure = failure or exc
        if failure is not None:
            raise failure
