"""Triage: does a finished run go to people? One function, used by the store and by every front end."""

from __future__ import annotations

from agent import Escalation, RunResult, RunStatus
from bot.review.config import ReviewConfig

EXHAUSTED_LEVEL = "L2"  # recovery ran out: the seed's L2 ("the path failed, tell the user honestly")


def escalated(result: RunResult, config: ReviewConfig) -> RunResult:
    """The run as people see it: `awaiting_review` with its escalation when a person must decide."""
    if result.status is RunStatus.AWAITING_REVIEW:
        return result
    escalation = result.escalation
    if escalation is None:
        if not config.escalates(result.termination_reason, open_items=bool(result.missing)):
            return result
        why = result.degraded.explanation if result.degraded is not None else result.termination_reason.value
        escalation = Escalation(
            kind="exhausted", reason=result.termination_reason.value, level=EXHAUSTED_LEVEL, message=why
        )
    return result.model_copy(update={"status": RunStatus.AWAITING_REVIEW, "escalation": escalation})
