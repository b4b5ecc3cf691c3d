"""Recovery: the runs a stopped process left queued or running, found by a live one and handled once.

Every heartbeat, once this process's own heartbeats have reached the database for `stale_after_s` without a
miss — so an outage that stopped every heartbeat is never taken for the death of the others, who renew as soon
as the database is back — the orphans (`bot.store.owners`) are handled. Each change is one conditional UPDATE
on the owner the run was found with, so two replicas recovering at once handle each run once:

- its thread already shows how it ended (the process told people, then died before the store took the end):
  recorded as shown, with an incomplete trace; nothing is posted.
- queued: nothing was done yet. This process takes it over and answers it, in its own placeholder.
- running: ended honestly, `degraded`/`cancelled`, with the steps it recorded — never run again, since a tool
  call in flight may have had its effect. The notice replaces the run's placeholder.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Protocol

from sqlalchemy import func, select

from agent import RunStatus
from bot.notifier import Notifier, tell
from bot.owner import RunOwner
from bot.review.service import current_escalation
from bot.store import Database, StoreUnavailable
from bot.store.conversations import SlackAsk, ask_of, load_run
from bot.store.models import Run, Step, ToolCallRecord
from bot.store.owners import end_orphan, orphans, record_shown_end, take_over
from bot.wording import InThread

log = logging.getLogger(__name__)

MAX_ORPHANS_PER_PASS = 200  # a pass stays short; whatever is left is the next heartbeat's
# What a thread may show as a run's end and the store take as it is; a run shown waiting for a reviewer has
# no escalation on record, so nobody would ever decide: it is ended honestly instead.
FINAL = (RunStatus.SOLVED, RunStatus.DEGRADED, RunStatus.REFUSED)


class RunTaker(Protocol):
    """Where a taken-over queued run goes to be answered (`parley serve`'s worker pool)."""

    def submit(self, run_id: str, ask: SlackAsk, *, resume_by: str | None = None, reply_ts: str | None = None) -> None:
        """Answer run `run_id`; with `reply_ts`, in that message of its thread (its placeholder)."""


class Recovery:
    """This process's share of recovering what stopped processes left: a pass every heartbeat."""

    def __init__(
        self,
        db: Database,
        owner: RunOwner,
        notifier: Notifier,
        taker: RunTaker | None = None,
        *,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self._db = db
        self._owner = owner
        self._notifier = notifier
        self._taker = taker
        self._clock = clock or (lambda: datetime.now(UTC))
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._keep_recovering(), name="parley-recovery")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def sweep(self, now: datetime | None = None) -> int:
        """One pass: how many orphans this process handled (none while its own heartbeat is not yet trusted)."""
        now = now or self._clock()
        if self._owner.healthy_for(now) < self._owner.stale_after_s:
            return 0
        handled = 0
        for run in await orphans(self._db, now=now, limit=MAX_ORPHANS_PER_PASS, seen_by=self._owner.id):
            try:
                handled += await self._recover(run, now)
            except StoreUnavailable as exc:
                log.warning("recovery stopped: the database is unavailable: %s", exc)
                break
        return handled

    async def _recover(self, run: Run, now: datetime) -> bool:
        try:
            shown = await self._notifier.shown_end(run)
        except Exception as exc:  # what people saw is unknown: say nothing now, ask again at the next pass
            log.warning("run %s was left by %s, but its thread cannot be read now: %s", run.id, run.owner, exc)
            return False
        if shown is not None and shown.status in FINAL:
            recorded = await record_shown_end(self._db, run, shown, now=now)
            if recorded:
                log.info("run %s, left by %s, is recorded as its thread shows it: %s", run.id, run.owner, shown.reason)
            return recorded
        if run.status == RunStatus.QUEUED and self._taker is not None:
            ask = await self._ask_of(run)
            if ask is not None:
                if not await take_over(self._db, run, self._owner.id, now=now):
                    return False
                log.info("run %s, queued by %s, is taken over by %s", run.id, run.owner, self._owner.id)
                self._taker.submit(run.id, ask, reply_ts=run.reply_ts)
                return True
        return await self._end(run, now)

    async def _end(self, run: Run, now: datetime) -> bool:
        async with self._db.sessions() as session:
            steps = await session.scalar(select(func.max(Step.step)).where(Step.run_id == run.id)) or 0
            calls = select(func.count()).select_from(ToolCallRecord).where(ToolCallRecord.run_id == run.id)
            tool_calls = await session.scalar(calls) or 0
        if run.status == RunStatus.QUEUED:
            answer = InThread.STOPPED_BEFORE_START
        else:
            answer = InThread.STOPPED_AFTER_STEP.format(steps=steps) if steps else InThread.STOPPED_BEFORE_A_STEP
        if not await end_orphan(self._db, run, answer, steps=steps, tool_calls=tool_calls, now=now):
            return False
        log.warning("run %s, left %s by %s, was ended: %s", run.id, run.status, run.owner, answer)
        ended = await load_run(self._db, run.id)
        if ended is not None:
            await tell(self._notifier.stale_ended, ended, what=f"the notice that run {run.id} was ended")
        return True

    async def _ask_of(self, run: Run) -> SlackAsk | None:
        """Where a queued run answers: its thread, or for a retried run asked on the command line the thread
        of the reviewer message that retried it; None when it has neither."""
        escalation = None
        if not (run.channel_id and run.thread_ts) and run.retry_of is not None:
            escalation, _ = await current_escalation(self._db, run.retry_of)
        ask = ask_of(run, escalation)
        return ask if ask.channel_id and ask.thread_ts else None

    async def _keep_recovering(self) -> None:
        while True:
            await asyncio.sleep(self._owner.heartbeat_s)
            try:
                await self.sweep()
            except Exception:  # a bug must not end recovery for the life of the process
                log.exception("recovering the runs of stopped processes failed")
