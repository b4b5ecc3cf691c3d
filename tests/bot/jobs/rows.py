"""Rows written straight through the models, read back around the code under test, a recording notifier, and
the run service and timed jobs built on them."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, select

from agent import RunResult
from bot.core import Escalated, JobsConfig, Posted, ReviewConfig, RunService, ShownEnd, StoredRun
from bot.jobs import Jobs
from bot.store import Database
from bot.store.models import AuditEvent, EscalationRecord, JobLease, Run, Step, ToolCallRecord, Verdict

MakeReplica = Callable[[], Database]

T0 = datetime(2031, 3, 4, 9, 0, tzinfo=UTC)  # the tests' clock starts here
REVIEW = ReviewConfig(remind_after_minutes=30, expire_after_hours=24)
JOBS = JobsConfig(interval_s=60, retention_days=30)
REVIEW_CHANNEL = "C0REVIEWS"


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


async def add_run(db: Database, *, status: str, created_at: datetime = T0, **fields: Any) -> str:
    run_id = fields.pop("id", None) or uuid.uuid4().hex
    async with db.sessions() as session, session.begin():
        session.add(
            Run(
                id=run_id,
                source="slack",
                workspace_id="T0JOBS",
                channel_id="C0JOBS",
                thread_ts="1800000000.000100",
                asker="U0ASKER",
                question="Is the deploy window open?",
                status=status,
                created_at=created_at,
                **fields,
            )
        )
    return run_id


async def add_escalation(db: Database, *, created_at: datetime = T0, **fields: Any) -> tuple[str, int]:
    """A run awaiting review with its pending escalation (a held action): (run id, escalation id)."""
    run_id = await add_run(db, status="awaiting_review", created_at=created_at, finished_at=created_at)
    columns: dict[str, Any] = {
        "kind": "held_action",
        "reason": "held_by_policy",
        "level": "L3",
        "status": "pending",
        "message": "deploy_service needs a person's approval",
        "tool": "deploy_service",
        "arguments": {"service": "api"},
        "held_calls": [{"id": "call_1", "tool": "deploy_service", "arguments": {"service": "api"}, "reason": "x"}],
        "review_channel": REVIEW_CHANNEL,  # posted: reviewers have its message (unless a test says otherwise)
        "review_ts": "1800000000.000900",
    }
    async with db.sessions() as session, session.begin():
        escalation = EscalationRecord(run_id=run_id, created_at=created_at, **(columns | fields))
        session.add(escalation)
        await session.flush()
        escalation_id = escalation.id
    return run_id, escalation_id


async def add_steps(db: Database, run_id: str, count: int, *, at: datetime = T0) -> None:
    async with db.sessions() as session, session.begin():
        for n in range(1, count + 1):
            session.add(Step(run_id=run_id, step=n, decision="tool_calls", at=at + timedelta(seconds=n)))


async def add_tool_call(db: Database, run_id: str, *, at: datetime, raw: Any = None, step: int = 1) -> int:
    async with db.sessions() as session, session.begin():
        call = ToolCallRecord(
            run_id=run_id,
            step=step,
            tool_call_id=f"call_{uuid.uuid4().hex[:12]}",
            tool="get_weather",
            arguments={"city": "Oslo"},
            ok=True,
            observation='{"ok": true, "data": {"temp_c": 4}}',
            raw=raw,
            raw_bytes=len(str(raw or "")),
            at=at,
        )
        session.add(call)
        await session.flush()
        return call.id


async def add_audit(db: Database, run_id: str | None, *, at: datetime, action: str, **fields: Any) -> None:
    async with db.sessions() as session, session.begin():
        session.add(AuditEvent(run_id=run_id, at=at, actor="test", action=action, **fields))


async def add_verdict(db: Database, run_id: str, *, at: datetime) -> None:
    async with db.sessions() as session, session.begin():
        session.add(Verdict(run_id=run_id, kind="critique", satisfied=True, reason="grounded", at=at))


async def run_row(db: Database, run_id: str) -> Run:
    async with db.sessions() as session:
        run = await session.get(Run, run_id)
    assert run is not None
    return run


async def escalation_row(db: Database, escalation_id: int) -> EscalationRecord:
    async with db.sessions() as session:
        escalation = await session.get(EscalationRecord, escalation_id)
    assert escalation is not None
    return escalation


async def lease_row(db: Database, name: str) -> JobLease:
    async with db.sessions() as session:
        lease = await session.get(JobLease, name)
    assert lease is not None
    return lease


async def audit(db: Database, action: str) -> list[AuditEvent]:
    async with db.sessions() as session:
        return list(
            (await session.scalars(select(AuditEvent).where(AuditEvent.action == action).order_by(AuditEvent.id))).all()
        )


async def count(db: Database, model: type[Any], *conditions: Any) -> int:
    async with db.sessions() as session:
        return int(await session.scalar(select(func.count()).select_from(model).where(*conditions)) or 0)


class RecordingNotifier:
    """A Notifier that writes down what it was told; `raises` makes it fail for chosen items. `shown` is what
    each run's thread shows as its end; `unreadable` threads cannot be read (as Slack down)."""

    review_channel = REVIEW_CHANNEL

    def __init__(self) -> None:
        self.shown: dict[str, ShownEnd] = {}
        self.unreadable: set[str] = set()
        self.announced: list[int] = []
        self.reminded: list[int] = []
        self.expired_ids: list[int] = []
        self.stale: list[str] = []
        self.runs: dict[str, StoredRun] = {}
        self.raises: set[int | str] = set()
        self.called = asyncio.Event()

    async def post_escalation(self, escalated: Escalated, channel: str) -> Posted | None:
        escalation = escalated.escalation
        self._told(escalation.id, escalated.run)
        self.announced.append(escalation.id)
        return Posted(channel, f"1800000001.{escalation.id:06d}")

    async def show_escalation(self, escalated: Escalated) -> None:
        self._told(escalated.escalation.id, escalated.run)

    async def remind(self, escalated: Escalated) -> None:
        self._told(escalated.escalation.id, escalated.run)
        self.reminded.append(escalated.escalation.id)

    async def decided(self, escalated: Escalated) -> None:
        self._told(escalated.escalation.id, escalated.run)
        self.expired_ids.append(escalated.escalation.id)

    async def resumed(self, run: StoredRun, result: RunResult) -> None:
        self._told(run.id, run)

    async def stale_ended(self, run: StoredRun) -> None:
        self._told(run.id, run)
        self.stale.append(run.id)

    async def shown_end(self, run: StoredRun) -> ShownEnd | None:
        if run.id in self.unreadable:
            raise ConnectionError(f"slack is down for the thread of {run.id}")
        return self.shown.get(run.id)

    def _told(self, item: int | str, run: StoredRun) -> None:
        self.called.set()
        self.runs[run.id] = run
        if item in self.raises:
            raise ConnectionError(f"slack is down for {item}")


def service(db: Database, notifier: RecordingNotifier | None = None, **options: Any) -> RunService:
    """The run service the timed jobs act through, telling `notifier`."""
    return RunService(db, notifier or RecordingNotifier(), review=REVIEW, jobs=JOBS, **options)


def jobs_of(db: Database, notifier: RecordingNotifier | None = None, config: JobsConfig = JOBS, **options: Any) -> Jobs:
    """The timed jobs of one process on `db`."""
    return Jobs(db, service(db, notifier), config, **options)
