"""A journaled run's writes (`RunWriter`): a step that makes calls carries the run's pending checkpoint and its
calls' intents in its own transaction; what no step carries is written alone, in order; a run this process does
not hold gets nothing of it. On both back-ends (the intents' statement is one INSERT … SELECT for all of them)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from sqlalchemy import event, func, select

from agent import CallIntent, DecisionKind, StepDecided, ToolCallRequest
from bot.store import Database, StoreRecorder
from bot.store.journal import saved_run
from bot.store.models import CallIntentRecord, Run, Step
from bot.store.run_writer import RunWriter
from tests.bot.store.recording import CLI
from tests.bot.store.test_owners import DEADLINE_S

ME = "host:1:me"
LONG_GRACE_S = 60.0  # a checkpoint handed over stays pending for the whole test unless a step takes it
CALLS = [
    ToolCallRequest("c1", "get_rate", {"pair": "EURUSD"}),
    ToolCallRequest("c2", "book_table", {"guests": 4}),
    ToolCallRequest("c3", "book_table", {"guests": 40}),  # held by a policy: not intended
]


async def running_run(db: Database, owner: str = ME) -> str:
    run_id = uuid.uuid4().hex
    async with db.sessions() as session, session.begin():
        session.add(
            Run(id=run_id, source="cli", asker="cli:tester", question="q", status="running", owner=owner,
                created_at=datetime.now(UTC))
        )  # fmt: skip
    return run_id


def decided(run_id: str, step: int, intended: list[str]) -> StepDecided:
    return StepDecided(run_id=run_id, step=step, decision=DecisionKind.TOOL_CALLS, tool_calls=CALLS, intended=intended)


def intents_of(*ids: str) -> list[CallIntent]:
    return [CallIntent.of(call) for call in CALLS if call.id in ids]


@contextmanager
def commits(db: Database) -> Iterator[list[None]]:
    """Every transaction committed on `db` while inside, one entry each."""
    seen: list[None] = []

    def count(_connection: object) -> None:
        seen.append(None)

    event.listen(db.engine.sync_engine, "commit", count)
    try:
        yield seen
    finally:
        event.remove(db.engine.sync_engine, "commit", count)


async def steps_and_intents(db: Database, run_id: str) -> tuple[int, list[str]]:
    async with db.sessions() as session:
        steps = await session.scalar(select(func.count()).select_from(Step).where(Step.run_id == run_id))
        ids = await session.scalars(select(CallIntentRecord.tool_call_id).where(CallIntentRecord.run_id == run_id))
        return steps or 0, sorted(ids.all())


async def test_run_writer_a_step_carries_the_pending_checkpoint_and_its_intents_in_one_commit(db: Database) -> None:
    run_id = await running_run(db)
    writer = RunWriter(db, run_id, ME, grace_s=LONG_GRACE_S)
    recorder = StoreRecorder(db, CLI, owner=ME, writer=writer)
    assert writer.checkpoint(1, {"after": 1})

    with commits(db) as committed:
        await recorder.record(decided(run_id, 2, ["c1", "c2"]))
        assert len(committed) == 1  # the step's row, the checkpoint and both intents
        assert await writer.intend(2, intents_of("c1", "c2"))
        assert len(committed) == 1  # confirmed, not written again

    saved = await saved_run(db, run_id)
    assert (saved.checkpoint, saved.step) == ({"after": 1}, 1)
    assert [(i.id, i.tool, i.arguments) for i in saved.intents] == [(c.id, c.name, c.arguments) for c in CALLS[:2]]
    assert await steps_and_intents(db, run_id) == (1, ["c1", "c2"])


async def test_run_writer_a_checkpoint_no_step_takes_is_written_alone_after_its_grace(db: Database) -> None:
    run_id = await running_run(db)
    writer = RunWriter(db, run_id, ME, grace_s=0.01)
    assert writer.checkpoint(1, {"after": 1})
    assert writer.checkpoint(2, {"after": 2})  # within the grace: only the newest is written

    deadline = asyncio.get_running_loop().time() + DEADLINE_S
    while (await saved_run(db, run_id)).checkpoint is None:
        assert asyncio.get_running_loop().time() < deadline, "the checkpoint was never written"
        await asyncio.sleep(0.01)
    saved = await saved_run(db, run_id)
    assert (saved.checkpoint, saved.step) == ({"after": 2}, 2)


async def test_run_writer_intents_no_step_carried_are_written_after_the_pending_checkpoint(db: Database) -> None:
    run_id = await running_run(db)
    writer = RunWriter(db, run_id, ME, grace_s=LONG_GRACE_S)
    assert writer.checkpoint(3, {"after": 3})

    with commits(db) as committed:
        assert await writer.intend(4, intents_of("c2"))  # a run taken over: its calls in flight, no StepDecided
        assert len(committed) == 2  # the checkpoint first, alone, then the intent

    saved = await saved_run(db, run_id)
    assert (saved.checkpoint, saved.step, [i.id for i in saved.intents]) == ({"after": 3}, 3, ["c2"])


async def test_run_writer_a_run_held_by_another_gets_its_step_row_and_nothing_else(db: Database) -> None:
    run_id = await running_run(db, owner="host:2:other")
    writer = RunWriter(db, run_id, ME, grace_s=LONG_GRACE_S)
    recorder = StoreRecorder(db, CLI, owner=ME, writer=writer)
    assert writer.checkpoint(1, {"after": 1})

    await recorder.record(decided(run_id, 2, ["c1"]))

    assert await steps_and_intents(db, run_id) == (1, [])
    assert (await saved_run(db, run_id)).checkpoint is None
    assert not await writer.intend(2, intents_of("c1"))  # its calls must not run
    assert not writer.checkpoint(2, {"after": 2})  # nor may the run go on here


async def test_run_writer_a_fenced_process_writes_no_intent_with_its_step(db: Database) -> None:
    run_id = await running_run(db)
    fenced = [True]
    writer = RunWriter(db, run_id, ME, fenced=lambda: fenced[0], grace_s=LONG_GRACE_S)
    recorder = StoreRecorder(db, CLI, owner=ME, writer=writer)
    assert writer.checkpoint(1, {"after": 1})

    await recorder.record(decided(run_id, 2, ["c1"]))

    assert await steps_and_intents(db, run_id) == (1, [])
    fenced[0] = False  # the heartbeat came back: the journal records them itself, after the checkpoint
    assert await writer.intend(2, intents_of("c1"))
    saved = await saved_run(db, run_id)
    assert (saved.checkpoint, [i.id for i in saved.intents]) == ({"after": 1}, ["c1"])


async def test_run_writer_a_checkpoint_is_stored_as_both_databases_accept_it(db: Database) -> None:
    run_id = await running_run(db)
    writer = RunWriter(db, run_id, ME, grace_s=LONG_GRACE_S)
    assert writer.checkpoint(1, {"said": "a\x00b", "ratio": float("nan"), "plain": ["as it is", 1.5]})

    assert await writer.intend(2, intents_of("c1"))  # after the checkpoint, written alone

    saved = await saved_run(db, run_id)
    assert saved.checkpoint == {"said": "a\ufffdb", "ratio": "NaN", "plain": ["as it is", 1.5]}
