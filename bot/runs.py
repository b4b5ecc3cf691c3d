"""RunService: the one owner of a run's lifecycle in bot/ — ask, resume, decide, retry, cancel.

The command line, Slack's listeners and workers and the timed jobs are adapters over this service: they
parse what people did, call one method, and show the typed result in their medium. The engine decides how
a run ended (`RunResult.outcome`); the store records it (`StoreRecorder`); this service acts on it — a run
that ends waiting for people is shown to the reviewers, a decision is announced — and tells people only
through its `Notifier`, after the change is committed. Every run it queues, starts or resumes is held by its
`RunOwner` (this process) until it ends; an end the database cannot take yet is kept by the owner.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from agent import Agent, Exchange, FanoutRecorder, Recorder, RunResult, RunStatus
from bot.notifier import Notifier, tell
from bot.owner import RunOwner
from bot.review.service import (
    Decision,
    HeldCallsChanged,
    Settled,
    approved_snapshot,
    current_escalation,
    end_unresumable,
    note_refusal,
    settle,
)
from bot.store import Database, EscalationKind, RunOrigin, RunSource, StoreRecorder
from bot.store.conversations import cancel_stopped, enqueue_retry, load_run
from bot.store.feedback import from_feedback
from bot.store.models import EscalationRecord, Run

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class NotResumed:
    """An approved run whose saved state does not match what the reviewer approved: ended, nothing run."""

    run_id: str
    why: str


@dataclass(frozen=True)
class Retried:
    """The outcome of a retry: `retry_id` is the new queued run when this decision won."""

    settled: Settled
    retry_id: str | None


def origin_of(run: Run) -> RunOrigin:
    """Where a stored run came from, for the recorder of its next steps."""
    return RunOrigin(
        source=RunSource(run.source),
        asker=run.asker,
        workspace_id=run.workspace_id,
        channel_id=run.channel_id,
        thread_ts=run.thread_ts,
    )


class RunService:
    """Every way a run starts, goes on, is decided or ends early — recorded first, then told."""

    def __init__(
        self,
        db: Database,
        notifier: Notifier,
        agent: Agent | None = None,
        *,
        owner: RunOwner | None = None,
        watchers: Sequence[Recorder] = (),
    ) -> None:
        """Without an `agent` the service decides, retries and cancels, but runs nothing (`parley review
        reject` needs no LLM). Without an `owner`, this process holds its runs under an owner of its own,
        heartbeating only while a run goes on (the command line). `watchers` see every run's trace events
        (metrics, spans), after the store."""
        self._db = db
        self.notifier = notifier
        self._engine = agent
        self.owner = owner or RunOwner(db)
        self._watchers = tuple(watchers)

    @property
    def _agent(self) -> Agent:
        if self._engine is None:
            raise RuntimeError("this RunService was built without an agent: it cannot run questions")
        return self._engine

    def check_question(self, question: str) -> str:
        """The question as the engine takes it; `InvalidQuestion` (empty, too long) before anything is stored."""
        return self._agent.check_question(question)

    async def ask(
        self,
        question: str,
        origin: RunOrigin,
        *,
        run_id: str | None = None,
        history: Sequence[Exchange] = (),
        watchers: Sequence[Recorder] = (),
    ) -> RunResult:
        """Run the question to its end, recorded; a run that waits for people is shown to the reviewers."""
        async with self.owner.holding():
            recorder = FanoutRecorder(self._recorder(origin), *self._watchers, *watchers)
            result = await self._agent.run(question, run_id=run_id, history=history, recorder=recorder)
        await self._after_run(result)
        return result

    def _recorder(self, origin: RunOrigin) -> StoreRecorder:
        return StoreRecorder(self._db, origin, owner=self.owner.id, pending=self.owner.pending)

    async def escalation_of(self, run_id: str) -> tuple[EscalationRecord | None, Run | None]:
        """The run's newest escalation (pending or decided) and the run."""
        return await current_escalation(self._db, run_id)

    async def note_refusal(self, run_id: str, actor: str, attempted: str, why: str) -> None:
        """Someone who may not decide tried to: written to the audit log (nothing else changes)."""
        await note_refusal(self._db, run_id, actor, attempted, why)

    async def check_resumable(self, run_id: str) -> None:
        """Raise `HeldCallsChanged` when the run's saved state is not what its reviewer is shown."""
        await approved_snapshot(self._db, run_id)

    async def resume(
        self, run_id: str, *, approved_by: str, watchers: Sequence[Recorder] = (), thread_watched: bool = False
    ) -> RunResult | NotResumed:
        """Go on with an approved held run from its saved state: the held calls run exactly as approved.

        `thread_watched` says the caller shows the run in its thread itself (Slack's worker); otherwise the
        notifier tells the thread how it ended.
        """
        try:
            snapshot = await approved_snapshot(self._db, run_id)
        except HeldCallsChanged as exc:
            log.error("%s: nothing was run", exc)
            await end_unresumable(self._db, run_id, str(exc))
            return NotResumed(run_id, str(exc))
        run = await load_run(self._db, run_id)
        if run is None:  # removed between the two reads
            return NotResumed(run_id, f"run {run_id} no longer exists")
        async with self.owner.holding():
            recorder = FanoutRecorder(self._recorder(origin_of(run)), *self._watchers, *watchers)
            result = await self._agent.resume(snapshot, approved_by=approved_by, recorder=recorder)
        if not thread_watched:
            await tell(self.notifier.resumed, run, result, what=f"the result of resumed run {run_id}")
        await self._after_run(result)
        return result

    async def decide(
        self,
        run_id: str,
        decision: Decision,
        *,
        actor: str,
        answer: str | None = None,
        reason: str | None = None,
        announce: bool = True,
        now: datetime | None = None,
    ) -> Settled:
        """Record one decision on the run's pending escalation, unless someone decided first.

        An approved held action leaves the run `running`, held by this process (it is resumed next, by
        `resume`); a retried run keeps its honest engine outcome (`degraded`). With `announce`, people are told
        at once; a caller that must answer Slack first passes False and calls `announce` itself.
        """
        escalation, run = await current_escalation(self._db, run_id)
        held = escalation is not None and escalation.kind == EscalationKind.HELD_ACTION
        run_status = owner = None
        if decision is Decision.APPROVED and held:
            run_status, owner = RunStatus.RUNNING, self.owner.id
            await self.owner.beat()  # registered before any run names it; `resume` holds it from there
        elif decision is Decision.RETRIED:
            run_status = RunStatus.DEGRADED
        elif decision is Decision.EXPIRED and escalation is not None and run is not None and from_feedback(escalation):
            run_status = RunStatus(run.status)  # nobody looked at a 👎: the answer the asker saw still stands
        settled = await settle(
            self._db,
            run_id,
            decision,
            actor=actor,
            reason=reason,
            final_answer=answer,
            run_status=run_status,
            owner=owner,
            now=now,
        )
        if announce:
            await self.announce(settled)
        return settled

    async def announce(self, settled: Settled) -> None:
        """Tell people about a decision this process won (nothing when someone decided first)."""
        if settled.won and settled.escalation is not None and settled.run is not None:
            what = f"the decision on run {settled.run.id}"
            await tell(self.notifier.decided, settled.escalation, settled.run, what=what)

    async def retry(self, run_id: str, *, actor: str) -> Retried:
        """Decide `retried` and queue the same question again as a new run linked by `retry_of`."""
        settled = await self.decide(run_id, Decision.RETRIED, actor=actor)
        if not settled.won or settled.run is None:
            return Retried(settled, None)
        return Retried(settled, await enqueue_retry(self._db, settled.run, owner=self.owner.id))

    async def show_escalation(self, run_id: str) -> None:
        """Show the run's pending escalation to the reviewers (one a 👎 opened): the same path as a run that
        ended waiting for people; a post that fails is tried again by the `announce` job."""
        escalation, run = await current_escalation(self._db, run_id)
        if escalation is None or run is None:
            log.error("run %s was escalated, but its escalation was not found", run_id)
            return
        await tell(self.notifier.escalated, escalation, run, what=f"the escalation of run {run_id}")

    async def cancel_stopped(self, run_id: str, why: str, *, started: bool = False) -> None:
        """A run this process stopped answering ends `degraded`/`cancelled` with `why` as its answer — now, or
        when the database is back (its owner keeps the write): one that could not start, or (`started`) one
        the engine had no time to record as ended as the process shut down. Its thread is told `why` once."""
        await self.owner.pending.write(run_id, lambda: cancel_stopped(self._db, run_id, why, started=started))

    async def _after_run(self, result: RunResult) -> None:
        if result.status is not RunStatus.AWAITING_REVIEW:
            return
        escalation, run = await current_escalation(self._db, result.run_id)
        if escalation is None or run is None:
            log.error("run %s waits for review, but its escalation was not recorded", result.run_id)
            return
        await tell(self.notifier.escalated, escalation, run, what=f"the escalation of run {result.run_id}")
