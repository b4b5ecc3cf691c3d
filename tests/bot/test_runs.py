"""The application core in the middle: `RunService` over a real store (PostgreSQL), with a recording notifier and a
recording medium (`Replies`) at its edges, the engine real (replayed brains, scripted tools).

Every lifecycle path is driven through the service as a front end drives it: intake with its guards, the claim,
the run and its delivery, escalation and its one posting, decisions by the kind of escalation, retry, approval
of a held action resumed by the pool, and a worker's failure told for what it is.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from agent import EscalationKind, MemoryRecorder, OutcomeKind, Recorder, RunResult, RunStatus, TerminationReason
from bot.core import (
    Ask,
    Conversation,
    Decision,
    DecisionRefused,
    RunOrigin,
    RunService,
    RunSource,
    Stop,
)
from bot.store import Database
from bot.store.lifecycle import CONCLUDED, DECISIONS, ENDED, HELD, after_decision, may_decide
from bot.store.models import Run
from tests.agent.toolbox import eventually
from tests.bot.jobs.rows import RecordingNotifier, audit, count, run_row
from tests.bot.store.outcomes import answered, escalated, held
from tests.bot.store.postgres import emptied, session_database

THREAD = Conversation("T0CORE", "C0CORE", "1800000000.000100")


@pytest.fixture(scope="module")
def runs_pg_url() -> Iterator[str]:
    with session_database("runs") as url:
        yield url


@pytest.fixture
async def db(runs_pg_url: str) -> AsyncIterator[Database]:
    async with emptied(runs_pg_url) as store:
        yield store


@dataclass
class RecordedReply:
    """One run's reply as a medium would show it: what it was told, in order."""

    ask: Ask
    queued: bool
    placeholder: str | None
    seen: list[str] = field(default_factory=list)
    result: RunResult | None = None
    stopped: Stop | None = None
    broken: bool = False  # `working` raises, as a medium with a bug would
    shown: asyncio.Event | None = None  # the announcement waits for it (the run is claimed after it)
    watcher: Recorder = field(default_factory=MemoryRecorder)

    async def announce(self, ahead: int | None) -> str | None:
        self.seen.append("announced" if ahead is None else f"queued behind {ahead}")
        if self.shown is not None:
            await self.shown.wait()
        return "1800000000.000200"

    async def working(self) -> None:
        self.seen.append("working")
        if self.broken:
            raise RuntimeError("a bug in the medium")

    async def finish(self, result: RunResult) -> None:
        self.seen.append("finished")
        self.result = result

    async def stop(self, why: Stop, run_id: str) -> None:
        self.seen.append(f"stopped: {why}")
        self.stopped = why


@dataclass
class RecordedReplies:
    """A medium whose replies and notices are written down."""

    replies: list[RecordedReply] = field(default_factory=list)
    told: list[tuple[Ask, str]] = field(default_factory=list)
    broken: bool = False
    shown: asyncio.Event | None = None

    def reply(self, ask: Ask, *, queued: bool, placeholder: str | None) -> RecordedReply:
        self.replies.append(RecordedReply(ask, queued, placeholder, broken=self.broken, shown=self.shown))
        return self.replies[-1]

    async def tell(self, ask: Ask, problem: str) -> None:
        self.told.append((ask, problem))


@dataclass
class Core:
    service: RunService
    notifier: RecordingNotifier
    medium: RecordedReplies


@contextlib.asynccontextmanager
async def core(db: Database, agent: object, *, workers: int = 2) -> AsyncIterator[Core]:
    """The service as `parley serve` runs it: its owner holding runs, its pool answering in the medium."""
    notifier, medium = RecordingNotifier(), RecordedReplies()
    service = RunService(db, notifier, agent, replies=medium, workers=workers)  # type: ignore[arg-type]
    assert service.pool is not None
    await service.owner.start()
    service.pool.start()
    try:
        yield Core(service, notifier, medium)
    finally:
        await service.pool.stop()
        await service.owner.stop()


def asked(question: str, message: str = "1800000000.000150", *, thread: Conversation = THREAD) -> Ask:
    return Ask(question, RunOrigin(RunSource.SLACK, "U0ASKER", thread), message=message)


async def answered_reply(medium: RecordedReplies, index: int = 0) -> RecordedReply:
    await eventually(lambda: len(medium.replies) > index and medium.replies[index].result is not None)
    return medium.replies[index]


# --- the lifecycle table ------------------------------------------------------------------------------------


def test_lifecycle_statuses_are_held_or_ended_and_only_ended_ones_conclude() -> None:
    assert frozenset(RunStatus) == HELD | ENDED and not HELD & ENDED
    assert CONCLUDED < ENDED and RunStatus.AWAITING_REVIEW not in CONCLUDED


@pytest.mark.parametrize("kind", list(EscalationKind))
def test_lifecycle_decisions_follow_the_kind_of_escalation(kind: EscalationKind) -> None:
    assert {Decision.APPROVED, Decision.REJECTED} <= DECISIONS[kind]
    assert (Decision.RETRIED in DECISIONS[kind]) is (kind is EscalationKind.EXHAUSTED)  # only recovery ran out
    assert may_decide(kind, Decision.EXPIRED)
    approved = RunStatus.RUNNING if kind is EscalationKind.HELD_ACTION else RunStatus.APPROVED
    assert after_decision(kind, Decision.APPROVED) is approved
    assert after_decision(kind, Decision.REJECTED) is RunStatus.REJECTED
    # A 👎 nobody looked at leaves the answer as it stood; anything else that expires is expired.
    expired = None if kind is EscalationKind.FEEDBACK else RunStatus.EXPIRED
    assert after_decision(kind, Decision.EXPIRED) is expired


# --- intake, claim, run, delivery --------------------------------------------------------------------------


async def test_runs_take_runs_a_question_in_the_pool_and_delivers_its_answer(db: Database) -> None:
    agent, question = answered()
    async with core(db, agent) as parley:
        run_id = await parley.service.take(asked(question))
        reply = await answered_reply(parley.medium)

    assert run_id is not None and reply.result is not None and reply.result.run_id == run_id
    assert reply.seen == ["announced", "working", "finished"]
    run = await run_row(db, run_id)
    assert (run.status, run.reply_ts, run.trigger_ts) == (RunStatus.SOLVED, "1800000000.000200", "1800000000.000150")
    assert parley.notifier.announced == []  # nothing for reviewers


async def test_runs_take_records_a_redelivered_message_once(db: Database) -> None:
    agent, question = answered()
    async with core(db, agent) as parley:
        first = await parley.service.take(asked(question))
        again = await parley.service.take(asked(question))
        await answered_reply(parley.medium)

    assert first is not None and again is None
    assert await count(db, Run) == 1 and len(parley.medium.replies) == 1


async def test_runs_take_tells_a_question_the_engine_refuses_and_records_nothing(db: Database) -> None:
    agent, _ = answered()
    async with core(db, agent) as parley:
        assert await parley.service.take(asked("   ")) is None
        await eventually(lambda: bool(parley.medium.told))

    [(ask, problem)] = parley.medium.told
    assert ask.message == "1800000000.000150" and problem.startswith("I can't take this question")
    assert await count(db, Run) == 0


async def test_runs_take_a_follow_up_only_in_a_conversation_parley_was_asked_in(db: Database) -> None:
    agent, question = answered()
    elsewhere = Conversation("T0CORE", "C0CORE", "1800000009.000100")
    async with core(db, agent) as parley:
        assert await parley.service.take(asked(question, thread=elsewhere), follow_up=True) is None
        assert await parley.service.take(asked(question)) is not None
        await answered_reply(parley.medium)
        assert await parley.service.take(asked(question, "1800000000.000300"), follow_up=True) is not None
        await answered_reply(parley.medium, 1)

    assert parley.medium.told == []  # a reply nobody addressed to Parley is left alone, silently
    assert await count(db, Run) == 2


async def test_runs_claim_refuses_a_run_another_process_holds_or_that_ended_meanwhile(db: Database) -> None:
    service = RunService(db)
    now = datetime.now(UTC)
    async with db.sessions() as session, session.begin():
        for run_id, status, owner in (("theirs", "queued", "replica-x"), ("ended", "degraded", None)):
            session.add(
                Run(
                    id=run_id,
                    source="slack",
                    asker="U0ASKER",
                    question="q?",
                    status=status,
                    owner=owner,
                    created_at=now,
                )
            )
    assert await service.claim("theirs") is None
    assert await service.claim("ended") is None
    # Claimed before it starts: a conditional update of a queued run, so a question the store never took runs nothing.
    assert await service.claim("never-recorded") is None


# --- escalation, decisions, retry, resume ------------------------------------------------------------------


async def test_runs_an_escalated_run_is_posted_for_the_reviewers_once(db: Database) -> None:
    agent, question = held()
    async with core(db, agent) as parley:
        run_id = await parley.service.take(asked(question))
        await answered_reply(parley.medium)
        assert run_id is not None
        escalated_now = await parley.service.escalation_of(run_id)
        assert escalated_now is not None
        await parley.service.escalate(escalated_now)  # a second announcement (the job): already posted

    assert len(parley.notifier.announced) == 1
    escalation = (await parley.service.escalation_of(run_id)).escalation  # type: ignore[union-attr]
    assert (escalation.kind, escalation.review_channel) == (EscalationKind.HELD_ACTION, "C0REVIEWS")
    assert escalation.review_ts is not None and escalation.held_calls[0].tool == "transfer_funds"


async def test_runs_a_decision_its_kind_does_not_offer_is_refused_and_records_nothing(db: Database) -> None:
    agent, question = held()
    async with core(db, agent) as parley:
        run_id = await parley.service.take(asked(question))
        await answered_reply(parley.medium)
        assert run_id is not None
        with pytest.raises(DecisionRefused):
            await parley.service.retry(run_id, actor="slack:U0REVIEWER")

    assert (await parley.service.escalation_of(run_id)).escalation.pending  # type: ignore[union-attr]
    assert await audit(db, "review_retried") == []


async def test_runs_an_approved_held_action_is_resumed_by_the_pool_and_answers(db: Database) -> None:
    agent, question = held()
    async with core(db, agent) as parley:
        run_id = await parley.service.take(asked(question))
        await answered_reply(parley.medium)
        assert run_id is not None
        settled = await parley.service.approve_held(run_id, actor="slack:U0REVIEWER")
        resumed = await answered_reply(parley.medium, 1)

    assert settled.won and resumed.result is not None
    assert (resumed.result.run_id, resumed.result.outcome) == (run_id, OutcomeKind.ANSWERED)
    assert resumed.ask.conversation == THREAD  # answered in the run's own thread
    assert (await run_row(db, run_id)).status == RunStatus.APPROVED  # approved, then answered
    assert [event.action for event in await audit(db, "run_resumed")] == ["run_resumed"]


async def test_runs_a_retry_queues_the_question_again_and_the_pool_answers_it(db: Database) -> None:
    agent, question = escalated()
    async with core(db, agent) as parley:
        run_id = await parley.service.take(asked(question))
        await answered_reply(parley.medium)
        assert run_id is not None
        retried = await parley.service.retry(run_id, actor="slack:U0REVIEWER")
        again = await answered_reply(parley.medium, 1)

    assert retried.settled.won and retried.retry_id is not None
    assert again.result is not None and again.result.run_id == retried.retry_id
    assert (await run_row(db, retried.retry_id)).retry_of == run_id
    assert (await run_row(db, run_id)).status == RunStatus.DEGRADED  # its honest end stands
    decided = await parley.service.escalation_of(run_id)
    assert decided is not None and decided.escalation.status == "retried"
    assert parley.notifier.expired_ids == [decided.escalation.id]  # the decision, announced once


# --- failures outside the engine ---------------------------------------------------------------------------


async def test_runs_a_bug_in_the_worker_reads_as_an_internal_error_not_as_a_database_outage(db: Database) -> None:
    agent, question = answered()
    async with core(db, agent) as parley:
        parley.medium.broken = True
        run_id = await parley.service.take(asked(question))
        await eventually(lambda: bool(parley.medium.replies) and parley.medium.replies[0].stopped is not None)

    [reply] = parley.medium.replies
    assert reply.stopped is Stop.INTERNAL_ERROR  # never Stop.STORE_UNAVAILABLE: the store was fine
    assert run_id is not None
    run = await run_row(db, run_id)
    assert (run.status, run.termination_reason) == (RunStatus.DEGRADED, TerminationReason.IRRECOVERABLE_ERROR)
    assert "Something went wrong on Parley's side" in (run.answer or "")
    [event] = await audit(db, "run_failed")
    assert event.detail == {"reason": "a failure outside the engine"}


async def test_runs_a_run_that_cannot_be_read_is_an_internal_error_not_a_database_outage(db: Database) -> None:
    """The store answers, but what it holds does not read (a status this version does not know, written past
    the database's own check): that is a bug to look into, never "my database is unavailable"."""
    agent, question = answered()
    async with core(db, agent) as parley:
        parley.medium.shown = asyncio.Event()
        run_id = await parley.service.take(asked(question))
        async with db.engine.begin() as conn:
            await conn.exec_driver_sql("ALTER TABLE runs DROP CONSTRAINT ck_runs_status")
            await conn.exec_driver_sql(f"UPDATE runs SET status = 'paused' WHERE id = '{run_id}'")
        try:
            parley.medium.shown.set()  # announced: the worker claims it now
            await eventually(lambda: parley.medium.replies[0].stopped is not None)
        finally:
            async with db.engine.begin() as conn:
                await conn.exec_driver_sql(f"UPDATE runs SET status = 'degraded' WHERE id = '{run_id}'")
                await conn.exec_driver_sql(
                    "ALTER TABLE runs ADD CONSTRAINT ck_runs_status CHECK (status IN "
                    f"({', '.join(repr(status.value) for status in RunStatus)}))"
                )

    assert parley.medium.replies[0].stopped is Stop.INTERNAL_ERROR
