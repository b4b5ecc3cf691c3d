"""RunOwner: this process as the holder of its queued and running runs, alive as long as its heartbeat says so.

Every run a process queues, starts or resumes is written with the process's id (`runs.owner`). While the
process holds any, it renews its hold in `run_owners` every `heartbeat_s`, for `stale_after_s`; a process
that dies stops renewing, its hold runs out, and a live replica recovers what it left (`bot.core.recovery`).
A run that waits long in a live queue is never stale. The run ends the database could not take when they
happened are kept here (`PendingEnds`) and written at the first heartbeat that reaches the database again.

The owner runs while anyone uses it (`holding()`, counted): `parley serve` for its whole life, `parley ask`
for its run. Once it stops, its row says so and the next use registers under a new id.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta

from agent import Backoff, exception_line
from bot.core.config import DEFAULT_HEARTBEAT_S, DEFAULT_STALE_AFTER_S, OwnershipConfig
from bot.store import Database, StoreUnavailable
from bot.store.owners import beat, stop
from bot.store.pending import PendingEnds

log = logging.getLogger(__name__)

MAX_WRITE_BACKOFF_S = 60.0
STOP_GRACE_S = 5.0  # stopping: how long the ends still kept are tried before they are given up


def local_clock() -> Callable[[], datetime]:
    """This process's wall clock; `PARLEY_CLOCK_OFFSET_S` shifts it (tests: a replica whose clock is wrong)."""
    offset = timedelta(seconds=float(os.environ.get("PARLEY_CLOCK_OFFSET_S", "0") or 0))
    return lambda: datetime.now(UTC) + offset


def process_id() -> str:
    """This process among the replicas: host, pid, and a random tag (pids repeat across restarts)."""
    return f"{socket.gethostname()[:80]}:{os.getpid()}:{secrets.token_hex(4)}"


class RunOwner:
    """The id runs are held under, the heartbeat that keeps the hold, and the run ends kept for the database."""

    def __init__(
        self,
        db: Database,
        *,
        heartbeat_s: float = DEFAULT_HEARTBEAT_S,
        stale_after_s: float = DEFAULT_STALE_AFTER_S,
        clock: Callable[[], datetime] | None = None,
        owner_id: str | None = None,
    ) -> None:
        self._db = db
        self.heartbeat_s = heartbeat_s
        self.stale_after_s = stale_after_s
        # An injected clock (tests) is used for the holds too; by default they are the database's clock, and this
        # process's own clock only measures its own heartbeats.
        self._injected = clock
        self._clock = clock or local_clock()
        self.id = owner_id or process_id()
        self.pending = PendingEnds(backoff=Backoff(heartbeat_s, max(heartbeat_s, MAX_WRITE_BACKOFF_S)))
        self._users = 0
        self._beating: asyncio.Task[None] | None = None
        self._healthy_since: datetime | None = None  # the first of the heartbeats that reached it since a miss
        self._last_beat: datetime | None = None
        self._reached = time.monotonic()  # the last time a heartbeat reached the database (this process's clock)
        self._fence_lifted: float | None = None  # when the last silence long enough to fence ended (monotonic)
        self._stopped = False

    @classmethod
    def configured(cls, db: Database, config: OwnershipConfig) -> RunOwner:
        return cls(db, heartbeat_s=config.heartbeat_s, stale_after_s=config.stale_after_s)

    def local_now(self) -> datetime:
        """This process's own clock (what `healthy_for` measures with)."""
        return self._clock()

    def healthy_for(self, now: datetime) -> float:
        """Seconds this process's heartbeats have reached the database without a miss: 0 after a miss, and
        once its own hold has run out (a process that may look dead itself judges nobody)."""
        if self._healthy_since is None or self._last_beat is None:
            return 0.0
        if (now - self._last_beat).total_seconds() >= self.stale_after_s:
            return 0.0
        return (now - self._healthy_since).total_seconds()

    def silent_for(self) -> float:
        """Seconds since this process's heartbeat last reached the database, by its own monotonic clock."""
        return time.monotonic() - self._reached

    @property
    def fenced(self) -> bool:
        """Silent for longer than `stale_after_s - heartbeat_s`: another replica may take this process for dead
        and take its runs over, so it makes no tool call and posts nothing for them until the database answers
        again (and then it defers to what recovery recorded)."""
        return self.silent_for() > self.stale_after_s - self.heartbeat_s

    def fenced_since(self, since: float) -> bool:
        """Whether this process has been fenced at any moment since `since` (its monotonic clock): fenced now, or
        a silence long enough to fence ended after `since`. Another replica may have taken its runs over then:
        what it shows of a run from then on must first be checked against the store."""
        return self.fenced or (self._fence_lifted is not None and self._fence_lifted > since)

    async def beat(self) -> bool:
        """Register or renew the hold, then write the ends kept for the database; False when it is away."""
        now = self._clock()
        sent = time.monotonic()  # the hold runs from when the beat was sent, not from when its answer came
        try:
            async with asyncio.timeout(self.heartbeat_s):
                host, pid = socket.gethostname()[:255], os.getpid()
                held_from = self._injected() if self._injected is not None else None  # None: the database's now()
                alive = await beat(self._db, self.id, host=host, pid=pid, now=held_from, hold_s=self.stale_after_s)
        except (StoreUnavailable, TimeoutError) as exc:
            if self._healthy_since is not None:
                log.warning("the heartbeat of %s did not reach the database: %s", self.id, _why(exc))
            self._healthy_since = None
            return False
        if not alive:  # marked stopped: only another id can hold runs now
            log.error("%s was marked stopped; the runs it holds are another process's to recover", self.id)
            self._healthy_since = None
            return False
        if self._healthy_since is None:
            self._healthy_since = now
        self._last_beat = now
        if sent - self._reached > self.stale_after_s - self.heartbeat_s:
            self._fence_lifted = time.monotonic()
        self._reached = sent
        if len(self.pending):
            await self.pending.flush()
        return True

    async def start(self) -> None:
        """Hold runs from now on: registered at once (if the database answers), renewed every heartbeat."""
        self._users += 1
        if self._users > 1:
            return
        if self._stopped:  # the old id's row says it stopped: a new hold starts under a new id
            self.id, self._stopped = process_id(), False
        await self.beat()
        self._beating = asyncio.create_task(self._keep_beating(), name=f"parley-heartbeat-{self.id}")

    async def stop(self) -> None:
        """Hold nothing any more (once the last user stops): the kept ends get one more chance, the row says
        stopped, so whatever is still queued or running under this id is recovered at once."""
        if self._users == 0:  # never started, or stopped already
            return
        self._users -= 1
        if self._users > 0:
            return
        beating, self._beating = self._beating, None
        if beating is not None:
            beating.cancel()
            await asyncio.gather(beating, return_exceptions=True)
        await self._last_writes()
        with contextlib.suppress(StoreUnavailable, TimeoutError):
            async with asyncio.timeout(STOP_GRACE_S):
                await stop(self._db, self.id, now=self._injected() if self._injected is not None else None)
        self._stopped = True
        self._healthy_since = None

    @contextlib.asynccontextmanager
    async def holding(self) -> AsyncIterator[RunOwner]:
        """Hold runs for the duration of the block (nested and concurrent blocks share one heartbeat)."""
        await self.start()
        try:
            yield self
        finally:
            await self.stop()

    async def _keep_beating(self) -> None:
        while True:
            await asyncio.sleep(self.heartbeat_s)
            try:
                await self.beat()
            except Exception:  # a bug must not stop the heartbeat: every run this process holds hangs on it
                log.exception("the heartbeat of %s failed", self.id)

    async def _last_writes(self) -> None:
        if not len(self.pending):
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(STOP_GRACE_S):
                await self.pending.flush(all_due=True)
        if len(self.pending):
            log.error(
                "stopping with %d run ends the database never took (runs %s): a live replica records them as "
                "their threads show them",
                len(self.pending),
                ", ".join(self.pending.run_ids),
            )


def _why(exc: BaseException) -> str:
    return exception_line(exc) if str(exc) else "no answer in time"
