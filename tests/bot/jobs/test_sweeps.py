"""The sweeps on a controlled clock: reminders, expiry, stale runs, purge; and two replicas sweeping at once."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from sqlalchemy import select

from bot.store import Database
from bot.store.models import AuditEvent, CallIntentRecord, EscalationRecord, Run, ToolCallRecord, Verdict
from bot.store.retention import PURGE_BATCH
from tests.bot.jobs.rows import (
    T0,
    MakeReplica,
    RecordingNotifier,
    add_audit,
    add_escalation,
    add_run,
    add_tool_call,
    add_verdict,
    audit,
    count,
    escalation_row,
    run_row,
    service,
)

SECOND = timedelta(seconds=1)


async def test_remind_sends_one_reminder_once_the_escalation_has_waited_long_enough(db: Database) -> None:
    notifier = RecordingNotifier()
    run_id, escalation_id = await add_escalation(db)
    wait = timedelta(minutes=30)

    assert await service(db, notifier).remind_due(T0 + wait - SECOND) == 0
    assert notifier.reminded == []

    assert await service(db, notifier).remind_due(T0 + wait + SECOND) == 1
    assert notifier.reminded == [escalation_id]
    assert notifier.runs[run_id].status == "awaiting_review"
    escalation = await escalation_row(db, escalation_id)
    assert (escalation.status, escalation.reminded_at) == ("pending", T0 + wait + SECOND)

    assert await service(db, notifier).remind_due(T0 + 2 * wait) == 0
    assert notifier.reminded == [escalation_id]
    [event] = await audit(db, "review_reminded")
    assert (event.run_id, event.actor, event.at) == (run_id, "parley:scheduler", T0 + wait + SECOND)
    assert event.detail["escalation_id"] == escalation_id


async def test_announce_hands_over_only_pending_escalations_without_a_reviewer_message(db: Database) -> None:
    notifier = RecordingNotifier()
    _, unposted = await add_escalation(db, review_channel=None, review_ts=None)
    _, claimed = await add_escalation(db, created_at=T0 + SECOND, review_ts=None)  # being posted by another
    _, decided = await add_escalation(
        db, status="rejected", decided_at=T0, decided_by="cli:carol", review_channel=None, review_ts=None
    )

    assert await service(db, notifier).announce_waiting(T0 + timedelta(minutes=1)) == 1
    assert notifier.announced == [unposted]
    assert decided not in notifier.announced and claimed not in notifier.announced
    assert (await escalation_row(db, unposted)).review_channel == "C0REVIEWS"  # posted: once across replicas
    assert (await escalation_row(db, unposted)).review_ts is not None


async def test_remind_leaves_decided_and_overdue_escalations_alone(db: Database) -> None:
    notifier = RecordingNotifier()
    _, decided = await add_escalation(db, status="approved", decided_at=T0, decided_by="U0REVIEWER")
    _, overdue = await add_escalation(db, created_at=T0 - timedelta(hours=30))  # expire's, not remind's
    assert await service(db, notifier).remind_due(T0 + timedelta(hours=1)) == 0
    assert notifier.reminded == []
    assert (await escalation_row(db, decided)).reminded_at is None
    assert (await escalation_row(db, overdue)).reminded_at is None


async def test_remind_goes_on_when_one_message_cannot_be_sent(db: Database) -> None:
    notifier = RecordingNotifier()
    _, first = await add_escalation(db)
    _, second = await add_escalation(db, created_at=T0 + SECOND)
    notifier.raises.add(first)
    assert await service(db, notifier).remind_due(T0 + timedelta(hours=1)) == 2
    assert notifier.reminded == [second]
    assert (await escalation_row(db, first)).reminded_at is not None  # claimed: never sent twice


async def test_expire_settles_an_undecided_escalation_once_after_its_hours(db: Database) -> None:
    notifier = RecordingNotifier()
    run_id, escalation_id = await add_escalation(db)
    hours = timedelta(hours=24)

    assert await service(db, notifier).expire_due(T0 + hours - SECOND) == 0
    assert (await escalation_row(db, escalation_id)).status == "pending"

    expired_at = T0 + hours + SECOND
    assert await service(db, notifier).expire_due(expired_at) == 1
    escalation = await escalation_row(db, escalation_id)
    assert (escalation.status, escalation.decided_by, escalation.decided_at) == (
        "expired",
        "parley:scheduler",
        expired_at,
    )
    assert escalation.decision_reason == "no decision within 24 h"
    run = await run_row(db, run_id)
    assert (run.status, run.finished_at) == ("expired", expired_at)
    [event] = await audit(db, "review_expired")
    assert (event.run_id, event.actor, event.from_status, event.to_status) == (
        run_id,
        "parley:scheduler",
        "awaiting_review",
        "expired",
    )
    assert await count(db, Verdict, Verdict.run_id == run_id, Verdict.decision == "expired") == 1
    assert notifier.expired_ids == [escalation_id]
    assert notifier.runs[run_id].status == "expired"

    assert await service(db, notifier).expire_due(expired_at + hours) == 0
    assert notifier.expired_ids == [escalation_id]


async def test_purge_drops_old_payloads_and_snapshots_and_nothing_that_was_decided(db: Database) -> None:
    notifier = RecordingNotifier()
    now = T0 + timedelta(days=40)
    cutoff = now - timedelta(days=30)
    old_run = await add_run(
        db, status="solved", started_at=T0, finished_at=T0, snapshot={"messages": ["old"]}, answer="It is 4 °C."
    )
    old_call = await add_tool_call(db, old_run, at=T0, raw={"temp_c": 4, "station": "Blindern"})
    recent_call = await add_tool_call(db, old_run, at=cutoff + SECOND, raw={"temp_c": 5}, step=2)
    await add_verdict(db, old_run, at=T0)
    await add_audit(db, old_run, at=T0, action="run_finished", from_status="running", to_status="solved")
    # Waiting for a person: its snapshot is what an approval resumes from.
    waiting, escalation_id = await add_escalation(db, created_at=T0)
    async with db.sessions() as session, session.begin():
        (await session.get(Run, waiting)).snapshot = {"messages": ["held"]}
    recent_run = await add_run(db, status="solved", finished_at=cutoff + SECOND, snapshot={"messages": ["new"]})
    audit_before = await count(db, AuditEvent)

    assert await service(db, notifier).purge(now) == 2  # one payload, one snapshot

    async with db.sessions() as session:
        old, recent = await session.get(ToolCallRecord, old_call), await session.get(ToolCallRecord, recent_call)
        assert old is not None and recent is not None
        assert (old.raw, old.raw_purged_at) == (None, now)
        assert old.observation == '{"ok": true, "data": {"temp_c": 4}}'  # what the model saw stays
        assert (recent.raw, recent.raw_purged_at) == ({"temp_c": 5}, None)
    assert await count(db, ToolCallRecord, ToolCallRecord.raw.is_(None)) == 1  # SQL NULL, not JSON null
    assert (await run_row(db, old_run)).snapshot is None
    assert (await run_row(db, old_run)).answer == "It is 4 °C."
    assert (await run_row(db, waiting)).snapshot == {"messages": ["held"]}
    assert (await run_row(db, recent_run)).snapshot == {"messages": ["new"]}
    assert await count(db, Verdict) == 1
    escalation = await escalation_row(db, escalation_id)
    assert (escalation.status, escalation.arguments) == ("pending", {"service": "api"})
    [event] = await audit(db, "payloads_purged")
    assert (event.run_id, event.actor, event.at) == (None, "parley:scheduler", now)
    assert (event.detail["tool_calls"], event.detail["snapshots"]) == (1, 1)
    assert await count(db, AuditEvent) == audit_before + 1

    assert await service(db, notifier).purge(now + SECOND) == 0
    assert len(await audit(db, "payloads_purged")) == 1  # nothing purged: no event


async def test_purge_deletes_old_call_intents_of_ended_runs_only(db: Database) -> None:
    now = T0 + timedelta(days=40)
    cutoff = now - timedelta(days=30)
    ended = await add_run(db, status="degraded", started_at=T0, finished_at=T0)
    running = await add_run(db, status="running", started_at=T0)  # a run this old resumes from them, if ever
    queued = await add_run(db, status="queued")
    async with db.sessions() as session, session.begin():
        session.add_all(
            CallIntentRecord(
                run_id=run_id, tool_call_id=call, step=1, tool="book_table", signature="s", arguments={}, started_at=at
            )
            for run_id, call, at in [
                (ended, "old_1", T0),
                (ended, "old_2", T0),
                (ended, "recent", cutoff + SECOND),
                (running, "old_running", T0),
                (queued, "old_queued", T0),
            ]
        )

    assert await service(db, RecordingNotifier()).purge(now) == 2

    async with db.sessions() as session:
        kept = (await session.scalars(select(CallIntentRecord.tool_call_id).order_by("tool_call_id"))).all()
    assert kept == ["old_queued", "old_running", "recent"]
    [event] = await audit(db, "payloads_purged")
    assert (event.detail["tool_calls"], event.detail["snapshots"], event.detail["call_intents"]) == (0, 0, 2)
    assert await service(db, RecordingNotifier()).purge(now + SECOND) == 0


async def test_purge_works_through_more_payloads_than_one_batch(db: Database) -> None:
    run_id = await add_run(db, status="solved", finished_at=T0)
    total = PURGE_BATCH * 2 + 7
    async with db.sessions() as session, session.begin():
        session.add_all(
            ToolCallRecord(
                run_id=run_id,
                step=1,
                tool_call_id=f"call_{n}",
                tool="get_weather",
                ok=True,
                observation="{}",
                raw={"n": n},
                at=T0,
            )
            for n in range(total)
        )
    assert await service(db, RecordingNotifier()).purge(T0 + timedelta(days=31)) == total
    assert await count(db, ToolCallRecord, ToolCallRecord.raw_purged_at.is_(None)) == 0
    assert await count(db, ToolCallRecord, ToolCallRecord.raw.is_(None)) == total
    [event] = await audit(db, "payloads_purged")
    assert event.detail["tool_calls"] == total


async def test_sweeps_on_two_replicas_at_once_handle_each_item_once(db: Database, replica: MakeReplica) -> None:
    one, two = replica(), replica()
    notifier = RecordingNotifier()
    reminders = [(await add_escalation(db, created_at=T0 + n * SECOND))[1] for n in range(8)]
    expiring = [(await add_escalation(db, created_at=T0 - timedelta(hours=25) + n * SECOND))[1] for n in range(8)]
    now = T0 + timedelta(hours=1)

    for sweep in ("remind_due", "expire_due"):
        handled = await asyncio.gather(
            getattr(service(one, notifier), sweep)(now),
            getattr(service(two, notifier), sweep)(now),
        )
        assert sum(handled) == 8, (sweep, handled)

    assert sorted(notifier.reminded) == sorted(reminders)
    assert sorted(notifier.expired_ids) == sorted(expiring)
    assert len(await audit(db, "review_reminded")) == 8
    assert len(await audit(db, "review_expired")) == 8
    assert await count(db, EscalationRecord, EscalationRecord.status == "expired") == 8


async def test_sweeps_work_on_the_embedded_sqlite_store(sqlite_store: tuple[Database, MakeReplica]) -> None:
    db, _ = sqlite_store
    notifier = RecordingNotifier()
    now = T0 + timedelta(hours=1)
    _, reminder = await add_escalation(db, created_at=T0)
    _, expiring = await add_escalation(db, created_at=now - timedelta(hours=25))
    old_run = await add_run(db, status="solved", finished_at=now - timedelta(days=31), snapshot={"m": 1})
    await add_tool_call(db, old_run, at=now - timedelta(days=31), raw={"temp_c": 4})

    assert await service(db, notifier).expire_due(now) == 1
    assert await service(db, notifier).remind_due(now) == 1
    assert await service(db, notifier).purge(now) == 2
    assert (notifier.reminded, notifier.expired_ids) == ([reminder], [expiring])
    assert (await run_row(db, old_run)).snapshot is None
    assert await count(db, ToolCallRecord, ToolCallRecord.raw.is_(None)) == 1
    [event] = await audit(db, "payloads_purged")
    assert event.run_id is None
