"""RunService: the one owner of a run's life in bot/ — intake, claim, run, end and delivery, escalation of every
kind, decisions, retry, recovery, stop.

The command line, Slack's listeners, the timed jobs and every later front end are adapters over this service:
they parse what people did, call one method, and show the typed result in their medium. The engine decides how
a run ended (`RunResult.outcome`); the store records it (`StoreRecorder`) and keeps the lifecycle's rules
(`bot.store.lifecycle`); this service acts on it — a run that ends waiting for people is shown to the reviewers,
a decision is announced — and tells people only through its `Notifier`, after the change is committed. Every
run it queues, starts or resumes is held by its `RunOwner` (this process) until it ends; an end the database
cannot take yet is kept by the owner. With `replies` (a medium's), runs are answered by its own `RunPool`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING

from pydantic import ValidationError

from agent import (
    Exchange,
    FanoutRecorder,
    Interrupted,
    InvalidQuestion,
    Recorder,
    RunResult,
    RunSnapshot,
    RunStatus,
    StopRequest,
    exception_line,
)
from bot.core.config import DEFAULT_SHUTDOWN_GRACE_S, JobsConfig, ReviewConfig
from bot.core.journal import RunJournal
from bot.core.notifier import LogNotifier, Notifier, tell
from bot.core.owner import RunOwner
from bot.core.pool import Replies, RunPool, Stop
from bot.core.recovery import Recovery
from bot.core.resumable import HeldCallsChanged, approved_snapshot
from bot.store import (
    Ask,
    Conversation,
    Database,
    Decision,
    Escalated,
    EscalationKind,
    FeedbackVerdict,
    RunOrigin,
    RunSource,
    Settled,
    StoredRun,
    StoreRecorder,
    StoreUnavailable,
    stops,
)
from bot.store import escalations as stored_escalations
from bot.store.database import patiently
from bot.store.feedback import Recorded, comment_on, note_on_feedback_escalation, record_feedback
from bot.store.journal import claim as claim_run
from bot.store.journal import mark_delivered, release, saved_run
from bot.store.lifecycle import Change, may_decide
from bot.store.retention import purge
from bot.store.runs import end_run, enqueue, enqueue_retry, load_run, set_reply_ts, thread_history, thread_is_ours
from bot.store.vocabulary import AuditAction
from bot.wording import NOT_STARTED_DATABASE_UNAVAILABLE, NOT_TAKEN_DATABASE_UNAVAILABLE, InThread

if TYPE_CHECKING:  # the engine's loop is loaded by whoever builds the agent: `parley runs` needs the core, not it
    from agent import Agent

log = logging.getLogger(__name__)

SCHEDULER = "parley:scheduler"  # the actor of the timed jobs' decisions (expiry)
# What a stopped run's record says (its conversation is told in the medium's own words).
STOPPED_ANSWER = {
    Stop.INTERRUPTED: InThread.INTERRUPTED,
    Stop.STORE_UNAVAILABLE: NOT_STARTED_DATABASE_UNAVAILABLE,
    Stop.INTERNAL_ERROR: InThread.SOMETHING_BROKE,
    Stop.HELD_CHANGED: InThread.HELD_CHANGED,
}

# A note for the reviewers about a 👎 (the medium words it): given whether the clicker asked, and their comment.
FeedbackNote = Callable[[bool, str | None], str]


@dataclass(frozen=True)
class Claim:
    """A queued run this process may start: it is still this process's and still queued."""

    run: StoredRun | None  # None: not recorded (yet), the engine records it as it starts
    history: list[Exchange]


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


class StopOutcome(StrEnum):
    """What a person's stop did."""

    REQUESTED = "requested"  # recorded: the run stops (wherever it runs), or its held calls never run
    ALREADY = "already"  # someone asked first: nothing more changes
    NOTHING_RUNNING = "nothing_running"  # nothing there a stop could change: acknowledged, nothing changes
    REFUSED = "refused"  # neither the asker nor a reviewer: refused, written to the audit log
    ELSEWHERE = "elsewhere"  # under way in a `parley` command, not in a server: only it can stop it (Ctrl-C)


@dataclass(frozen=True)
class Stopping:
    outcome: StopOutcome
    run: StoredRun | None


@dataclass(frozen=True)
class Stopper:
    """Who asks for a stop: `actor` as the audit log names people, `shown_as` as the run's answer does, and
    whether they are a reviewer (who may stop anyone's run)."""

    person: str
    actor: str
    shown_as: str
    reviewer: bool


class DecisionRefused(Exception):
    """This decision cannot be taken on this kind of escalation (a retry of a held action, say)."""


class RunService:
    """Every way a run starts, goes on, is decided or ends early — recorded first, then told."""

    def __init__(
        self,
        db: Database,
        notifier: Notifier | None = None,
        agent: Agent | None = None,
        *,
        owner: RunOwner | None = None,
        watchers: Sequence[Recorder] = (),
        review: ReviewConfig | None = None,
        jobs: JobsConfig | None = None,
        replies: Replies | None = None,
        workers: int = 1,
        shutdown_grace_s: float = DEFAULT_SHUTDOWN_GRACE_S,
    ) -> None:
        """Without an `agent` the service decides, retries and cancels, but runs nothing (`parley review
        reject` needs no LLM). Without an `owner`, this process holds its runs under an owner of its own,
        heartbeating only while a run goes on (the command line). `watchers` see every run's trace events
        (metrics, spans), after the store. With `replies`, questions taken are answered by a pool of `workers`
        in that medium."""
        self._db = db
        self.notifier: Notifier = notifier or LogNotifier()
        self._engine = agent
        self.owner = owner or RunOwner(db)
        self._watchers = tuple(watchers)
        self.review = review or ReviewConfig()
        self.jobs = jobs or JobsConfig()
        self.pool = RunPool(self, replies, size=workers, grace_s=shutdown_grace_s) if replies is not None else None
        self._recovery = Recovery(
            db,
            self.owner,
            self.notifier,
            ask_of=self.ask_of,
            submit=self._resubmit if self.pool else None,
            deliver=self._deliver_end if self.pool else None,
        )
        self._background: set[asyncio.Task[None]] = set()

    @property
    def _agent(self) -> Agent:
        if self._engine is None:
            raise RuntimeError("this RunService was built without an agent: it cannot run questions")
        return self._engine

    # --- intake ----------------------------------------------------------------------------------------------

    def check_question(self, question: str) -> str:
        """The question as the engine takes it; `InvalidQuestion` (empty, too long) before anything is stored."""
        return self._agent.check_question(question)

    def warm_up(self) -> None:
        """The engine's first-use costs, paid now (a server calls this before it serves anyone)."""
        if self._engine is not None:
            self._engine.warm_up()

    async def take(self, ask: Ask, *, follow_up: bool = False) -> str | None:
        """Record a question asked in a medium and hand it to the pool; its run id, or None when it is not taken.

        A `follow_up` (a plain reply in a conversation) is taken only where Parley was asked before. A question
        the engine refuses, or one the store cannot record, is told in its conversation; a redelivered message
        (its run exists) is taken once.
        """
        if follow_up and ask.conversation is not None:
            try:
                if not await thread_is_ours(self._db, ask.conversation):
                    return None
            except StoreUnavailable as exc:
                # Nobody addressed Parley for certain: say nothing in a conversation that may not be ours.
                log.error("intake of a follow-up failed, the store is unavailable: %s", exception_line(exc))
                return None
        try:
            self.check_question(ask.question)
            # A pool with every connection busy (a burst) is waited for, not an outage.
            run_id = await patiently(lambda: enqueue(self._db, ask, owner=self.owner.id))
        except InvalidQuestion as exc:
            self._tell(ask, f"I can't take this question: {exc}.")
            return None
        except StoreUnavailable as exc:
            log.error("intake failed, the store is unavailable: %s", exception_line(exc))
            self._tell(ask, NOT_TAKEN_DATABASE_UNAVAILABLE)
            return None
        if run_id is None:
            log.info("message %s already has a run (a redelivery)", ask.message)
            return None
        if self.pool is not None:
            self.pool.submit(run_id, ask)
        return run_id

    async def asked_before(self, conversation: Conversation) -> bool:
        """Has Parley been asked in this conversation before?"""
        return await thread_is_ours(self._db, conversation)

    # --- claim, run, end ---------------------------------------------------------------------------------------

    async def claim(self, run_id: str, *, resuming: bool = False) -> Claim | None:
        """The run, if this process may start it now: still held by it, and still queued (or being resumed);
        None otherwise (logged). `StoreUnavailable` when the store cannot tell."""
        if not resuming and not await patiently(lambda: claim_run(self._db, run_id, self.owner.id)):
            # Queued → running under this process is one conditional update, committed before anything runs:
            # a run another replica took over, or one that ended while it waited, is left alone.
            run = await patiently(lambda: load_run(self._db, run_id))
            where = "gone" if run is None else f"{run.status}, held by {run.owner}"
            log.warning("run %s is not queued under this process any more (%s): not started", run_id, where)
            return None
        run = await patiently(lambda: load_run(self._db, run_id))
        if run is not None and run.owner not in (None, self.owner.id):
            # Another replica took it over while this one could not renew its hold (cut off from the database):
            # it is that replica's to answer now.
            log.warning("run %s is held by %s now: not started here", run_id, run.owner)
            return None
        if resuming and run is not None and run.status != RunStatus.RUNNING:
            log.warning("run %s is %s, not running any more: not resumed", run_id, run.status)
            return None
        history = await patiently(lambda: thread_history(self._db, run)) if run is not None else []
        return Claim(run, history)

    async def ask(
        self,
        question: str,
        origin: RunOrigin,
        *,
        run_id: str | None = None,
        history: Sequence[Exchange] = (),
        watchers: Sequence[Recorder] = (),
        stop: StopRequest | None = None,
    ) -> RunResult:
        """Run the question to its end (or until `stop`), recorded; a run that waits for people is shown to the
        reviewers.

        A run of a queued question (`run_id`) is journaled: each step is saved and each tool call's intent is
        recorded before it runs, so a survivor can resume it (`take_over`); `JournalRefused` when this process
        may not go on with it (it stops, recording nothing more)."""
        journal = RunJournal(self._db, run_id, self.owner) if run_id is not None else None
        async with self.owner.holding():
            recorder = FanoutRecorder(self._recorder(origin, journal), *self._watchers, *watchers)
            if run_id is not None and stop is not None:
                await self._stop_if_requested(run_id, stop)
            result = await self._agent.run(
                question, run_id=run_id, history=history, recorder=recorder, stop=stop, journal=journal
            )
        await self._after_run(result)
        return result

    async def take_over(
        self,
        run_id: str,
        ask: Ask,
        *,
        history: Sequence[Exchange] = (),
        watchers: Sequence[Recorder] = (),
        stop: StopRequest | None = None,
    ) -> RunResult:
        """Go on with a run whose process stopped, now held by this one: from its last saved step, its calls in
        flight run again only if their tools are idempotent. A run that saved no step yet ran no tool call: it
        starts again. `JournalRefused` as for `ask`; a person's `stop` as for `ask`."""
        saved = await patiently(lambda: saved_run(self._db, run_id))
        try:
            snapshot = RunSnapshot.model_validate(saved.checkpoint) if saved.checkpoint is not None else None
        except ValidationError:
            log.exception("run %s: its saved step cannot be read by this version; it starts again", run_id)
            snapshot = None
        if snapshot is None:
            return await self.ask(
                ask.question, ask.origin, run_id=run_id, history=history, watchers=watchers, stop=stop
            )
        interrupted = Interrupted(snapshot, tuple(saved.intents), self.owner.id, saved.spent_s)
        journal = RunJournal(self._db, run_id, self.owner)
        async with self.owner.holding():
            recorder = FanoutRecorder(self._recorder(ask.origin, journal), *self._watchers, *watchers)
            if stop is not None:
                await self._stop_if_requested(run_id, stop)
            result = await self._agent.take_over(interrupted, recorder=recorder, journal=journal, stop=stop)
        await self._after_run(result)
        return result

    async def release(self, run_id: str) -> None:
        """Give up a run this process may not finish (fenced, refused, shutting down): any live replica takes it
        over — now, or once the database takes the release (kept like an end)."""

        async def give_up() -> None:
            await release(self._db, run_id, self.owner.id)

        await self.owner.pending.write(run_id, give_up)

    async def delivered(self, run_id: str) -> None:
        """The run's end reached its conversation. A mark the database cannot take is lost: recovery reads the
        thread's end mark before it would post anything."""
        try:
            await patiently(lambda: mark_delivered(self._db, run_id))
        except StoreUnavailable as exc:
            log.warning("run %s: its delivery could not be recorded: %s", run_id, exception_line(exc))

    async def _deliver_end(self, run: StoredRun) -> None:
        """Post the end of a run another process recorded and died before showing, in its placeholder."""
        assert self.pool is not None
        ask = await self.ask_of(run)
        if ask is None or run.result is None:
            return
        await self.pool.replies.reply(ask, queued=False, placeholder=run.reply_ts).finish(run.result)

    async def may_deliver(self, run_id: str, since: float) -> bool:
        """Whether this process may show the run's end: yes, unless its heartbeat has been silent so long, since
        the run started here (`since`, monotonic), that another replica may have taken the run over — then only if
        the store says the run is still its own. A run it may not show is released (nothing is posted; whoever
        holds it answers)."""
        if not self.owner.fenced_since(since):
            return True
        try:
            run = await load_run(self._db, run_id)
        except StoreUnavailable:
            run = None
        else:
            if run is not None:
                return run.owner == self.owner.id
        log.warning("run %s: fenced (the database is away), its end is not shown; it is released", run_id)
        await self.release(run_id)
        return False

    async def may_show(self, run_id: str, since: float) -> bool:
        """Whether this process may show the run's progress now: as `may_deliver`, but nothing is asked of the
        store while this process is fenced (the progress is dropped), and nothing is released."""
        if not self.owner.fenced_since(since):
            return True
        if self.owner.fenced:
            return False
        try:
            run = await load_run(self._db, run_id)
        except StoreUnavailable:
            return False
        return run is not None and run.owner == self.owner.id

    async def resume(
        self,
        run_id: str,
        *,
        approved_by: str,
        watchers: Sequence[Recorder] = (),
        thread_watched: bool = False,
        stop: StopRequest | None = None,
    ) -> RunResult | NotResumed:
        """Go on with an approved held run from its saved state: the held calls run exactly as approved.

        `thread_watched` says the caller shows the run in its conversation itself (the pool); otherwise the
        notifier tells the conversation how it ended.
        """
        try:
            snapshot = await approved_snapshot(self._db, run_id)
        except HeldCallsChanged as exc:
            log.error("%s: nothing was run", exc)
            await end_run(
                self._db,
                run_id,
                Change.UNRESUMABLE,
                answer=f"Approved, but not resumed: {exc}.",
                action=AuditAction.RESUME_REFUSED,
                detail={"why": str(exc)},
            )
            return NotResumed(run_id, str(exc))
        run = await load_run(self._db, run_id)
        if run is None:  # removed between the two reads
            return NotResumed(run_id, f"run {run_id} no longer exists")
        stop = stop or StopRequest()
        async with self.owner.holding():
            recorder = FanoutRecorder(self._recorder(run.origin), *self._watchers, *watchers)
            await self._stop_if_requested(run_id, stop)  # a stop before the approval: the held calls never run
            result = await self._agent.resume(snapshot, approved_by=approved_by, recorder=recorder, stop=stop)
        if not thread_watched:
            await tell(self.notifier.resumed, run, result, what=f"the result of resumed run {run_id}")
            await self.delivered(run_id)
        await self._after_run(result)
        return result

    async def check_resumable(self, run_id: str) -> None:
        """Raise `HeldCallsChanged` when the run's saved state is not what its reviewer is shown."""
        await approved_snapshot(self._db, run_id)

    async def keep_reply(self, run_id: str, message: str) -> None:
        """Record the message a run's conversation shows it in (its placeholder, updated as it goes)."""
        try:
            await patiently(lambda: set_reply_ts(self._db, run_id, message))
        except StoreUnavailable as exc:  # the reply still works; only the record of where it is is missing
            log.warning("could not record the reply of run %s: %s", run_id, exc)

    async def stop_run(self, run_id: str, why: Stop, *, started: bool = False) -> None:
        """A run this process stopped answering ends with `why`'s answer — now, or when the database is back
        (its owner keeps the write): one that could not start, or (`started`) one the engine had no time to
        record as ended (shutdown), or that failed outside the engine."""
        change = Change.STOP if started else Change.CANCEL
        action = AuditAction.RUN_FAILED if why is Stop.INTERNAL_ERROR else AuditAction.RUN_CANCELLED
        detail = {"reason": "stopped before the run ended" if started else "stopped before the run started"}
        if why is Stop.INTERNAL_ERROR:
            detail = {"reason": "a failure outside the engine"}

        async def end() -> None:
            await end_run(
                self._db, run_id, change, answer=STOPPED_ANSWER[why], reason=why.reason, action=action, detail=detail
            )

        await self.owner.pending.write(run_id, end)

    # --- a person's stop ---------------------------------------------------------------------------------------

    async def stored(self, run_id: str) -> StoredRun | None:
        return await load_run(self._db, run_id)

    async def stoppable_in(self, conversation: Conversation) -> StoredRun | None:
        """The conversation's newest run a stop can still change (queued, running, or held for review)."""
        return await stops.stoppable_in(self._db, conversation)

    async def newest_stoppable_of(self, asker: str) -> StoredRun | None:
        return await stops.newest_stoppable_of(self._db, asker)

    async def request_stop(self, run: StoredRun | None, stopper: Stopper) -> Stopping:
        """A person asks for `run` to stop. Only its asker or a reviewer may: anyone else is refused (audited).
        The request is recorded in the store, so whichever process holds the run stops it within about a second
        (this one at once); a held run's calls never run, even once approved."""
        if run is None or run.status not in stops.STOPPABLE:
            return Stopping(StopOutcome.NOTHING_RUNNING, run)
        if stopper.person != run.asker and not stopper.reviewer:
            why = "only the person who asked, or a reviewer, may stop a run"
            await stops.note_stop_refused(self._db, run.id, stopper.actor, why)
            return Stopping(StopOutcome.REFUSED, run)
        if run.source is not RunSource.SLACK and run.status is not RunStatus.AWAITING_REVIEW:
            return Stopping(StopOutcome.ELSEWHERE, run)  # no server's pool holds it: nothing would read the request
        if not await stops.request_stop(self._db, run, actor=stopper.actor, shown_as=stopper.shown_as):
            return Stopping(StopOutcome.ALREADY, run)
        if self.pool is not None:
            self.pool.stop_requested(run.id, stopper.shown_as)
        return Stopping(StopOutcome.REQUESTED, run)

    async def stops_requested(self, run_ids: Collection[str]) -> dict[str, str]:
        """Which of these runs someone asked to stop: run id → who (as the answer names them)."""
        return await stops.requested_among(self._db, run_ids)

    async def _stop_if_requested(self, run_id: str, stop: StopRequest) -> None:
        try:
            requested = await stops.requested_among(self._db, [run_id])
        except StoreUnavailable as exc:  # the pool's next look at the requests may still see it
            log.warning("could not read whether run %s was asked to stop: %s", run_id, exception_line(exc))
            return
        if run_id in requested:
            stop.stop(requested[run_id])

    def _recorder(self, origin: RunOrigin, journal: RunJournal | None = None) -> StoreRecorder:
        """The store's recorder of one run; a journaled run's steps carry their calls' intents."""
        writer = journal.writer if journal is not None else None
        return StoreRecorder(self._db, origin, owner=self.owner.id, pending=self.owner.pending, writer=writer)

    async def _after_run(self, result: RunResult) -> None:
        if result.status is not RunStatus.AWAITING_REVIEW:
            return
        escalated = await stored_escalations.current_escalation(self._db, result.run_id)
        if escalated is None:
            log.error("run %s waits for review, but its escalation was not recorded", result.run_id)
            return
        await self.escalate(escalated)

    # --- escalations and decisions -----------------------------------------------------------------------------

    async def escalation_of(self, run_id: str) -> Escalated | None:
        """The run's newest escalation (pending or decided) with its run."""
        return await stored_escalations.current_escalation(self._db, run_id)

    async def escalate(self, escalated: Escalated) -> None:
        """Show a pending escalation to the reviewers, once across replicas: the posting is claimed in the store
        first; a post that fails is released, and the `announce` job tries again."""
        escalation, run = escalated.escalation, escalated.run
        if not escalation.pending or escalation.review_channel:
            return
        channel = self.notifier.review_channel
        if not channel:
            if not isinstance(self.notifier, LogNotifier):
                log.warning("run %s waits for review, but no reviewer channel is set (PARLEY_REVIEW_CHANNEL)", run.id)
            return
        if not await stored_escalations.claim_review_message(self._db, escalation.id, channel):
            return  # another worker or replica is posting it
        what = f"the escalation of run {run.id}"
        posted = await tell(self.notifier.post_escalation, escalated, channel, what=what)
        if posted is None:
            await stored_escalations.release_review_message(self._db, escalation.id)
            return
        await stored_escalations.set_review_message(self._db, escalation.id, posted.channel, posted.ts)

    async def show_escalation(self, run_id: str) -> None:
        """Show the run's pending escalation to the reviewers: the same path as a run that ended waiting."""
        escalated = await self.escalation_of(run_id)
        if escalated is None:
            log.error("run %s was escalated, but its escalation was not found", run_id)
            return
        await self.escalate(escalated)

    async def note_refusal(self, run_id: str, actor: str, attempted: str, why: str) -> None:
        """Someone who may not decide tried to: written to the audit log (nothing else changes)."""
        await stored_escalations.note_refusal(self._db, run_id, actor, attempted, why)

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

        The run's status follows `lifecycle.after_decision`: an approved held action leaves it `running`, held by
        this process (it is resumed next, by `resume`). `DecisionRefused` for a decision its kind does not allow.
        With `announce`, people are told at once; a caller that must answer first passes False and calls
        `announce` itself.
        """
        escalated = await self.escalation_of(run_id)
        owner = None
        if escalated is not None and escalated.escalation.pending:
            kind = escalated.escalation.kind
            if not may_decide(kind, decision):
                raise DecisionRefused(f"an escalation of kind {kind} cannot be {decision}")
            if decision is Decision.APPROVED and kind is EscalationKind.HELD_ACTION:
                owner = self.owner.id
                await self.owner.beat()  # registered before any run names it; `resume` holds it from there
        settled = await stored_escalations.settle(
            self._db, run_id, decision, actor=actor, reason=reason, final_answer=answer, owner=owner, now=now
        )
        if announce:
            await self.announce(settled)
        return settled

    async def announce(self, settled: Settled) -> None:
        """Tell people about a decision this process won (nothing when someone decided first)."""
        if settled.won and settled.run is not None:
            escalated = await self.escalation_of(settled.run.id)
            if escalated is not None:
                await tell(self.notifier.decided, escalated, what=f"the decision on run {settled.run.id}")

    async def approve_held(self, run_id: str, *, actor: str) -> Settled:
        """Approve a held action from a medium: decided and announced, then resumed by the pool in the run's
        conversation (a new message there, which becomes the resumed run's answer)."""
        settled = await self.decide(run_id, Decision.APPROVED, actor=actor)
        escalation = settled.escalation
        if settled.won and settled.run is not None and escalation is not None and self.pool is not None:
            ask = _answered_in(settled.run, escalation.review_channel, escalation.review_ts)
            self.pool.submit(run_id, ask, resume_by=actor)
        return settled

    async def retry(self, run_id: str, *, actor: str) -> Retried:
        """Decide `retried` and queue the same question again as a new run linked by `retry_of` (answered by the
        pool where there is one)."""
        settled = await self.decide(run_id, Decision.RETRIED, actor=actor)
        if not settled.won or settled.run is None:
            return Retried(settled, None)
        retry_id = await enqueue_retry(self._db, settled.run, owner=self.owner.id)
        if self.pool is not None and settled.escalation is not None:
            escalation = settled.escalation
            self.pool.submit(retry_id, _answered_in(settled.run, escalation.review_channel, escalation.review_ts))
        return Retried(settled, retry_id)

    async def ask_of(self, run: StoredRun) -> Ask | None:
        """Where a queued run answers: its conversation, or for a retried run asked on the command line the
        thread of the reviewer message that retried it; None when it has neither."""
        channel = ts = None
        if run.conversation is None and run.retry_of is not None:
            found = await self.escalation_of(run.retry_of)
            if found is not None:
                channel, ts = found.escalation.review_channel, found.escalation.review_ts
        ask = _answered_in(run, channel, ts)
        return ask if ask.conversation is not None else None

    # --- feedback ----------------------------------------------------------------------------------------------

    async def feedback(self, run_id: str, user: str, verdict: FeedbackVerdict, *, note: FeedbackNote) -> Recorded:
        """Record (or change) a person's 👍 / 👎 on a run's answer; with `review.escalate_on_feedback`, a 👎 sends
        the run to the reviewers (once per run, whoever clicks), with `note` as what they read."""
        escalation = (lambda by_asker: note(by_asker, None)) if self.review.escalate_on_feedback else None
        recorded = await record_feedback(self._db, run_id, user, verdict, escalation=escalation)
        if recorded.escalated:
            await self.show_escalation(run_id)
        return recorded

    async def comment(self, run_id: str, user: str, comment: str) -> bool:
        """Keep a person's note on their 👎; False when they have no 👎 there."""
        return await comment_on(self._db, run_id, user, comment)

    async def renote_feedback(self, run_id: str, user: str, comment: str, *, note: FeedbackNote) -> None:
        """The reviewers of the run's pending feedback escalation read a person's note too (`note` words it)."""
        if not self.review.escalate_on_feedback:
            return
        try:
            run = await load_run(self._db, run_id)
            if run is None or not await note_on_feedback_escalation(self._db, run_id, note(run.asker == user, comment)):
                return
            escalated = await self.escalation_of(run_id)
        except StoreUnavailable as exc:
            log.warning("the reviewers' note on run %s was not updated: %s", run_id, exception_line(exc))
            return
        if escalated is not None and escalated.escalation.pending and escalated.escalation.posted:
            await tell(self.notifier.show_escalation, escalated, what=f"the review message of run {run_id}")

    # --- timed work --------------------------------------------------------------------------------------------

    async def announce_waiting(self, now: datetime) -> int:
        """Show every pending escalation no reviewer message was claimed for: runs escalated where nobody posts
        them (`parley ask`, a replica that died before posting, a Slack outage) reach the reviewers."""
        waiting = await stored_escalations.unannounced(self._db)
        for escalated in waiting:
            await self.escalate(escalated)
        return len(waiting)

    async def remind_due(self, now: datetime) -> int:
        """Nudge reviewers once about escalations pending longer than `remind_after_minutes` (those already past
        `expire_after_hours` are left to expiry: no reminder for a dead request)."""
        due = await stored_escalations.due_for_reminder(
            self._db,
            now=now,
            after=timedelta(minutes=self.review.remind_after_minutes),
            expiring=timedelta(hours=self.review.expire_after_hours),
        )
        handled = 0
        for escalation_id in due:
            claimed = await stored_escalations.claim_reminder(self._db, escalation_id, now)
            if claimed is None:
                continue  # decided meanwhile, or another replica reminded first
            handled += 1
            if claimed.escalation.posted:
                await tell(self.notifier.remind, claimed, what=f"the reminder for escalation {escalation_id}")
            else:
                await self.escalate(claimed)
        return handled

    async def expire_due(self, now: datetime) -> int:
        """Settle as `expired` every escalation pending longer than `expire_after_hours`."""
        hours = self.review.expire_after_hours
        handled = 0
        for run_id in await stored_escalations.expired_by(self._db, now - timedelta(hours=hours)):
            settled = await self.decide(
                run_id, Decision.EXPIRED, actor=SCHEDULER, reason=f"no decision within {hours:g} h", now=now
            )
            handled += settled.won  # a reviewer or another replica may have decided first
        return handled

    async def purge(self, now: datetime) -> int:
        """Drop raw tool payloads, resumable snapshots and ended runs' call intents older than `jobs.retention_days`."""
        return await purge(self._db, now=now, retention_days=self.jobs.retention_days)

    async def recover(self, now: datetime | None = None) -> int:
        """One recovery pass over what stopped processes left (`bot.core.recovery`)."""
        return await self._recovery.sweep(now)

    def _resubmit(self, run_id: str, ask: Ask, placeholder: str | None, taken_over: bool) -> None:
        assert self.pool is not None
        self.pool.submit(run_id, ask, placeholder=placeholder, taken_over=taken_over)

    def _tell(self, ask: Ask, problem: str) -> None:
        if self.pool is None:
            return
        self._in_background(self.pool.replies.tell(ask, problem))

    def _in_background(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)


def _answered_in(run: StoredRun, review_channel: str | None, review_ts: str | None) -> Ask:
    """The ask a resumed or retried run answers: its own conversation, or for a run asked outside one (the
    command line) the reviewer message's thread, so the reviewers see what their decision led to."""
    conversation = run.conversation
    if conversation is None and review_channel and review_ts:
        conversation = Conversation(run.workspace_id or "", review_channel, review_ts)
    return Ask(run.question, RunOrigin(run.source, run.asker, conversation), message=run.trigger_ts)
