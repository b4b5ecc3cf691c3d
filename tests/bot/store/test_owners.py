"""Run ownership: a process's hold registered, renewed and ended (`run_owners`), the heartbeat that keeps it,
and the run ends kept while the database is away (`PendingEnds`)."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime, timedelta

import pytest

from agent import Backoff
from bot.core import RunOwner
from bot.store import Database, StoreUnavailable, connect
from bot.store.models import OwnerRecord
from bot.store.owners import beat, stop
from bot.store.pending import PendingEnds
from tests.bot.store.postgres import PG_PORT
from tests.bot.store.recording import poll
from tests.fakes.tcp_proxy import TcpProxy

T0 = datetime(2031, 3, 4, 9, 0, tzinfo=UTC)
DEADLINE_S = 10


async def owner_row(db: Database, owner: str) -> OwnerRecord:
    async with db.sessions() as session:
        row = await session.get(OwnerRecord, owner)
    assert row is not None
    return row


async def test_owners_beat_registers_then_renews_and_a_stopped_owner_never_comes_back(db: Database) -> None:
    assert await beat(db, "host:1:aa", host="host", pid=1, now=T0, hold_s=20)
    later = T0 + timedelta(seconds=5)
    assert await beat(db, "host:1:aa", host="host", pid=1, now=later, hold_s=20)
    row = await owner_row(db, "host:1:aa")
    assert (row.started_at, row.beat_at, row.expires_at, row.stopped_at) == (
        T0,
        later,
        later + timedelta(seconds=20),
        None,
    )

    await stop(db, "host:1:aa", now=later + timedelta(seconds=1))
    assert not await beat(db, "host:1:aa", host="host", pid=1, now=later + timedelta(seconds=2), hold_s=20)
    row = await owner_row(db, "host:1:aa")
    assert (row.stopped_at, row.expires_at) == (later + timedelta(seconds=1),) * 2


async def test_owner_heartbeat_renews_the_hold_while_held_and_its_users_share_it(postgres_db: Database) -> None:
    owner = RunOwner(postgres_db, heartbeat_s=0.05, stale_after_s=1.0)
    first_id = owner.id
    async with owner.holding(), owner.holding():  # a run and the process: one heartbeat
        registered = (await owner_row(postgres_db, first_id)).beat_at

        async def renewed() -> bool:
            return (await owner_row(postgres_db, first_id)).beat_at > registered

        await poll(renewed, timeout_s=DEADLINE_S, what="the second heartbeat")
        assert owner.healthy_for(datetime.now(UTC)) > 0
    row = await owner_row(postgres_db, first_id)
    assert row.stopped_at is not None and row.expires_at == row.stopped_at

    async with owner.holding():  # held again: under a new id, the old one stays stopped
        assert owner.id != first_id
        assert (await owner_row(postgres_db, owner.id)).stopped_at is None


async def test_owner_heartbeat_that_misses_the_database_trusts_nothing_until_it_is_back(pg_name: str) -> None:
    async with TcpProxy(PG_PORT) as proxy:
        through_proxy = connect(f"postgresql://postgres@127.0.0.1:{proxy.port}/{pg_name}")
        owner = RunOwner(through_proxy, heartbeat_s=1.0, stale_after_s=3.0)
        try:
            assert await owner.beat()
            await proxy.close()  # the database is gone
            assert not await owner.beat()
            assert owner.healthy_for(datetime.now(UTC) + timedelta(seconds=1)) == 0
            await proxy.restore()
            assert await owner.beat()
            assert 0 < owner.healthy_for(datetime.now(UTC) + timedelta(seconds=1)) <= 1.5
            # Its own hold ran out: a process that may look dead itself judges nobody.
            assert owner.healthy_for(datetime.now(UTC) + timedelta(seconds=3)) == 0
        finally:
            await proxy.close()
            await through_proxy.aclose()


async def test_owner_silent_past_the_fencing_threshold_is_fenced_and_remembers_it_once_the_database_is_back(
    pg_name: str,
) -> None:
    """Fenced after `stale_after_s - heartbeat_s` of its own silence (its monotonic clock); once a beat reaches
    the database again it is not fenced any more, but what it shows of a run it held since before must first be
    checked against the store (`fenced_since`), while a run started after the silence needs no check."""
    async with TcpProxy(PG_PORT) as proxy:
        through_proxy = connect(f"postgresql://postgres@127.0.0.1:{proxy.port}/{pg_name}")
        owner = RunOwner(through_proxy, heartbeat_s=0.2, stale_after_s=0.6)
        try:
            assert await owner.beat()
            before = time.monotonic()
            assert not owner.fenced and not owner.fenced_since(before)
            await proxy.close()  # the database is gone

            async def fenced() -> bool:
                return owner.fenced

            await poll(fenced, timeout_s=DEADLINE_S, what="fenced after 0.4 s of silence")
            assert not await owner.beat() and owner.fenced and owner.fenced_since(before)
            await proxy.restore()
            assert await owner.beat()
            assert not owner.fenced  # heard again
            assert owner.fenced_since(before)  # but a run held since before may have been taken over meanwhile
            assert not owner.fenced_since(time.monotonic())  # a run it starts now was never at risk
            assert await owner.beat() and owner.fenced_since(before)  # a short gap does not clear what happened
        finally:
            await proxy.close()
            await through_proxy.aclose()


class Writes:
    """Kept writes that fail as told: `outage` (the database is away), `broken` (a bug), else succeed."""

    def __init__(self) -> None:
        self.outage = False
        self.broken: set[str] = set()
        self.done: list[str] = []

    def of(self, run_id: str):
        async def write() -> None:
            if self.outage:
                raise StoreUnavailable("cannot reach the database at test: refused")
            if run_id in self.broken:
                raise ValueError(f"a bug in the end of {run_id}")
            self.done.append(run_id)

        return write


async def test_pending_ends_are_kept_through_an_outage_and_written_in_order_when_it_is_over(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    pending = PendingEnds(backoff=Backoff(1.0, 8.0, jitter=0), clock=lambda: now[0])
    writes = Writes()
    assert await pending.write("r1", writes.of("r1"))
    writes.outage = True
    assert not await pending.write("r2", writes.of("r2"))
    assert not await pending.write("r3", writes.of("r3"))
    assert (pending.run_ids, writes.done) == (["r2", "r3"], ["r1"])

    assert await pending.flush() == 0  # still away: the first failure ends the pass
    assert await pending.flush() == 0  # r2 waits out its back-off (1 s), r3 is due but after r2 in line
    now[0] = 1.0
    writes.outage = False
    writes.broken.add("r3")
    with caplog.at_level(logging.ERROR, logger="bot.store.pending"):
        assert await pending.flush() == 1
    assert (pending.run_ids, writes.done) == ([], ["r1", "r2"])
    assert any("r3: its end cannot be written and is given up" in r.getMessage() for r in caplog.records)


async def test_pending_ends_keep_memory_bounded_and_say_which_end_was_given_up(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pending = PendingEnds(limit=3)
    writes = Writes()
    with caplog.at_level(logging.ERROR, logger="bot.store.pending"):
        for n in range(5):
            pending.keep(f"r{n}", writes.of(f"r{n}"))
    assert pending.run_ids == ["r2", "r3", "r4"]
    assert [r.getMessage().split(":")[0] for r in caplog.records] == ["run r0", "run r1"]
    assert await pending.flush() == 3 and writes.done == ["r2", "r3", "r4"]
