"""RunResult: how a run ended — status, termination reason, answer, citations, Done items, counters."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from agent.grading import NamedLevel


class RunStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SOLVED = "solved"
    DEGRADED = "degraded"
    REFUSED = "refused"
    AWAITING_REVIEW = "awaiting_review"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"


class OutcomeKind(StrEnum):
    """What kind of end a run came to — decided once, here, and shown the same way by every front end."""

    ANSWERED = "answered"  # a cited answer (solved, or approved by a reviewer and then answered)
    HELD = "held"  # a policy held a call before it ran: a person approves or rejects it, then the run goes on
    REFUSED = "refused"  # a tool or back-end refused (L4), or a reviewer rejected the run
    ESCALATED = "escalated"  # recovery ran out: an honest partial answer, and a person will look at it
    PARTIAL = "partial"  # an honest partial answer: what was done, what is missing, why


class TerminationReason(StrEnum):
    """Why a run ended. Closed: every run ends with exactly one of these."""

    ANSWERED = "answered"
    GAVE_UP = "gave_up"
    MAX_STEPS = "max_steps"
    REPEAT_SAME_CALL = "repeat_same_call"
    REPEAT_SAME_ERROR = "repeat_same_error"
    REPEAT_ALTERNATION = "repeat_alternation"
    NO_PROGRESS = "no_progress"
    CRITIQUE_SPIN = "critique_spin"
    UNGROUNDED_ANSWER = "ungrounded_answer"
    INVALID_OUTPUT = "invalid_output"
    IRRECOVERABLE_ERROR = "irrecoverable_error"
    POLICY_VIOLATION = "policy_violation"
    ALL_TOOLS_FAILED = "all_tools_failed"
    LLM_UNAVAILABLE = "llm_unavailable"
    RUN_TIMEOUT = "run_timeout"
    CANCELLED = "cancelled"
    STOPPED_BY_USER = "stopped_by_user"  # a person stopped it (a stop button, a command): what was found so far

    @property
    def status(self) -> RunStatus:
        if self is TerminationReason.ANSWERED:
            return RunStatus.SOLVED
        if self is TerminationReason.POLICY_VIOLATION:
            return RunStatus.REFUSED
        return RunStatus.DEGRADED


class Citation(BaseModel):
    """A fact's source: the tool call it rests on."""

    model_config = ConfigDict(frozen=True)

    marker: str
    tool: str
    tool_call_id: str
    step: int
    arguments: dict[str, Any] = Field(default_factory=dict)


class GroundingRule(StrEnum):
    """Why a figure or date of an accepted answer counts as backed by the tool results."""

    EXACT = "exact"  # the value as a cited result has it
    ROUNDED = "rounded"  # rounded or truncated to the digits shown
    SCALED = "scaled"  # written with a scale word: 1.2 million, 120万, 1,2 Mio.
    PERCENT = "percent"  # a fraction as a percentage, or the reverse
    CONVERTED = "converted"  # an exact unit conversion: 183.4567 ms as 0.18 s
    DERIVED = "derived"  # a sum, difference, product, ratio, mean or percentage of cited figures
    AGGREGATE = "aggregate"  # a count, sum or average over a list in one result ("3 of the 5 services")
    DATE = "date"  # a date or time of a result, written the usual way
    QUESTION = "question"  # the asker's own figure (or today's date)


class GroundedFigure(BaseModel):
    """One figure of an accepted answer and the rule that grounded it: `12 = 28 − 16 from [1], [2]`.

    `cited_by`: "answer" when the answer's own citation names the result, "parley" when the answer named none
    (or only a tool) and Parley found the result that states it and attached the citation itself."""

    model_config = ConfigDict(frozen=True)

    figure: str
    rule: GroundingRule
    how: str
    sources: list[str] = Field(default_factory=list)
    cited_by: Literal["answer", "parley"] = "answer"


class EscalationKind(StrEnum):
    """Why a run went to people. The engine ends runs with the first three; the fourth is people's own."""

    HELD_ACTION = "held_action"  # a policy held a call before it ran: approving runs it and resumes the run
    POLICY = "policy"  # a tool or back-end refused (POLICY_VIOLATION)
    EXHAUSTED = "exhausted"  # recovery ran out: an honest partial answer waits for a person
    FEEDBACK = "feedback"  # a person's 👎 sent an answer that stood to the reviewers (never the engine's)


class HeldCall(BaseModel):
    """A tool call a policy held before it ran: exactly what a reviewer approves or rejects."""

    model_config = ConfigDict(frozen=True)

    id: str
    tool: str
    arguments: dict[str, Any]
    reason: str


class Escalation(BaseModel):
    """Why people must look at this run, and the exact action that was held or refused.

    `kind` says which (`EscalationKind`); the engine ends runs with `held_action`, `policy` or `exhausted`.
    """

    model_config = ConfigDict(frozen=True)

    reason: str
    level: NamedLevel
    message: str
    kind: EscalationKind = EscalationKind.POLICY
    tool: str | None = None
    arguments: dict[str, Any] | None = None
    tool_call_id: str | None = None
    held_calls: list[HeldCall] = Field(default_factory=list)


class DegradedFinal(BaseModel):
    """An honest partial answer: what was completed (with citations), what is missing, why, what next."""

    model_config = ConfigDict(frozen=True)

    reason: TerminationReason
    explanation: str
    completed: list[str]
    missing: list[str]
    known_facts: list[str]  # every result's key facts, cited (those a verified sentence does not already show)
    citations: list[Citation]
    next_steps: list[str]
    verified: list[str] = Field(default_factory=list)  # sentences of the last draft that passed every check
    unchecked: list[str] = Field(default_factory=list)  # its other statements, their figures hidden, and why

    def render(self) -> str:
        """Plain text; front ends render their own richer forms from the fields."""
        lines = [f"Partial answer — {self.explanation}"]
        if self.verified:
            lines.append("What I could verify:")
            lines.extend(f"  • {sentence}" for sentence in self.verified)
        if self.unchecked:
            lines.append("What I could not check:")
            lines.extend(f"  • {statement}" for statement in self.unchecked)
        if self.known_facts:
            lines.append("What I found:" if not self.verified else "What else I found:")
            lines.extend(f"  • {fact}" for fact in self.known_facts)
        if self.completed:
            lines.append("Done: " + "; ".join(self.completed))
        if self.missing:
            lines.append("Missing: " + "; ".join(self.missing))
        if self.next_steps:
            lines.append("What you can do: " + " ".join(self.next_steps))
        return "\n".join(lines)


class RunResult(BaseModel):
    """The outward contract of one run (DESIGN.md): what `parley ask --json` prints."""

    run_id: str
    question: str
    status: RunStatus
    termination_reason: TerminationReason
    answer: str
    citations: list[Citation]
    completed: list[str]
    missing: list[str]
    steps: int
    llm_calls: int
    tool_calls: int
    retries: int
    critique_rounds: int
    llm_retries: int = 0
    tokens: int = 0
    duration_ms: int = 0
    escalation: Escalation | None = None
    degraded: DegradedFinal | None = None
    grounding: list[GroundedFigure] = Field(default_factory=list)  # how each figure of the answer is backed
    replayed: bool = False
    brain: str = ""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def outcome(self) -> OutcomeKind:
        """The kind of end, from the status and the escalation: what every renderer branches on."""
        if self.status is RunStatus.SOLVED or (
            self.status is RunStatus.APPROVED and self.termination_reason is TerminationReason.ANSWERED
        ):
            return OutcomeKind.ANSWERED
        if self.status is RunStatus.AWAITING_REVIEW and self.escalation is not None:
            kinds = {EscalationKind.HELD_ACTION: OutcomeKind.HELD, EscalationKind.POLICY: OutcomeKind.REFUSED}
            return kinds.get(self.escalation.kind, OutcomeKind.ESCALATED)
        if self.status in (RunStatus.REFUSED, RunStatus.REJECTED):
            return OutcomeKind.REFUSED
        return OutcomeKind.PARTIAL
