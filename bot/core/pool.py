"""RunPool: Parley's own bounded pool of agent runs, whatever the medium they are answered in.

Front ends only record a question (`RunService.take`); the service hands it here. The pool announces it in its
conversation at once (working, or queued behind others), claims it, runs the engine with the medium's live
progress, and delivers the answer — each through the medium's `Reply`. Whatever fails, the conversation is told
and the process keeps serving: a store that cannot be read is an outage (`StoreUnavailable`, and only that);
anything else is a bug, ended honestly as an internal error and logged with its traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

from agent import JournalRefused, Recorder, RunResult, StopRequest, TerminationReason, TraceEvent, exception_line
from bot.store import Ask, StoreUnavailable

if TYPE_CHECKING:
    from bot.core.service import RunService

log = logging.getLogger(__name__)

GOODBYE_TIMEOUT_S = 5.0  # stopping: how long each unfinished conversation is given to be told
# How often the stop requests of the runs in the pool are read (only while it has any): a person's stop, made on
# any replica, reaches the run within about this long.
STOP_POLL_S = 0.5


class Stop(StrEnum):
    """Why a run could not go on: what its conversation is told, in the medium's words."""

    INTERRUPTED = "interrupted"  # Parley was stopped (a restart, a deploy) first
    STORE_UNAVAILABLE = "store_unavailable"  # the store could not be read to start it
    INTERNAL_ERROR = "internal_error"  # a failure outside the engine (a bug)
    HELD_CHANGED = "held_changed"  # the approved calls are not those its saved state would run

    @property
    def reason(self) -> TerminationReason:
        """How the run ended, as its record and its conversation's end-of-run mark say."""
        return TerminationReason.IRRECOVERABLE_ERROR if self is Stop.INTERNAL_ERROR else TerminationReason.CANCELLED


class Reply(Protocol):
    """One run's presence in its conversation, as a medium shows it."""

    async def announce(self, ahead: int | None) -> str | None:
        """The run's first sign: working on it (`ahead` None), or queued behind `ahead` others. Returns the id
        of a message to record as the run's reply, or None (none posted, or the run's own placeholder)."""

    @property
    def watcher(self) -> Recorder:
        """Sees the run's trace events: the live progress."""

    async def working(self) -> None:
        """The run starts now."""

    async def finish(self, result: RunResult) -> None:
        """The run ended: its answer, partial answer, refusal or held notice replaces the progress."""

    async def stop(self, why: Stop, run_id: str) -> None:
        """The run cannot go on: the notice replaces the progress (marked as the run's end)."""


class Replies(Protocol):
    """A medium's replies (Slack's thread messages and streams)."""

    def reply(self, ask: Ask, *, queued: bool, placeholder: str | None) -> Reply:
        """The reply of a run asked by `ask`; with `placeholder`, the run goes on in that message of its own."""

    async def tell(self, ask: Ask, problem: str) -> None:
        """Say in the conversation that a question could not be taken, and why."""


class _Shown:
    """A run's live progress, shown only while this process may still hold the run: a replica cut off from the
    database long enough to be taken for dead shows nothing more of it (`RunService.may_show`), so the replica
    that took it over is the only one its conversation hears from."""

    def __init__(self, watcher: Recorder, service: RunService, run_id: str, since: float) -> None:
        self._watcher = watcher
        self._service = service
        self._run_id = run_id
        self._since = since

    async def record(self, event: TraceEvent) -> None:
        if await self._service.may_show(self._run_id, self._since):
            await self._watcher.record(event)


@dataclass
class _Job:
    run_id: str
    ask: Ask
    reply: Reply
    announced: asyncio.Task[None]
    resume_by: str | None = None  # a reviewer approved the held calls: resume the run instead of starting it
    taken_over: bool = False  # a running run whose process stopped: go on from its last saved step
    stop: StopRequest = field(default_factory=StopRequest)  # a person asked for it to stop
    taken: bool = False  # a worker (or, stopped while it waited, the stop itself) answers it


class RunPool:
    """`size` workers; each run is claimed, run and delivered by one of them."""

    def __init__(self, service: RunService, replies: Replies, *, size: int, grace_s: float = 10.0) -> None:
        self._service = service
        self.replies = replies
        self._size = size
        self._grace_s = grace_s
        self._closing = False
        self._idle = asyncio.Event()  # set while no worker answers a run
        self._idle.set()
        self.handed_over = 0  # runs this process gave to another (stopping), since it started
        self._queue: asyncio.Queue[_Job] = asyncio.Queue()
        self._workers: list[asyncio.Task[None]] = []
        self._busy = 0
        self._current: dict[str, _Job] = {}  # run id → the job a worker is answering
        self._jobs: dict[str, _Job] = {}  # run id → every job submitted and not answered yet
        self._watching: asyncio.Task[None] | None = None
        self._delivering: set[asyncio.Task[None]] = set()  # answers being delivered (a medium may throttle)

    @property
    def busy(self) -> int:
        return self._busy

    @property
    def waiting(self) -> int:
        return self._queue.qsize()

    def start(self) -> None:
        self._workers = [asyncio.create_task(self._work(), name=f"parley-worker-{n}") for n in range(self._size)]
        self._watching = asyncio.create_task(self._watch_stops(), name="parley-stop-requests")

    def stop_requested(self, run_id: str, by: str) -> bool:
        """A person asked for run `run_id` to stop: a run under way stops at once; one still waiting for a worker
        is answered now (it runs nothing). False when the run is not in this pool."""
        job = self._jobs.get(run_id)
        if job is None:
            return False
        job.stop.stop(by)
        if not job.taken:
            job.taken = True
            task = asyncio.create_task(self._answer_stopped(job), name=f"parley-stopped-{run_id}")
            self._delivering.add(task)
            task.add_done_callback(self._delivering.discard)
        return True

    async def _answer_stopped(self, job: _Job) -> None:
        try:
            await self._answer(job)
        except Exception:
            log.exception("stopped run %s failed outside the engine", job.run_id)
        finally:
            self._jobs.pop(job.run_id, None)

    async def _watch_stops(self) -> None:
        """Read the stop requests of the runs in the pool (made on this replica or another) while it has any."""
        while True:
            await asyncio.sleep(STOP_POLL_S)
            if not self._jobs:
                continue
            try:
                requested = await self._service.stops_requested(list(self._jobs))
            except Exception as exc:  # the store away, or a bug: the runs go on; the next look may see it
                log.warning("could not read the stop requests of %d run(s): %s", len(self._jobs), exception_line(exc))
                continue
            for run_id, by in requested.items():
                self.stop_requested(run_id, by)

    async def stop(self) -> None:
        """Stop the workers, handing over what they did not answer (SIGTERM, a deploy): the queued questions at
        once, the runs under way after the grace period if they are still going. Handed over, a run is released
        in the store (another replica, or this one's next start, takes it over and answers in its placeholder);
        its conversation is told nothing now, so it is never told twice."""
        self._closing = True
        queued = []
        while not self._queue.empty():
            waiting = self._queue.get_nowait()
            if not waiting.taken:  # one stopped while it waited is answered by its stop
                queued.append(waiting)
        watching, self._watching = self._watching, None
        if watching is not None:
            watching.cancel()
            await asyncio.gather(watching, return_exceptions=True)
        await self._hand_over(queued)
        with contextlib.suppress(TimeoutError):  # a worker leaves once its run ended: the queue is closed
            async with asyncio.timeout(self._grace_s):
                await self._idle.wait()
        await self._hand_over(list(self._current.values()))  # released first: their cancelled end is not written
        for worker in self._workers:
            worker.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        self._workers = []
        if self._delivering:  # answers already computed still reach their conversations (bounded in time)
            await asyncio.wait(self._delivering, timeout=GOODBYE_TIMEOUT_S * 2)

    async def _hand_over(self, jobs: list[_Job]) -> None:
        for job in jobs:
            try:
                async with asyncio.timeout(GOODBYE_TIMEOUT_S):
                    await job.announced  # its placeholder is where the replica that takes it over answers
                    await self._service.release(job.run_id)
            except Exception as exc:  # stopping: the owner's stopped row hands it over all the same
                log.warning("run %s could not be released: %s", job.run_id, exc)
            self.handed_over += 1
            log.info("run %s is handed over to another replica", job.run_id)

    def submit(
        self,
        run_id: str,
        ask: Ask,
        *,
        resume_by: str | None = None,
        placeholder: str | None = None,
        taken_over: bool = False,
    ) -> None:
        """Take a recorded question (or an approved held run to resume); returns at once (the announcement goes
        out in the background). With `placeholder` the run goes on in that message (a queued run taken over
        from a stopped replica: its placeholder becomes the progress, then the answer) instead of a new one."""
        # Queued when every worker is busy; `ahead` counts the runs already waiting before this one.
        ahead = self._queue.qsize() if self._busy + self._queue.qsize() >= self._size else None
        reply = self.replies.reply(ask, queued=ahead is not None, placeholder=placeholder)
        announced = asyncio.create_task(self._announce(run_id, reply, ahead))
        job = _Job(run_id, ask, reply, announced, resume_by, taken_over)
        self._jobs[run_id] = job
        self._queue.put_nowait(job)

    async def _announce(self, run_id: str, reply: Reply, ahead: int | None) -> None:
        message = await reply.announce(ahead)
        if message is not None:
            await self._service.keep_reply(run_id, message)

    async def _work(self) -> None:
        while not self._closing:
            job = await self._queue.get()
            if job.taken:  # stopped while it waited: answered already
                self._queue.task_done()
                continue
            job.taken = True
            self._busy += 1
            self._current[job.run_id] = job
            self._idle.clear()
            try:
                await self._answer(job)
            except asyncio.CancelledError:
                raise  # stays in `_current`: stop() tells its conversation
            except Exception:
                log.exception("run %s failed outside the engine", job.run_id)
            finally:
                self._busy -= 1
                self._queue.task_done()
                self._jobs.pop(job.run_id, None)
            self._current.pop(job.run_id, None)
            if not self._current:
                self._idle.set()

    async def _answer(self, job: _Job) -> None:
        await job.announced
        service = self._service
        try:
            claim = await service.claim(job.run_id, resuming=job.resume_by is not None or job.taken_over)
        except StoreUnavailable as exc:
            log.error("run %s: not started, the store is unavailable: %s", job.run_id, exc)
            await self._stopped(job, Stop.STORE_UNAVAILABLE, started=False)
            return
        except Exception:  # a bug, never an outage: said as such, and logged whole
            log.exception("run %s could not be started", job.run_id)
            await self._stopped(job, Stop.INTERNAL_ERROR, started=False)
            return
        if claim is None:
            return  # another replica's now, or ended while it waited (the service logged which)
        since = time.monotonic()
        watcher = _Shown(job.reply.watcher, service, job.run_id, since)
        try:
            await job.reply.working()
            if job.resume_by is not None:
                resumed = await service.resume(
                    job.run_id,
                    approved_by=job.resume_by,
                    watchers=[watcher],
                    thread_watched=True,
                    stop=job.stop,
                )
                if not isinstance(resumed, RunResult):  # not resumed: the saved state is not what was approved
                    self._deliver(job.run_id, job.reply.stop(Stop.HELD_CHANGED, job.run_id))
                    return
                result = resumed
            elif job.taken_over:
                result = await service.take_over(
                    job.run_id, job.ask, history=claim.history, watchers=[watcher], stop=job.stop
                )
            else:
                result = await service.ask(
                    job.ask.question,
                    job.ask.origin,
                    run_id=job.run_id,
                    history=claim.history,
                    watchers=[watcher],
                    stop=job.stop,
                )
        except asyncio.CancelledError:
            raise
        except JournalRefused as exc:  # another replica holds it now, or will: it answers there
            log.warning("run %s stopped here: %s", job.run_id, exc)
            await service.release(job.run_id)
            return
        except Exception:
            log.exception("run %s raised", job.run_id)
            await self._stopped(job, Stop.INTERNAL_ERROR, started=True)
            return
        if await service.may_deliver(job.run_id, since):
            self._deliver(job.run_id, job.reply.finish(result))

    async def _stopped(self, job: _Job, why: Stop, *, started: bool) -> None:
        """End the run in the store (now, or when the database is back) and tell its conversation."""
        try:
            await self._service.stop_run(job.run_id, why, started=started)
        except Exception:
            log.exception("run %s could not be ended in the store", job.run_id)
        self._deliver(job.run_id, job.reply.stop(why, job.run_id))

    def _deliver(self, run_id: str, delivery: Awaitable[None]) -> None:
        """Deliver in the background: a medium waiting out its update interval must not hold a worker."""
        task = asyncio.create_task(self._delivered(run_id, delivery), name=f"parley-answer-{run_id}")
        self._delivering.add(task)
        task.add_done_callback(self._delivering.discard)

    async def _delivered(self, run_id: str, delivery: Awaitable[None]) -> None:
        """End, then deliver, then mark delivered: a process that dies in between leaves the end to recovery."""
        try:
            await delivery
        except Exception:
            log.exception("the answer of run %s could not be delivered", run_id)
            return
        await self._service.delivered(run_id)
