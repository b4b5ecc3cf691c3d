"""Job leases: one replica per job per interval, a dead holder taken over, on PostgreSQL and on SQLite."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from bot.store import Database
from bot.store.leases import claim, release
from bot.store.owners import database_now
from tests.bot.jobs.rows import T0, MakeReplica, lease_row

INTERVAL_S = 60.0
LEASE_S = 300.0


async def test_lease_claimed_once_by_two_racing_replicas(lease_store: tuple[Database, MakeReplica]) -> None:
    _, make_replica = lease_store
    one, two = make_replica(), make_replica()
    for n in range(10):  # a fresh job each round: the row's creation races too
        won = await asyncio.gather(
            claim(one, f"job-{n}", "replica-1", now=T0, interval_s=INTERVAL_S, lease_s=LEASE_S),
            claim(two, f"job-{n}", "replica-2", now=T0, interval_s=INTERVAL_S, lease_s=LEASE_S),
        )
        assert sorted(won) == [False, True], f"round {n}: {won}"
        lease = await lease_row(one, f"job-{n}")
        assert lease.runs == 1
        assert lease.owner == ("replica-1" if won[0] else "replica-2")


async def test_lease_not_claimed_again_before_its_interval_then_again_after(
    lease_store: tuple[Database, MakeReplica],
) -> None:
    db, _ = lease_store
    assert await claim(db, "remind", "a", now=T0, interval_s=INTERVAL_S, lease_s=LEASE_S)
    assert not await claim(db, "remind", "b", now=T0 + timedelta(seconds=1), interval_s=INTERVAL_S, lease_s=LEASE_S)
    assert await release(db, "remind", "a", now=T0 + timedelta(seconds=2), outcome="ok: 3 handled")

    early = T0 + timedelta(seconds=INTERVAL_S - 1)
    assert not await claim(db, "remind", "b", now=early, interval_s=INTERVAL_S, lease_s=LEASE_S)
    due = T0 + timedelta(seconds=INTERVAL_S)
    assert await claim(db, "remind", "b", now=due, interval_s=INTERVAL_S, lease_s=LEASE_S)

    lease = await lease_row(db, "remind")
    assert (lease.owner, lease.runs, lease.last_started_at) == ("b", 2, due)
    assert lease.lease_until == due + timedelta(seconds=LEASE_S)
    assert (lease.last_finished_at, lease.last_outcome) == (T0 + timedelta(seconds=2), "ok: 3 handled")


async def test_lease_held_by_a_crashed_owner_is_taken_over_when_it_runs_out(
    lease_store: tuple[Database, MakeReplica],
) -> None:
    db, _ = lease_store
    assert await claim(db, "purge", "crashed", now=T0, interval_s=INTERVAL_S, lease_s=LEASE_S)
    # Due again by its interval, but the (dead) holder's lease has not run out yet.
    held = T0 + timedelta(seconds=LEASE_S - 1)
    assert not await claim(db, "purge", "survivor", now=held, interval_s=INTERVAL_S, lease_s=LEASE_S)
    after = T0 + timedelta(seconds=LEASE_S)
    assert await claim(db, "purge", "survivor", now=after, interval_s=INTERVAL_S, lease_s=LEASE_S)

    # The old holder coming back late cannot release what is no longer its lease.
    assert not await release(db, "purge", "crashed", now=after, outcome="ok: 0 handled")
    lease = await lease_row(db, "purge")
    assert (lease.owner, lease.lease_until, lease.last_outcome) == (
        "survivor",
        after + timedelta(seconds=LEASE_S),
        None,
    )
    assert await release(db, "purge", "survivor", now=after, outcome="ok: 0 handled")
    assert (await lease_row(db, "purge")).lease_until is None


async def test_lease_of_a_job_never_run_is_claimed_at_once(lease_store: tuple[Database, MakeReplica]) -> None:
    db, _ = lease_store
    assert await claim(db, "expire", "a", now=T0, interval_s=3600, lease_s=LEASE_S)
    lease = await lease_row(db, "expire")
    assert (lease.runs, lease.last_started_at, lease.last_finished_at) == (1, T0, None)


async def test_lease_its_own_holder_takes_again_while_others_wait_for_it_to_run_out(
    lease_store: tuple[Database, MakeReplica],
) -> None:
    db, _ = lease_store
    # The holder's release never reached the database (the connection dropped as it was sent).
    assert await claim(db, "announce", "a", now=T0, interval_s=INTERVAL_S, lease_s=LEASE_S)
    due = T0 + timedelta(seconds=INTERVAL_S)
    assert not await claim(db, "announce", "b", now=due, interval_s=INTERVAL_S, lease_s=LEASE_S)
    assert await claim(db, "announce", "a", now=due, interval_s=INTERVAL_S, lease_s=LEASE_S)
    # Retaking does not make a job due early: the interval still holds for its own holder.
    assert not await claim(db, "announce", "a", now=due + timedelta(seconds=1), interval_s=INTERVAL_S, lease_s=LEASE_S)
    lease = await lease_row(db, "announce")
    assert (lease.owner, lease.runs, lease.last_started_at, lease.lease_until) == (
        "a",
        2,
        due,
        due + timedelta(seconds=LEASE_S),
    )


async def test_lease_times_are_the_databases_when_no_time_is_given(db: Database) -> None:
    before = await database_now(db)
    assert await claim(db, "purge", "a", now=None, interval_s=INTERVAL_S, lease_s=LEASE_S)
    assert await release(db, "purge", "a", now=None, outcome="ok: 0 handled")
    after = await database_now(db)

    lease = await lease_row(db, "purge")
    assert before <= lease.last_started_at <= lease.last_finished_at <= after
    assert lease.lease_until is None
    # Due again only when the database's clock says so: now=None never asks this process's clock.
    assert not await claim(db, "purge", "b", now=None, interval_s=INTERVAL_S, lease_s=LEASE_S)
    assert await claim(db, "purge", "b", now=None, interval_s=0.0, lease_s=LEASE_S)
    lease = await lease_row(db, "purge")
    assert lease.owner == "b" and lease.lease_until - lease.last_started_at == timedelta(seconds=LEASE_S)
