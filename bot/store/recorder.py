"""StoreRecorder: the engine's Recorder, persisting each trace event as it happens.

One short transaction per event, so a process killed mid-run leaves the run `running` with every step
written so far. A journaled run's step carries the intents of the calls it is about to make (`StepDecided`'s
`intended`) in the same transaction: the journal then has nothing left to write before they start. Raw tool
results are size-capped; NUL characters (which PostgreSQL refuses) are replaced.
A run's end the database cannot take is kept by its owner (`PendingEnds`) and written once it can.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from sqlalchemy import ColumnElement, and_, delete, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from agent import (
    CallIntent,
    CritiqueVerdictMade,
    DoneItemTicked,
    FinalRejected,
    LLMCallFinished,
    LLMRetry,
    PlanMade,
    RetryScheduled,
    RunFinished,
    RunHeld,
    RunResumed,
    RunStarted,
    RunStatus,
    StepDecided,
    TerminationReason,
    ToolCallFinished,
    ToolCallRequest,
    TraceEvent,
)
from bot.store.audit import ENGINE, audit
from bot.store.database import Database, rows_changed
from bot.store.lifecycle import FROM, Change
from bot.store.models import EscalationRecord, Run, RunCheckpoint, Step, ToolCallRecord, Verdict
from bot.store.pending import OUTAGES, PendingEnds
from bot.store.records import RunOrigin
from bot.store.run_writer import RunWriter
from bot.store.storable import storable
from bot.store.vocabulary import AuditAction, EscalationKind, VerdictKind, VerdictStage

log = logging.getLogger(__name__)

DEFAULT_RAW_CAP_BYTES = 256 * 1024
DEFAULT_WRITE_TIMEOUT_S = 5.0
# Kept in the rows of other events (a tool call's attempts, the run's counters): no transaction for these.
_NOTHING_TO_WRITE = (RetryScheduled, LLMRetry, LLMCallFinished)


def capped_raw(raw: Any, cap_bytes: int) -> tuple[Any, int, bool]:
    """(what to store, the raw result's size in bytes, whether it was cut)."""
    value = storable(raw)
    text = json.dumps(value, ensure_ascii=False)
    size = len(text.encode("utf-8"))
    if size <= cap_bytes:
        return value, size, False
    head = text.encode("utf-8")[:cap_bytes].decode("utf-8", "ignore")
    return {"truncated": True, "bytes": size, "head": head}, size, True


def _requested(call: ToolCallRequest) -> dict[str, Any]:
    """A call as the model asked for it, as `steps.requested_calls` keeps it (id, name, arguments)."""
    return {"id": call.id, "name": call.name, "arguments": call.arguments}


class StoreRecorder:
    """Implements `agent.Recorder` on the database.

    With an `owner`, the runs it records are held by that process (`runs.owner`); with `pending`, a run's end
    the database could not take is kept there and written when it can (else it is lost, as any other event);
    with a `writer` (a journaled run's `RunWriter`), the steps of that run that make calls are written with the
    run's pending checkpoint and their calls' intents, in one transaction.
    """

    def __init__(
        self,
        db: Database,
        origin: RunOrigin,
        *,
        raw_cap_bytes: int = DEFAULT_RAW_CAP_BYTES,
        write_timeout_s: float = DEFAULT_WRITE_TIMEOUT_S,
        owner: str | None = None,
        pending: PendingEnds | None = None,
        writer: RunWriter | None = None,
    ) -> None:
        self._db = db
        self._writer = writer
        self._origin = origin
        self._owner = owner
        self._pending = pending
        self._raw_cap = raw_cap_bytes
        self._timeout = write_timeout_s
        self._broken: set[str] = set()  # runs whose trace could not be written whole
        self._writes: set[asyncio.Task[None]] = set()

    async def record(self, event: TraceEvent) -> None:
        """Write one event within `write_timeout_s`, whatever the database does.

        After a failure the rest of that run is not written (each write would cost the run another
        timeout), except its end: the run's final status is tried once more and marked `trace_complete=false`.
        """
        if isinstance(event, _NOTHING_TO_WRITE) or (
            event.run_id in self._broken and not isinstance(event, RunFinished)
        ):
            return
        write = asyncio.create_task(self._write_in_transaction(event))
        self._writes.add(write)
        write.add_done_callback(self._writes.discard)
        # Not `asyncio.timeout`: cancelling a write to a hung server waits for the driver to close the
        # connection (seconds); the cancelled write finishes on its own while the run goes on.
        done, _ = await asyncio.wait({write}, timeout=self._timeout)
        try:
            if not done:
                write.cancel()
                raise TimeoutError(f"the store did not answer within {self._timeout:g}s")
            write.result()
        except Exception as exc:
            self._broken.add(event.run_id)
            if isinstance(event, RunFinished) and isinstance(exc, OUTAGES) and self._pending is not None:
                self._pending.keep(event.run_id, lambda: self._write_end(event))
            raise
        if isinstance(event, RunFinished):
            self._broken.discard(event.run_id)

    async def _write_end(self, event: RunFinished) -> None:
        """The end kept while the database was away, written now (`trace_complete=false`: events were lost)."""
        await self._write_in_transaction(event)
        self._broken.discard(event.run_id)

    async def _write_in_transaction(self, event: TraceEvent) -> None:
        writer = self._writer
        if isinstance(event, StepDecided) and event.intended and writer is not None and event.run_id == writer.run_id:
            intended = set(event.intended)
            intents = [CallIntent.of(call) for call in event.tool_calls if call.id in intended]
            await writer.write_step(lambda session: self._write(session, event), event.step, intents)
            return
        async with self._db.sessions() as session, session.begin():
            await self._write(session, event)

    async def _write(self, session: AsyncSession, event: TraceEvent) -> None:
        match event:
            case RunStarted():
                await self._started(session, event)
            case PlanMade():
                plan = [item.model_dump(mode="json") for item in event.items]
                await session.execute(update(Run).where(Run.id == event.run_id).values(done_plan=storable(plan)))
                session.add(
                    Verdict(
                        run_id=event.run_id,
                        kind=VerdictKind.PLAN,
                        source=event.source,
                        reason=event.note or None,
                        at=event.at,
                    )
                )
            case StepDecided():
                session.add(
                    Step(
                        run_id=event.run_id,
                        step=event.step,
                        decision=event.decision.value,
                        thought=storable(event.thought),
                        text=storable(event.text),
                        requested_calls=storable([_requested(call) for call in event.tool_calls]),
                        prompt_tokens=event.prompt_tokens,
                        completion_tokens=event.completion_tokens,
                        latency_ms=event.latency_ms,
                        at=event.at,
                    )
                )
            case ToolCallFinished():
                raw, size, cut = capped_raw(event.raw, self._raw_cap)
                session.add(
                    ToolCallRecord(
                        run_id=event.run_id,
                        step=event.step,
                        tool_call_id=event.tool_call_id,
                        tool=event.tool,
                        arguments=storable(event.arguments),
                        ok=event.ok,
                        error_code=event.code,
                        error_level=event.level.name if event.level is not None else None,
                        retryable=event.retryable,
                        retries=event.retries,
                        latency_ms=event.latency_ms,
                        observation=storable(event.observation),
                        raw=raw,
                        raw_bytes=size,
                        raw_truncated=cut,
                        attempts=storable([a.model_dump() for a in event.attempts]),
                        at=event.at,
                    )
                )
            case CritiqueVerdictMade():
                session.add(
                    Verdict(
                        run_id=event.run_id,
                        step=event.step,
                        kind=VerdictKind.CRITIQUE,
                        stage=VerdictStage(event.stage),
                        satisfied=event.satisfied,
                        gaps=storable(event.gaps),
                        next_action=event.next_action,
                        source=event.source,
                        round=event.round,
                        at=event.at,
                    )
                )
            case DoneItemTicked():
                session.add(
                    Verdict(
                        run_id=event.run_id,
                        step=event.step,
                        kind=VerdictKind.DONE_TICK,
                        satisfied=True,
                        item=storable(event.item),
                        tool_call_id=event.tool_call_id,
                        at=event.at,
                    )
                )
            case FinalRejected():
                session.add(
                    Verdict(
                        run_id=event.run_id,
                        step=event.step,
                        kind=VerdictKind.FINAL_REJECTED,
                        stage=VerdictStage(event.by),
                        satisfied=False,
                        gaps=storable(event.gaps),
                        reason=storable(event.draft),
                        at=event.at,
                    )
                )
            case RunHeld():
                await session.execute(
                    update(Run)
                    .where(Run.id == event.run_id)
                    .values(snapshot=storable(event.snapshot.model_dump(mode="json")))
                )
            case RunResumed():
                previous = await session.scalar(select(Run.status).where(Run.id == event.run_id))
                resumed: dict[str, object] = {"status": RunStatus.RUNNING, "finished_at": None}
                if self._owner is not None:
                    resumed["owner"] = self._owner
                await session.execute(
                    update(Run).where(Run.id == event.run_id, Run.status.in_(FROM[Change.RESUME])).values(**resumed)
                )
                audit(
                    session,
                    event.run_id,
                    AuditAction.RUN_RESUMED,
                    actor=ENGINE,
                    at=event.at,
                    from_status=previous,
                    to_status=RunStatus.RUNNING,
                    detail={
                        "approved_by": event.approved_by,
                        "held": storable([call.model_dump(mode="json") for call in event.held]),
                    },
                )
            case RunFinished():
                await self._finished(session, event)

    async def _started(self, session: AsyncSession, event: RunStarted) -> None:
        run = await session.get(Run, event.run_id)
        previous = run.status if run is not None else None
        if run is None:
            origin = self._origin
            place = origin.conversation
            run = Run(
                id=event.run_id,
                source=origin.source,
                workspace_id=place.workspace if place else None,
                channel_id=place.channel if place else None,
                thread_ts=place.thread if place else None,
                asker=origin.asker,
                question=storable(event.question),
                created_at=event.at,
            )
            session.add(run)
        run.status = RunStatus.RUNNING
        if self._owner is not None:
            run.owner = self._owner
        run.started_at = event.at
        run.brain = event.brain
        run.replayed = event.replayed
        run.config_hash = event.config_hash
        run.limits = storable(event.limits.model_dump(mode="json"))
        await session.flush()  # the run row first: the audit event refers to it
        audit(
            session,
            event.run_id,
            AuditAction.RUN_STARTED,
            actor=ENGINE,
            at=event.at,
            from_status=previous,
            to_status=RunStatus.RUNNING,
            detail={"tools": event.tools, "brain": event.brain},
        )

    async def _finished(self, session: AsyncSession, event: RunFinished) -> None:
        result = event.result
        previous = await session.scalar(select(Run.status).where(Run.id == result.run_id))
        # Only a run still under way ends here: one ended meanwhile (taken over by another process, or this
        # very write reached the database before its answer was lost) keeps its end. One exception: a run this
        # process still owns that was ended as left by a dead process — it was only cut off from the database,
        # went on, and its thread shows this end (it replaced the notice): this end is the true one.
        under_way: ColumnElement[bool] = Run.status.in_(FROM[Change.FINISH])
        if self._owner is not None:
            # Still this process's: a run another replica took over (this one was cut off, and went on) ends there.
            under_way = and_(under_way, Run.owner == self._owner)
            ended_for_dead = and_(
                Run.owner == self._owner,
                Run.status == RunStatus.DEGRADED,
                Run.termination_reason == TerminationReason.CANCELLED,
            )
            under_way = or_(under_way, ended_for_dead)
        ended = await rows_changed(
            session,
            update(Run)
            .where(Run.id == result.run_id, under_way)
            .values(
                status=result.status,
                termination_reason=result.termination_reason,
                answer=storable(result.answer),
                citations=storable([c.model_dump() for c in result.citations]),
                completed=storable(result.completed),
                missing=storable(result.missing),
                escalation=storable(result.escalation.model_dump()) if result.escalation else None,
                degraded=storable(result.degraded.model_dump()) if result.degraded else None,
                grounding=storable([figure.model_dump() for figure in result.grounding]),
                steps=result.steps,
                llm_calls=result.llm_calls,
                tool_calls=result.tool_calls,
                retries=result.retries,
                llm_retries=result.llm_retries,
                trace_complete=result.run_id not in self._broken,
                critique_rounds=result.critique_rounds,
                tokens=result.tokens,
                finished_at=event.at,
                duration_ms=result.duration_ms,
            ),
        )
        if ended != 1:
            if previous is None:
                log.error("run %s was never recorded: its end has no row to go to", result.run_id)
            else:
                log.warning(
                    "run %s had ended already (%s): its end as seen here is not recorded", result.run_id, previous
                )
            return
        await session.execute(delete(RunCheckpoint).where(RunCheckpoint.run_id == result.run_id))  # ended: not resumed
        if result.escalation is not None:
            esc = result.escalation
            session.add(
                EscalationRecord(
                    run_id=result.run_id,
                    kind=EscalationKind(esc.kind),
                    reason=esc.reason,
                    level=esc.level.name,
                    message=storable(esc.message),
                    tool=esc.tool,
                    arguments=storable(esc.arguments),
                    tool_call_id=esc.tool_call_id,
                    held_calls=storable([call.model_dump() for call in esc.held_calls]),
                    draft_answer=storable(result.answer),
                    created_at=event.at,
                )
            )
        audit(
            session,
            result.run_id,
            AuditAction.RUN_FINISHED,
            actor=ENGINE,
            at=event.at,
            from_status=previous,
            to_status=result.status,
            detail={"termination_reason": result.termination_reason.value},
        )
