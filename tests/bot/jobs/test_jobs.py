"""Jobs: ticks through the lease, restarts, replicas, failing sweeps, and the real APScheduler firing."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

import pytest

from bot.core import RunService
from bot.jobs import SWEEPS, Sweep
from bot.store import Database, connect
from tests.bot.jobs.rows import (
    JOBS,
    T0,
    Clock,
    MakeReplica,
    RecordingNotifier,
    add_escalation,
    audit,
    escalation_row,
    jobs_of,
    lease_row,
    run_row,
)
from tests.bot.store.postgres import PG_PORT
from tests.fakes.tcp_proxy import TcpProxy

CONFIG = JOBS
remind = SWEEPS["remind"]
SECOND = timedelta(seconds=1)
EVERY_JOB = list(SWEEPS)


async def boom(service: RunService, now: datetime) -> int:
    raise RuntimeError("the sweep broke\non two lines")


async def test_jobs_run_due_runs_every_job_once_then_none_until_the_interval(db: Database) -> None:
    jobs = jobs_of(db, RecordingNotifier(), CONFIG, owner="replica-1")
    assert await jobs.run_due(T0) == dict.fromkeys(EVERY_JOB, 0)
    assert await jobs.run_due(T0 + SECOND) == dict.fromkeys(EVERY_JOB)
    for name in EVERY_JOB:
        lease = await lease_row(db, name)
        assert (lease.owner, lease.runs, lease.lease_until, lease.last_outcome) == (
            "replica-1",
            1,
            None,
            "ok: 0 handled",
        )
    assert await jobs.run_due(T0 + timedelta(seconds=CONFIG.interval_s)) == dict.fromkeys(EVERY_JOB, 0)


async def test_jobs_survive_a_restart_without_running_early_and_catch_up_after_downtime(
    jobs_pg_url: str, db: Database
) -> None:
    before = connect(jobs_pg_url)
    try:
        assert await jobs_of(before, RecordingNotifier(), CONFIG).run_due(T0) == dict.fromkeys(EVERY_JOB, 0)
    finally:
        await before.aclose()  # the process goes away

    after = connect(jobs_pg_url)
    try:
        restarted = jobs_of(after, RecordingNotifier(), CONFIG)
        assert await restarted.run_due(T0 + timedelta(seconds=30)) == dict.fromkeys(EVERY_JOB)
        # Down for hours: everything is overdue and runs at the first tick, once.
        assert await restarted.run_due(T0 + timedelta(hours=5)) == dict.fromkeys(EVERY_JOB, 0)
        assert await restarted.run_due(T0 + timedelta(hours=5) + SECOND) == dict.fromkeys(EVERY_JOB)
    finally:
        await after.aclose()
    assert [(await lease_row(db, name)).runs for name in EVERY_JOB] == [2] * len(EVERY_JOB)


async def test_jobs_on_two_replicas_at_the_same_instant_send_each_notice_once(
    db: Database, replica: MakeReplica
) -> None:
    notifier = RecordingNotifier()
    reminders = [(await add_escalation(db, created_at=T0 + n * SECOND))[1] for n in range(5)]
    expiring = [(await add_escalation(db, created_at=T0 - timedelta(days=2) + n * SECOND))[1] for n in range(5)]
    now = T0 + timedelta(hours=1)
    one = jobs_of(replica(), notifier, CONFIG, owner="replica-1")
    two = jobs_of(replica(), notifier, CONFIG, owner="replica-2")

    first, second = await asyncio.gather(one.run_due(now), two.run_due(now))

    for name in EVERY_JOB:  # each job ran on exactly one of them
        assert (first[name] is None) != (second[name] is None), (name, first, second)
    assert sorted(notifier.reminded) == sorted(reminders)
    assert sorted(notifier.expired_ids) == sorted(expiring)
    assert len(await audit(db, "review_reminded")) == 5
    assert len(await audit(db, "review_expired")) == 5


async def test_jobs_remind_and_expire_on_a_controlled_clock(db: Database) -> None:
    notifier = RecordingNotifier()
    clock = Clock(T0)
    jobs = jobs_of(db, notifier, CONFIG.model_copy(update={"interval_s": 1}), clock=clock)
    run_id, escalation_id = await add_escalation(db, created_at=T0)

    async def tick_at(when: datetime) -> dict[str, int | None]:
        clock.now = when
        return await jobs.run_due()

    assert (await tick_at(T0 + timedelta(minutes=30) - SECOND))["remind"] == 0
    assert (await tick_at(T0 + timedelta(minutes=30) + SECOND))["remind"] == 1
    assert notifier.reminded == [escalation_id]
    assert (await tick_at(T0 + timedelta(minutes=40)))["remind"] == 0
    assert notifier.reminded == [escalation_id]

    assert (await tick_at(T0 + timedelta(hours=24) - SECOND))["expire"] == 0
    assert (await tick_at(T0 + timedelta(hours=24) + SECOND))["expire"] == 1
    assert (await tick_at(T0 + timedelta(hours=25)))["expire"] == 0
    assert (await escalation_row(db, escalation_id)).status == "expired"
    assert (await run_row(db, run_id)).status == "expired"
    assert len(await audit(db, "review_reminded")) == 1
    assert len(await audit(db, "review_expired")) == 1
    assert (notifier.reminded, notifier.expired_ids) == ([escalation_id], [escalation_id])
    assert (await lease_row(db, "remind")).last_started_at == T0 + timedelta(hours=25)


async def test_jobs_a_sweep_that_raises_is_logged_and_released_and_the_others_run(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    notifier = RecordingNotifier()
    _, escalation_id = await add_escalation(db, created_at=T0)
    sweeps: dict[str, Sweep] = {"broken": boom, "remind": remind}
    jobs = jobs_of(db, notifier, CONFIG, sweeps=sweeps)

    with caplog.at_level(logging.ERROR, logger="bot.jobs.scheduler"):
        assert await jobs.run_due(T0 + timedelta(hours=1)) == {"broken": None, "remind": 1}

    assert notifier.reminded == [escalation_id]
    [line] = [r.getMessage() for r in caplog.records if r.name == "bot.jobs.scheduler"]
    assert line == "timed job broken failed: RuntimeError: the sweep broke on two lines"
    lease = await lease_row(db, "broken")
    assert (lease.lease_until, lease.last_outcome) == (None, "error: RuntimeError: the sweep broke on two lines")
    # Released: it is tried again at its next interval, not locked out.
    later = T0 + timedelta(hours=1, seconds=CONFIG.interval_s)
    assert await jobs.run_due(later) == {"broken": None, "remind": 0}
    assert (await lease_row(db, "broken")).runs == 2


async def test_jobs_fire_on_the_real_scheduler_and_a_broken_sweep_does_not_stop_it(db: Database) -> None:
    notifier = RecordingNotifier()
    now = datetime.now(UTC)
    _, escalation_id = await add_escalation(db, created_at=now - timedelta(hours=1))
    broken_ticks = 0
    seen_enough = asyncio.Event()

    async def broken(service: RunService, now: datetime) -> int:
        nonlocal broken_ticks
        broken_ticks += 1
        if broken_ticks >= 3 and notifier.reminded:
            seen_enough.set()  # it kept ticking after failing, and the other jobs did their work
        raise RuntimeError("broken on purpose")

    jobs = jobs_of(db, notifier, CONFIG.model_copy(update={"interval_s": 0.2}), sweeps={**SWEEPS, "broken": broken})
    jobs.start()
    try:
        async with asyncio.timeout(20):
            await seen_enough.wait()
    finally:
        await jobs.shutdown()
    assert notifier.reminded == [escalation_id]
    assert (await lease_row(db, "remind")).runs >= 2  # it went on ticking after handling the reminder
    assert (await lease_row(db, "broken")).last_outcome == "error: RuntimeError: broken on purpose"
    for name in [*SWEEPS, "broken"]:  # shut down cleanly: no tick holds a lease
        assert (await lease_row(db, name)).lease_until is None


async def test_jobs_shutdown_cancels_a_sweep_that_overstays_and_releases_its_lease(db: Database) -> None:
    started = asyncio.Event()

    async def stuck(service: RunService, now: datetime) -> int:
        started.set()
        await asyncio.Event().wait()  # never finishes on its own
        return 0

    # A lease longer than the interval: the sweep overstays into the shutdown, not past its lease.
    config = CONFIG.model_copy(update={"interval_s": 0.2})
    jobs = jobs_of(db, RecordingNotifier(), config, lease_s=60, sweeps={"stuck": stuck})
    jobs.start()
    try:
        async with asyncio.timeout(20):
            await started.wait()
    finally:
        await jobs.shutdown(grace_s=0.2)
    lease = await lease_row(db, "stuck")
    assert (lease.lease_until, lease.last_outcome) == (None, "cancelled: Parley was shutting down")


async def test_jobs_a_sweep_is_stopped_when_it_outlives_its_lease(db: Database) -> None:
    async def stuck(service: RunService, now: datetime) -> int:
        await asyncio.Event().wait()
        return 0

    jobs = jobs_of(db, RecordingNotifier(), CONFIG, lease_s=0.2, sweeps={"stuck": stuck, "remind": remind})
    assert await jobs.run_due(T0) == {"stuck": None, "remind": 0}
    lease = await lease_row(db, "stuck")
    assert (lease.lease_until, lease.last_outcome) == (None, "error: ran past its lease of 0.2 s and was stopped")


async def test_jobs_a_lease_whose_release_the_database_lost_is_taken_again_by_its_holder(db: Database) -> None:
    clock = Clock(T0)
    sweeping, finish = asyncio.Event(), asyncio.Event()

    async def slow(service: RunService, now: datetime) -> int:
        sweeping.set()
        await finish.wait()
        return 0

    async with TcpProxy(PG_PORT) as proxy:
        through_proxy = connect(f"postgresql://postgres@127.0.0.1:{proxy.port}/{db.url.database}")
        holder = jobs_of(
            through_proxy, RecordingNotifier(), CONFIG, clock=clock, owner="replica-1", sweeps={"slow": slow}
        )
        other = jobs_of(db, RecordingNotifier(), CONFIG, clock=clock, owner="replica-2", sweeps={"slow": slow})
        try:
            tick = asyncio.create_task(holder.run_due())
            await asyncio.wait_for(sweeping.wait(), 10)
            await proxy.close()  # the database drops while the sweep runs: the release cannot be written
            finish.set()
            assert await asyncio.wait_for(tick, 20) == {"slow": 0}
            lease = await lease_row(db, "slow")
            assert (lease.owner, lease.lease_until) == ("replica-1", T0 + timedelta(seconds=CONFIG.interval_s))

            await proxy.restore()
            clock.now = T0 + timedelta(seconds=CONFIG.interval_s - 1)  # due again, the lease not run out
            assert await other.run_due() == {"slow": None}
            assert await holder.run_due() == {"slow": 0}
        finally:
            await proxy.close()
            await through_proxy.aclose()
    lease = await lease_row(db, "slow")
    assert (lease.owner, lease.runs, lease.lease_until, lease.last_outcome) == ("replica-1", 2, None, "ok: 0 handled")


async def test_jobs_a_replica_whose_clock_runs_ten_minutes_ahead_does_not_run_a_job_again_early(
    db: Database, replica: MakeReplica, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = jobs_of(replica(), RecordingNotifier(), CONFIG, owner="replica-1", sweeps={"remind": remind})
    monkeypatch.setenv("PARLEY_CLOCK_OFFSET_S", "600")
    ahead = jobs_of(replica(), RecordingNotifier(), CONFIG, owner="replica-2", sweeps={"remind": remind})

    assert await one.run_due() == {"remind": 0}
    assert await ahead.run_due() == {"remind": None}  # due again by its own clock, not by the database's

    lease = await lease_row(db, "remind")
    assert (lease.owner, lease.runs, lease.lease_until) == ("replica-1", 1, None)
