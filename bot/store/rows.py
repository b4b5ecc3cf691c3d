"""Rows read back as records: the one place where the store's ORM rows become the typed objects that leave it.

Rows written by older versions read too: a field they lack takes its default (a citation without its call id,
an escalation without its kind), an entry that no longer parses is left out and logged.
"""

from __future__ import annotations

import logging
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from agent import (
    Citation,
    DegradedFinal,
    Escalation,
    GroundedFigure,
    HeldCall,
    RunResult,
    RunStatus,
)
from bot.store.lifecycle import HELD
from bot.store.models import AuditEvent, EscalationRecord, FeedbackRecord, Run, Step, ToolCallRecord, Verdict
from bot.store.records import (
    RunSummary,
    StoredAuditEvent,
    StoredEscalation,
    StoredFeedback,
    StoredRun,
    StoredStep,
    StoredToolCall,
    StoredVerdict,
)
from bot.store.vocabulary import EscalationKind, EscalationStatus, FeedbackVerdict

log = logging.getLogger(__name__)

# What a StoredRun is read from: every column but the engine's saved state and the run's plan and limits
# (the trace's), which no view of the run needs and which can be large.
STORED_COLUMNS = tuple(
    column for column in Run.__table__.columns if column.key not in ("snapshot", "limits", "done_plan")
)
# What a list of runs shows (`RunSummary`).
SUMMARY_COLUMNS = (
    Run.id,
    Run.created_at,
    Run.source,
    Run.asker,
    Run.question,
    Run.status,
    Run.termination_reason,
    Run.steps,
    Run.tool_calls,
    Run.duration_ms,
)
# Defaults for what older rows did not store.
_CITATION_DEFAULTS: dict[str, Any] = {"tool_call_id": "", "step": 0, "arguments": {}}
_HELD_CALL_DEFAULTS: dict[str, Any] = {"reason": "", "arguments": {}}

Model = TypeVar("Model", bound=BaseModel)


def stored_run(run: Run) -> StoredRun:
    """The run as its row holds it now (a row loaded whole, or with `STORED_COLUMNS`)."""
    status = RunStatus(run.status)
    return _stored(run, status, None if status in HELD else _result(run, status))


def escalated_run(run: Run, escalation: EscalationRecord) -> StoredRun:
    """The run as it went to people: `awaiting_review` with `escalation`, its draft as the answer.

    What the reviewer message shows, the same before the decision and after it, when the run itself has moved
    on (approved, rejected, resumed and running again).
    """
    draft = escalation.draft_answer if escalation.draft_answer is not None else run.answer
    result = _result(run, RunStatus.AWAITING_REVIEW, escalation=_escalation_of(escalation), answer=draft)
    return _stored(run, RunStatus(run.status), result)


def stored_escalation(record: EscalationRecord) -> StoredEscalation:
    return StoredEscalation(
        id=record.id,
        run_id=record.run_id,
        kind=EscalationKind(record.kind),
        reason=record.reason,
        level=record.level,
        status=EscalationStatus(record.status),
        message=record.message or "",
        tool=record.tool,
        arguments=record.arguments,
        tool_call_id=record.tool_call_id,
        held_calls=_each(HeldCall, record.held_calls, record.run_id, defaults=_HELD_CALL_DEFAULTS),
        draft_answer=record.draft_answer,
        review_channel=record.review_channel,
        review_ts=record.review_ts,
        created_at=record.created_at,
        reminded_at=record.reminded_at,
        decided_at=record.decided_at,
        decided_by=record.decided_by,
        decision_reason=record.decision_reason,
        final_answer=record.final_answer,
    )


def run_summary(row: Any) -> RunSummary:
    """A list's row (`SUMMARY_COLUMNS`, by name)."""
    return RunSummary(**{column.key: getattr(row, column.key) for column in SUMMARY_COLUMNS})


def columns_of(row: Any) -> dict[str, Any]:
    """Every column of an ORM row, as plain values."""
    return {column.key: getattr(row, column.key) for column in row.__table__.columns}


def stored_step(row: Step) -> StoredStep:
    return StoredStep(**columns_of(row))


def stored_tool_call(row: ToolCallRecord) -> StoredToolCall:
    return StoredToolCall(**columns_of(row))


def stored_verdict(row: Verdict) -> StoredVerdict:
    return StoredVerdict(**columns_of(row))


def stored_audit_event(row: AuditEvent) -> StoredAuditEvent:
    return StoredAuditEvent(**columns_of(row))


def stored_feedback(row: FeedbackRecord) -> StoredFeedback:
    values = columns_of(row)
    values["verdict"] = FeedbackVerdict(values["verdict"])
    return StoredFeedback(**values)


def _stored(run: Run, status: RunStatus, result: RunResult | None) -> StoredRun:
    return StoredRun(
        id=run.id,
        question=run.question,
        status=status,
        result=result,
        source=run.source,
        asker=run.asker,
        workspace_id=run.workspace_id,
        channel_id=run.channel_id,
        thread_ts=run.thread_ts,
        trigger_ts=run.trigger_ts,
        reply_ts=run.reply_ts,
        created_at=run.created_at,
        started_at=run.started_at,
        finished_at=run.finished_at,
        brain=run.brain or "",
        replayed=bool(run.replayed),
        config_hash=run.config_hash or "",
        trace_complete=run.trace_complete is not False,
        retry_of=run.retry_of,
        owner=run.owner,
        answer=run.answer,
        termination_reason=run.termination_reason,
        resumes=run.resumes or 0,
        delivered=run.delivered_at is not None,
    )


def _result(
    run: Run,
    status: RunStatus,
    *,
    escalation: Escalation | None = None,
    answer: str | None = None,
) -> RunResult | None:
    """The RunResult the engine gave when the run ended; None when the row does not say why it ended."""
    reason = run.termination_reason  # a closed vocabulary in the database (its CHECK), None while unfinished
    if reason is None:
        log.warning("run %s is %s without a known termination reason (%r)", run.id, status, run.termination_reason)
        return None
    return RunResult(
        run_id=run.id,
        question=run.question,
        status=status,
        termination_reason=reason,
        answer=(run.answer if answer is None else answer) or "",
        citations=_each(Citation, run.citations, run.id, defaults=_CITATION_DEFAULTS),
        completed=[str(item) for item in run.completed or []],
        missing=[str(item) for item in run.missing or []],
        steps=run.steps or 0,
        llm_calls=run.llm_calls or 0,
        tool_calls=run.tool_calls or 0,
        retries=run.retries or 0,
        critique_rounds=run.critique_rounds or 0,
        llm_retries=run.llm_retries or 0,
        tokens=run.tokens or 0,
        duration_ms=run.duration_ms or 0,
        escalation=escalation or _one(Escalation, run.escalation, run.id),
        degraded=_one(DegradedFinal, run.degraded, run.id),
        grounding=_each(GroundedFigure, run.grounding, run.id),
        replayed=bool(run.replayed),
        brain=run.brain or "",
    )


def _escalation_of(record: EscalationRecord) -> Escalation | None:
    fields = ("kind", "reason", "level", "tool", "arguments", "tool_call_id")
    value = {name: getattr(record, name) for name in fields}
    value.update(message=record.message or "", held_calls=record.held_calls or [])
    return _one(Escalation, value, record.run_id)


def _one(model: type[Model], value: Any, run_id: str) -> Model | None:
    if value is None:
        return None
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        log.warning("run %s: its stored %s does not read (%s); left out", run_id, model.__name__, _first(exc))
        return None


def _each(model: type[Model], values: Any, run_id: str, *, defaults: dict[str, Any] | None = None) -> list[Model]:
    read: list[Model] = []
    for value in values or []:
        found = _one(model, {**(defaults or {}), **value} if isinstance(value, dict) else value, run_id)
        if found is not None:
            read.append(found)
    return read


def _first(exc: ValidationError) -> str:
    error = exc.errors()[0]
    return f"{'.'.join(str(part) for part in error['loc']) or 'value'}: {error['msg']}"
