"""Recovery: the runs a stopped process left queued or running, found by a live one and handled once.

A pass runs every heartbeat (`RunService.recover`), once this process's own heartbeats have reached the database
for `stale_after_s` without a miss — so an outage that stopped every heartbeat is never taken for the death of
the others, who renew as soon as the database is back. Each change is one conditional UPDATE on the owner the
run was found with (`bot.store.owners`), so two replicas recovering at once handle each run once:

- ended, but its end never reached its conversation (the process died in between): its thread is read first;
  an end it shows is marked delivered, otherwise the end is posted in the run's placeholder, then marked.
- its conversation already shows how it ended (the process told people, then died before the store took the
  end): recorded as shown, with an incomplete trace; nothing is posted.
- queued: nothing was done yet. This process takes it over and answers it, in its own placeholder.
- running: taken over and resumed from its last saved step, in its own placeholder (`RunService.take_over`): a
  tool call in flight runs again only if its tool is idempotent. A run taken over `MAX_RESUMES` times already
  (it stops its process every time), or one with nowhere to answer, is ended honestly, `degraded`/`cancelled`,
  with the steps it recorded. The notice replaces the run's placeholder.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import datetime

from agent import RunStatus
from bot.core.notifier import Notifier
from bot.core.owner import RunOwner
from bot.store import Ask, Database, StoredRun, StoreUnavailable
from bot.store.journal import claim_delivery, mark_delivered, undelivered
from bot.store.owners import (
    database_now,
    end_orphan,
    orphans,
    record_shown_end,
    resume_orphan,
    steps_done,
    take_over,
)
from bot.store.runs import load_run
from bot.wording import InThread

log = logging.getLogger(__name__)

MAX_RESUMES = 2  # a run that stopped its process this often is ended, not resumed again
MAX_ORPHANS_PER_PASS = 200  # a pass stays short; whatever is left is the next heartbeat's
# What a thread may show as a run's end and the store take as it is; a run shown waiting for a reviewer has
# no escalation on record, so nobody would ever decide: it is ended honestly instead.
FINAL = (RunStatus.SOLVED, RunStatus.DEGRADED, RunStatus.REFUSED)

# Where a queued run's answer goes (its conversation, or None when it has none) and who answers it there.
AskOf = Callable[[StoredRun], Awaitable[Ask | None]]
Submit = Callable[[str, Ask, str | None, bool], None]  # run id, ask, placeholder, taken over while running
Deliver = Callable[[StoredRun], Awaitable[None]]  # show an ended run's end in its conversation


class Recovery:
    """This process's share of recovering what stopped processes left."""

    def __init__(
        self,
        db: Database,
        owner: RunOwner,
        notifier: Notifier,
        *,
        ask_of: AskOf,
        submit: Submit | None = None,
        deliver: Deliver | None = None,
    ) -> None:
        self._db = db
        self._owner = owner
        self._notifier = notifier
        self._ask_of = ask_of
        self._submit = submit
        self._deliver = deliver

    async def sweep(self, now: datetime | None = None) -> int:
        """One pass: how many orphans this process handled (none while its own heartbeat is not yet trusted).
        Holds are compared at `now`, by default the database's clock: never this machine's against another's."""
        healthy = self._owner.healthy_for(now if now is not None else self._owner.local_now())
        if healthy < self._owner.stale_after_s:
            return 0
        handled = 0
        try:
            now = now if now is not None else await database_now(self._db)
            left = await orphans(self._db, now=now, limit=MAX_ORPHANS_PER_PASS, seen_by=self._owner.id)
            for run in left:
                handled += await self._recover(run, now)
            if self._deliver is not None:
                for run in await undelivered(self._db, now=now, seen_by=self._owner.id, limit=MAX_ORPHANS_PER_PASS):
                    handled += await self._finish_delivery(run, self._deliver)
        except StoreUnavailable as exc:  # an outage is one line, never a traceback
            log.warning("recovery stopped: the database is unavailable: %s", exc)
        return handled

    async def _recover(self, run: StoredRun, now: datetime) -> bool:
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
        if run.status == RunStatus.QUEUED and self._submit is not None:
            ask = await self._ask_of(run)
            if ask is not None:
                if not await take_over(self._db, run, self._owner.id, now=now):
                    return False
                log.info("run %s, queued by %s, is taken over by %s", run.id, run.owner, self._owner.id)
                self._submit(run.id, ask, run.reply_ts, False)
                return True
        resumable = shown is None and run.resumes < MAX_RESUMES  # a thread showing it held is not gone on with
        if run.status == RunStatus.RUNNING and self._submit is not None and resumable:
            ask = await self._ask_of(run)
            if ask is not None:
                if not await resume_orphan(self._db, run, self._owner.id, max_resumes=MAX_RESUMES, now=now):
                    return False
                log.warning("run %s, left running by %s, is resumed by %s", run.id, run.owner, self._owner.id)
                self._submit(run.id, ask, run.reply_ts, True)
                return True
        return await self._end(run, now)

    async def _finish_delivery(self, run: StoredRun, deliver: Deliver) -> bool:
        try:
            shown = await self._notifier.shown_end(run)
        except Exception as exc:  # what people saw is unknown: post nothing now, ask again at the next pass
            log.warning("run %s ended undelivered, but its thread cannot be read now: %s", run.id, exc)
            return False
        if shown is None:
            if not await claim_delivery(self._db, run, self._owner.id):
                return False  # another replica delivers it
            try:
                await deliver(run)
            except Exception as exc:
                log.warning("the end of run %s, left by %s, could not be posted: %s", run.id, run.owner, exc)
                return False
            log.warning("run %s, ended by %s, which died before posting, is delivered now", run.id, run.owner)
        await mark_delivered(self._db, run.id)
        return True

    async def _end(self, run: StoredRun, now: datetime) -> bool:
        steps, tool_calls = await steps_done(self._db, run.id)
        if run.status == RunStatus.QUEUED:
            answer = InThread.STOPPED_BEFORE_START
        else:
            answer = InThread.STOPPED_AFTER_STEP.format(steps=steps) if steps else InThread.STOPPED_BEFORE_A_STEP
        if not await end_orphan(self._db, run, answer, steps=steps, tool_calls=tool_calls, now=now):
            return False
        log.warning("run %s, left %s by %s, was ended: %s", run.id, run.status, run.owner, answer)
        ended = await load_run(self._db, run.id)
        if ended is not None:
            try:
                await self._notifier.stale_ended(ended)
            except Exception as exc:  # the next pass finds it undelivered and tries again
                log.warning("could not tell the thread of run %s that it was ended: %s", run.id, exc)
            else:
                await mark_delivered(self._db, run.id)
        return True
