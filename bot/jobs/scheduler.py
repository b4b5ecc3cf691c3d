"""Jobs: the timed jobs on APScheduler, each tick guarded by its lease so one replica runs each job.

Every `jobs.interval_s` each job ticks: claim its lease → run its sweep with `now = clock()` → release the
lease with the outcome. The lease is timed by the database's clock, so replicas whose clocks disagree still run
each job once per interval. A sweep that raises is logged in one line and released with the error; it stops
neither the other jobs nor the scheduler. `run_due` does one pass of every job through the same path, for
tests and the command line.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Mapping
from datetime import UTC, datetime

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from agent import exception_line
from bot.core import JobsConfig, RunService
from bot.core.owner import local_clock
from bot.jobs.sweeps import SWEEPS, Sweep
from bot.store import Database
from bot.store.leases import claim, release

log = logging.getLogger(__name__)

# A job is due again after 90 % of its interval: ticks jitter by milliseconds, and a tick that comes a
# hair early must not skip a whole interval. Two replicas still run a job at most once per 0.9 intervals.
DUE_TOLERANCE = 0.1
SHUTDOWN_GRACE_S = 10.0
MAX_OUTCOME_CHARS = 500


class Jobs:
    """The timed jobs of one process: announcements, reminders, expiry and payload purge."""

    def __init__(
        self,
        db: Database,
        service: RunService,
        config: JobsConfig | None = None,
        *,
        clock: Callable[[], datetime] | None = None,
        owner: str | None = None,
        lease_s: float | None = None,
        sweeps: Mapping[str, Sweep] = SWEEPS,
    ) -> None:
        self._db = db
        self._service = service
        self._config = config or JobsConfig()
        # The sweeps' time. An injected clock (tests) times the leases too; by default they take the database's
        # clock, so replicas whose clocks disagree still run each job once per interval.
        self._injected = clock
        self._clock = clock or local_clock()
        self.owner = owner or service.owner.id  # one id per process: the one its runs are held under
        # How long a tick may hold its job's lease: one interval by default, when the next tick comes anyway.
        # Its sweep is cut off there, so a lease outlives no sweep, and a replica that dies (or loses the
        # database) holding a lease delays that job by at most one interval.
        self._lease_s = lease_s if lease_s is not None else self._config.interval_s
        self._sweeps = dict(sweeps)
        self._scheduler: AsyncIOScheduler | None = None
        self._ticks: set[asyncio.Task[object]] = set()

    @property
    def names(self) -> list[str]:
        return list(self._sweeps)

    def start(self) -> None:
        """Schedule every job on the running event loop; the first ticks come at once."""
        if self._scheduler is not None:
            raise RuntimeError("the timed jobs are already started")
        interval = self._config.interval_s
        scheduler = AsyncIOScheduler(timezone=UTC, event_loop=asyncio.get_running_loop())
        first = datetime.now(UTC)
        for name in self._sweeps:
            scheduler.add_job(
                self._tick,
                "interval",
                seconds=interval,
                args=(name,),
                id=name,
                name=f"parley {name}",
                next_run_time=first,  # a job that fell due while Parley was down runs now (if its lease says so)
                coalesce=True,  # ticks missed while the loop was busy run once, not once each
                max_instances=1,
                misfire_grace_time=max(1, math.ceil(interval)),
            )
        scheduler.start()
        self._scheduler = scheduler

    async def shutdown(self, *, grace_s: float = SHUTDOWN_GRACE_S) -> None:
        """No new ticks; ticks under way get `grace_s` to finish, then are cancelled (releasing their leases)."""
        scheduler, self._scheduler = self._scheduler, None
        if scheduler is None:
            return
        scheduler.pause()
        running = set(self._ticks)
        if running:
            _, late = await asyncio.wait(running, timeout=grace_s)
            for task in late:
                task.cancel()
            if late:
                await asyncio.wait(late, timeout=grace_s)
        scheduler.shutdown(wait=False)
        await asyncio.sleep(0)  # AsyncIOScheduler shuts down on the loop's next turn

    async def run_due(self, now: datetime | None = None) -> dict[str, int | None]:
        """Run every job once, in order, through the lease: items handled per job, None when not run
        (another replica holds the lease, the job is not due, or it failed — see `job_leases`)."""
        return {name: await self._run(name, now) for name in self._sweeps}

    async def _tick(self, name: str) -> None:
        task = asyncio.current_task()
        assert task is not None  # APScheduler runs coroutine jobs as tasks
        self._ticks.add(task)
        try:
            await self._run(name, None)
        finally:
            self._ticks.discard(task)

    async def _run(self, name: str, now: datetime | None) -> int | None:
        started = now or self._clock()
        leased_at = started if now is not None or self._injected is not None else None  # None: the database's
        due_after_s = self._config.interval_s * (1 - DUE_TOLERANCE)
        try:
            claimed = await claim(
                self._db, name, self.owner, now=leased_at, interval_s=due_after_s, lease_s=self._lease_s
            )
        except Exception as exc:
            log.warning("timed job %s: could not claim its lease: %s", name, exception_line(exc))
            return None
        if not claimed:
            return None
        handled: int | None = None
        bound = asyncio.timeout(self._lease_s)
        try:
            async with bound:
                handled = await self._sweeps[name](self._service, started)
            outcome = f"ok: {handled} handled"
        except asyncio.CancelledError:
            await self._release(name, now, "cancelled: Parley was shutting down")
            raise
        except Exception as exc:
            if isinstance(exc, TimeoutError) and bound.expired():
                problem = f"ran past its lease of {self._lease_s:g} s and was stopped"
            else:
                problem = exception_line(exc)
            log.error("timed job %s failed: %s", name, problem)
            outcome = f"error: {problem}"
        await self._release(name, now, outcome)
        return handled

    def _lease_time(self, now: datetime | None) -> datetime | None:
        """A lease's time: the tick's own when it was given one, or the injected clock's (tests); else None, the
        database's clock."""
        if now is not None:
            return now
        return self._injected() if self._injected is not None else None

    async def _release(self, name: str, now: datetime | None, outcome: str) -> None:
        try:
            released = await release(
                self._db, name, self.owner, now=self._lease_time(now), outcome=outcome[:MAX_OUTCOME_CHARS]
            )
        except Exception as exc:  # the lease runs out by itself
            log.warning("timed job %s: could not release its lease: %s", name, exception_line(exc))
            return
        if not released:
            log.warning("timed job %s: its lease had run out and was taken over before it finished", name)
