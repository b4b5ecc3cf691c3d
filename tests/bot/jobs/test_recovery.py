"""Recovery on a controlled clock: a run is stale only when its owner's hold ran out, never because it waited;
a dead owner's queued run is taken over, its running run resumed (at most `MAX_RESUMES` times, then ended
honestly), and a run whose thread already shows its end is recorded as shown — each once, on PostgreSQL (two
replicas at once) and on SQLite."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from agent import RunStatus, TerminationReason
from bot.core import Ask, RunOwner, RunService, ShownEnd
from bot.core.recovery import MAX_RESUMES, Deliver, Recovery
from bot.store import Database, StoredRun
from bot.store.owners import beat, stop
from bot.wording import InThread
from tests.bot.jobs.rows import (
    T0,
    Clock,
    MakeReplica,
    RecordingNotifier,
    add_run,
    add_steps,
    add_tool_call,
    audit,
    run_row,
)

HEARTBEAT_S = 5.0
STALE_AFTER_S = 20.0
SECOND = timedelta(seconds=1)
GONE = T0 + timedelta(seconds=STALE_AFTER_S) + SECOND  # replica-a's hold (renewed last at T0) has run out


@dataclass
class RecordingTaker:
    """The worker pool of the recovering replica: what it was handed to answer."""

    taken: list[tuple[str, Ask, str | None]] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)  # of those, the running runs it goes on with

    def submit(self, run_id: str, ask: Ask, placeholder: str | None, taken_over: bool) -> None:
        self.taken.append((run_id, ask, placeholder))
        if taken_over:
            self.resumed.append(run_id)


@dataclass
class ClockedRecovery:
    """A replica's recovery, each pass at the test's clock (as its recovery loop passes at its own)."""

    recovery: Recovery
    clock: Clock

    async def sweep(self) -> int:
        return await self.recovery.sweep(self.clock())


def recovery_of(
    db: Database,
    owner: RunOwner,
    notifier: RecordingNotifier,
    taker: RecordingTaker | None,
    clock: Clock,
    *,
    deliver: Deliver | None = None,
) -> ClockedRecovery:
    """Recovery as the run service builds it: the service says where a queued run answers, the pool takes it."""
    service = RunService(db, notifier, owner=owner)
    submit = taker.submit if taker is not None else None
    recovery = Recovery(db, owner, notifier, ask_of=service.ask_of, submit=submit, deliver=deliver)
    return ClockedRecovery(recovery, clock)


async def replica_a_beat_at_t0(db: Database) -> None:
    """replica-a registered at T0 and then never renewed: it died right after."""
    assert await beat(db, "replica-a", host="a", pid=1, now=T0, hold_s=STALE_AFTER_S)


async def healthy_recovery(
    db: Database, notifier: RecordingNotifier, taker: RecordingTaker | None, *, at: timedelta = timedelta(0)
) -> tuple[ClockedRecovery, RunOwner, Clock]:
    """replica-b, whose heartbeats have reached the database without a miss since T0 - 1 min (+ `at`)."""
    clock = Clock(T0 - timedelta(minutes=1) + at)
    owner = RunOwner(db, heartbeat_s=HEARTBEAT_S, stale_after_s=STALE_AFTER_S, clock=clock, owner_id="replica-b")
    assert await owner.beat()
    return recovery_of(db, owner, notifier, taker, clock), owner, clock


async def beating_until(owner: RunOwner, clock: Clock, until: datetime) -> None:
    """Move the clock to `until`, the owner renewing its hold every heartbeat on the way (its last at `until`)."""
    while clock.now < until:
        clock.now = min(until, clock.now + timedelta(seconds=HEARTBEAT_S))
        assert await owner.beat()


async def test_recovery_leaves_the_runs_of_a_live_owner_alone_however_long_they_wait(db: Database) -> None:
    notifier, taker = RecordingNotifier(), RecordingTaker()
    recovery, owner, clock = await healthy_recovery(db, notifier, taker)
    await beating_until(owner, clock, T0)
    # replica-a keeps renewing: a queued run waiting for hours, a run running far past any budget.
    waiting = await add_run(db, status="queued", created_at=T0 - timedelta(hours=3), owner="replica-a")
    slow = await add_run(db, status="running", started_at=T0 - timedelta(hours=2), owner="replica-a")
    swept = 0
    while clock.now < T0 + timedelta(minutes=2):
        assert await beat(db, "replica-a", host="a", pid=1, now=clock.now, hold_s=STALE_AFTER_S)
        await beating_until(owner, clock, clock.now + timedelta(seconds=HEARTBEAT_S))
        assert owner.healthy_for(clock.now) >= STALE_AFTER_S  # armed: it would recover an orphan
        swept += await recovery.sweep()
    assert swept == 0
    assert [(await run_row(db, r)).status for r in (waiting, slow)] == ["queued", "running"]
    assert (notifier.stale, taker.taken) == ([], [])


async def test_recovery_takes_over_a_queued_run_whose_owner_died_in_its_own_placeholder(db: Database) -> None:
    notifier, taker = RecordingNotifier(), RecordingTaker()
    await replica_a_beat_at_t0(db)
    run_id = await add_run(db, status="queued", owner="replica-a", reply_ts="1800000000.000200")
    recovery, owner, clock = await healthy_recovery(db, notifier, taker)

    await beating_until(owner, clock, GONE - 2 * SECOND)  # replica-a's hold has not run out yet
    assert await recovery.sweep() == 0
    await beating_until(owner, clock, GONE)
    assert await recovery.sweep() == 1

    [(taken, ask, reply_ts)] = taker.taken
    assert (taken, reply_ts) == (run_id, "1800000000.000200")
    assert (ask.conversation.channel, ask.conversation.thread, ask.question) == (
        "C0JOBS",
        "1800000000.000100",
        "Is the deploy window open?",
    )
    run = await run_row(db, run_id)
    assert (run.status, run.owner) == ("queued", "replica-b")  # not ended: answered by replica-b
    [event] = await audit(db, "run_recovered")
    assert (event.actor, event.from_status, event.to_status) == ("parley:recovery", "queued", "queued")
    assert event.detail == {"left_by": "replica-a", "outcome": "taken_over", "by": "replica-b"}
    assert notifier.stale == []  # nothing told: its placeholder becomes its progress, then its answer
    assert await recovery.sweep() == 0  # replica-b is alive: the run is no orphan any more


async def test_recovery_resumes_a_running_run_whose_owner_died_in_its_own_placeholder(db: Database) -> None:
    notifier, taker = RecordingNotifier(), RecordingTaker()
    await replica_a_beat_at_t0(db)
    run_id = await add_run(db, status="running", started_at=T0, owner="replica-a", reply_ts="1800000000.000200")
    await add_steps(db, run_id, 2)
    recovery, owner, clock = await healthy_recovery(db, notifier, taker)

    await beating_until(owner, clock, GONE)
    assert await recovery.sweep() == 1

    assert taker.resumed == [run_id] and taker.taken[0][2] == "1800000000.000200"
    run = await run_row(db, run_id)
    assert (run.status, run.owner, run.resumes) == ("running", "replica-b", 1)
    [event] = await audit(db, "run_recovered")
    assert (event.from_status, event.to_status) == ("running", "running")
    assert event.detail == {
        "left_by": "replica-a",
        "outcome": "resumed",
        "by": "replica-b",
        "after_step": 0,  # its last saved step (none was saved here)
        "resume": 1,
    }
    assert notifier.stale == []  # nothing told: its placeholder goes on, then shows the answer
    assert await recovery.sweep() == 0


async def test_recovery_ends_a_running_run_resumed_too_often_with_the_steps_it_recorded(db: Database) -> None:
    """A run that stopped its process every time it was resumed: ended honestly, not resumed again."""
    notifier, taker = RecordingNotifier(), RecordingTaker()
    await replica_a_beat_at_t0(db)
    run_id = await add_run(db, status="running", started_at=T0, owner="replica-a", resumes=MAX_RESUMES)
    await add_steps(db, run_id, 2)
    await add_tool_call(db, run_id, at=T0 + SECOND, raw={"temp_c": 4})
    recovery, owner, clock = await healthy_recovery(db, notifier, taker)

    await beating_until(owner, clock, GONE)
    assert await recovery.sweep() == 1

    run = await run_row(db, run_id)
    assert (run.status, run.termination_reason, run.finished_at) == ("degraded", "cancelled", GONE)
    assert run.answer == InThread.STOPPED_AFTER_STEP.format(steps=2)
    assert (run.steps, run.tool_calls) == (2, 1)
    [event] = await audit(db, "run_recovered")
    assert (event.from_status, event.to_status, event.detail["outcome"]) == ("running", "degraded", "ended")
    assert notifier.stale == [run_id] and notifier.runs[run_id].answer == run.answer
    assert taker.taken == []  # never run again
    assert await recovery.sweep() == 0
    assert notifier.stale == [run_id]


async def test_recovery_records_a_run_as_its_thread_shows_it_and_says_nothing(db: Database) -> None:
    notifier, taker = RecordingNotifier(), RecordingTaker()
    await replica_a_beat_at_t0(db)
    answered = await add_run(db, status="running", started_at=T0, owner="replica-a")
    not_started = await add_run(db, status="queued", owner="replica-a")
    held = await add_run(db, status="running", started_at=T0, owner="replica-a")
    notifier.shown = {
        answered: ShownEnd(RunStatus.SOLVED, TerminationReason.ANSWERED, "47 × 12 = 564 [1]", "1800000000.000300"),
        not_started: ShownEnd(RunStatus.DEGRADED, TerminationReason.CANCELLED, "could not start", "1800000000.000400"),
        # Waiting for a reviewer, but no escalation is on record: nobody would ever decide.
        held: ShownEnd(RunStatus.AWAITING_REVIEW, TerminationReason.POLICY_VIOLATION, "held", "1800000000.000500"),
    }
    recovery, owner, clock = await healthy_recovery(db, notifier, taker)

    await beating_until(owner, clock, GONE)
    assert await recovery.sweep() == 3

    run = await run_row(db, answered)
    assert (run.status, run.termination_reason, run.answer, run.trace_complete) == (
        "solved",
        "answered",
        "47 × 12 = 564 [1]",
        False,
    )
    run = await run_row(db, not_started)
    assert (run.status, run.termination_reason, run.answer) == ("degraded", "cancelled", "could not start")
    assert taker.taken == []  # told it could not start: not started now either
    assert notifier.stale == [held]  # the only one whose thread was not told a final end
    assert (await run_row(db, held)).answer == InThread.STOPPED_BEFORE_A_STEP
    outcomes = {event.run_id: event.detail["outcome"] for event in await audit(db, "run_recovered")}
    assert outcomes == {answered: "as_shown", not_started: "as_shown", held: "ended"}


async def test_recovery_says_nothing_while_a_thread_cannot_be_read_and_goes_on_once_it_can(db: Database) -> None:
    notifier = RecordingNotifier()
    await replica_a_beat_at_t0(db)
    run_id = await add_run(db, status="running", started_at=T0, owner="replica-a")
    notifier.unreadable.add(run_id)
    recovery, owner, clock = await healthy_recovery(db, notifier, None)

    await beating_until(owner, clock, GONE)
    assert await recovery.sweep() == 0
    assert (await run_row(db, run_id)).status == "running" and notifier.stale == []
    notifier.unreadable.clear()
    assert await recovery.sweep() == 1
    assert notifier.stale == [run_id]


async def test_recovery_waits_until_its_own_heartbeat_has_held_for_the_stale_time(db: Database) -> None:
    """After an outage every hold has run out: the first replica back must not take the others for dead
    before they had the time to renew."""
    notifier = RecordingNotifier()
    await replica_a_beat_at_t0(db)
    run_id = await add_run(db, status="running", started_at=T0, owner="replica-a")
    back = T0 + timedelta(minutes=5)  # the database was away from T0 to here: every heartbeat missed
    recovery, owner, clock = await healthy_recovery(db, notifier, None, at=back - (T0 - timedelta(minutes=1)))

    await beating_until(owner, clock, back + timedelta(seconds=STALE_AFTER_S - 1))
    assert await recovery.sweep() == 0  # replica-b itself is back for less than the stale time
    assert await beat(db, "replica-a", host="a", pid=1, now=back + timedelta(seconds=3), hold_s=STALE_AFTER_S)
    await beating_until(owner, clock, back + timedelta(seconds=STALE_AFTER_S + 1))
    assert await recovery.sweep() == 0  # replica-a renewed meanwhile: alive
    assert (await run_row(db, run_id)).status == "running"


async def test_recovery_handles_the_runs_of_a_stopped_owner_and_ownerless_ones_at_once(db: Database) -> None:
    notifier = RecordingNotifier()
    await replica_a_beat_at_t0(db)
    await stop(db, "replica-a", now=T0 + SECOND)
    stopped = await add_run(db, status="running", started_at=T0, owner="replica-a")
    ownerless = await add_run(db, status="running", started_at=T0)  # left by a version without owners
    recovery, owner, clock = await healthy_recovery(db, notifier, None)
    await beating_until(owner, clock, T0 + 2 * SECOND)  # long before replica-a's hold would have run out
    assert await recovery.sweep() == 2
    assert sorted(notifier.stale) == sorted([stopped, ownerless])


async def test_recovery_on_two_replicas_at_once_handles_each_orphan_once(db: Database, replica: MakeReplica) -> None:
    notifier = RecordingNotifier()
    await replica_a_beat_at_t0(db)
    queued = [await add_run(db, status="queued", owner="replica-a") for _ in range(8)]
    running = [await add_run(db, status="running", started_at=T0, owner="replica-a") for _ in range(8)]
    takers, recoveries = [], []
    for name in ("replica-b", "replica-c"):
        store, clock = replica(), Clock(T0 - timedelta(minutes=1))
        owner = RunOwner(store, heartbeat_s=HEARTBEAT_S, stale_after_s=STALE_AFTER_S, clock=clock, owner_id=name)
        await beating_until(owner, clock, GONE)
        takers.append(RecordingTaker())
        recoveries.append(recovery_of(store, owner, notifier, takers[-1], clock))

    handled = await asyncio.gather(*(recovery.sweep() for recovery in recoveries))

    assert sum(handled) == 16, handled
    taken = [run_id for taker in takers for run_id, _, _ in taker.taken]
    assert sorted(taken) == sorted(queued + running)  # each once, by one of the two
    assert sorted(run_id for taker in takers for run_id in taker.resumed) == sorted(running)
    for taker, name in zip(takers, ("replica-b", "replica-c"), strict=True):
        assert [(await run_row(db, run_id)).owner for run_id, _, _ in taker.taken] == [name] * len(taker.taken)
    assert notifier.stale == []
    assert len(await audit(db, "run_recovered")) == 16
    assert [(await run_row(db, run_id)).resumes for run_id in running] == [1] * 8


async def test_recovery_works_on_the_embedded_sqlite_store(sqlite_store: tuple[Database, MakeReplica]) -> None:
    db, _ = sqlite_store
    notifier, taker = RecordingNotifier(), RecordingTaker()
    await replica_a_beat_at_t0(db)
    queued = await add_run(db, status="queued", owner="replica-a")
    running = await add_run(db, status="running", started_at=T0, owner="replica-a")
    spun = await add_run(db, status="running", started_at=T0, owner="replica-a", resumes=MAX_RESUMES)
    recovery, owner, clock = await healthy_recovery(db, notifier, taker)
    await beating_until(owner, clock, GONE)
    assert await recovery.sweep() == 3
    assert sorted(run_id for run_id, _, _ in taker.taken) == sorted([queued, running]) and taker.resumed == [running]
    assert notifier.stale == [spun]
    assert (await run_row(db, queued)).owner == "replica-b"


async def test_recovery_posts_an_end_its_dead_owner_recorded_but_never_delivered_once(
    db: Database, replica: MakeReplica
) -> None:
    """The replica recorded the run's end, then died before posting it: its thread shows no end, so one of two
    recovering replicas posts it (once), and it is marked delivered. One whose thread shows its end is only
    marked."""
    notifier = RecordingNotifier()
    await replica_a_beat_at_t0(db)
    fields = {"started_at": T0, "finished_at": T0, "owner": "replica-a", "termination_reason": "answered"}
    lost = await add_run(db, status="solved", answer="47 × 12 = 564 [1]", **fields)
    posted = await add_run(db, status="solved", answer="47 × 12 = 564 [1]", **fields)
    notifier.shown = {
        posted: ShownEnd(RunStatus.SOLVED, TerminationReason.ANSWERED, "47 × 12 = 564 [1]", "1800000000.000300")
    }
    delivered: list[tuple[str, str | None]] = []

    async def deliver(run: StoredRun) -> None:
        delivered.append((run.id, run.result.answer if run.result else None))

    recoveries = []
    for name in ("replica-b", "replica-c"):
        store, clock = replica(), Clock(T0 - timedelta(minutes=1))
        owner = RunOwner(store, heartbeat_s=HEARTBEAT_S, stale_after_s=STALE_AFTER_S, clock=clock, owner_id=name)
        await beating_until(owner, clock, GONE)
        recoveries.append(recovery_of(store, owner, notifier, None, clock, deliver=deliver))

    await asyncio.gather(*(recovery.sweep() for recovery in recoveries))

    assert delivered == [(lost, "47 × 12 = 564 [1]")]  # posted once, by one of the two
    assert [(await run_row(db, run_id)).delivered_at is not None for run_id in (lost, posted)] == [True, True]
    assert sum([await recovery.sweep() for recovery in recoveries]) == 0  # nothing left to deliver
    assert delivered == [(lost, "47 × 12 = 564 [1]")]


async def test_recovery_leaves_an_undelivered_end_of_a_live_owner_alone(db: Database) -> None:
    """A live replica is still posting its end (Slack slow): nobody else posts it."""
    notifier = RecordingNotifier()
    await replica_a_beat_at_t0(db)
    run_id = await add_run(db, status="solved", finished_at=T0, owner="replica-a", answer="564 [1]")
    delivered: list[str] = []

    async def deliver(run: StoredRun) -> None:
        delivered.append(run.id)

    clock = Clock(T0 - timedelta(minutes=1))
    owner = RunOwner(db, heartbeat_s=HEARTBEAT_S, stale_after_s=STALE_AFTER_S, clock=clock, owner_id="replica-b")
    recovery = recovery_of(db, owner, notifier, None, clock, deliver=deliver)
    await beating_until(owner, clock, GONE - 2 * SECOND)  # replica-a's hold has not run out
    assert await recovery.sweep() == 0
    assert delivered == [] and (await run_row(db, run_id)).delivered_at is None
