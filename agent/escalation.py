"""Escalation: whether a finished run goes to people — decided once, by the engine, for every front end.

A run goes to people when a policy held one of its calls (`held_action`), when a tool or back-end refused
it (`policy`, an L4 error), or when it ended for a reason in `escalate_on` (`exhausted`: its recovery ran
out; `max_steps` only while Done items are still open). Such a run leaves the engine `awaiting_review`
with its `Escalation`, whoever asked and however it is shown.
"""

from __future__ import annotations

from collections.abc import Collection

from agent.grading import ErrorLevel
from agent.result import Escalation, EscalationKind, RunResult, RunStatus, TerminationReason

# Runs whose recovery ran out: a person looks at them (`review.escalate_on` in the YAML).
DEFAULT_ESCALATE_ON = (
    TerminationReason.REPEAT_SAME_ERROR,
    TerminationReason.ALL_TOOLS_FAILED,
    TerminationReason.IRRECOVERABLE_ERROR,
    TerminationReason.MAX_STEPS,  # only with open Done items
    TerminationReason.LLM_UNAVAILABLE,
)
EXHAUSTED_LEVEL = ErrorLevel.L2  # recovery ran out: the seed's L2 ("the path failed, tell the user honestly")


def escalates(reason: TerminationReason, escalate_on: Collection[TerminationReason], *, open_items: bool) -> bool:
    """Does a run that ended this way go to people? `max_steps` only when Done items are still open."""
    if reason not in escalate_on:
        return False
    return open_items if reason is TerminationReason.MAX_STEPS else True


def escalated(result: RunResult, escalate_on: Collection[TerminationReason]) -> RunResult:
    """The run as it leaves the engine: `awaiting_review` with its escalation when a person must decide."""
    if result.status is RunStatus.AWAITING_REVIEW:
        return result
    escalation = result.escalation
    if escalation is None:
        if not escalates(result.termination_reason, escalate_on, open_items=bool(result.missing)):
            return result
        why = result.degraded.explanation if result.degraded is not None else result.termination_reason.value
        escalation = Escalation(
            kind=EscalationKind.EXHAUSTED, reason=result.termination_reason.value, level=EXHAUSTED_LEVEL, message=why
        )
    return result.model_copy(update={"status": RunStatus.AWAITING_REVIEW, "escalation": escalation})
