"""RunQueue: Parley's own bounded pool of agent runs (not bolt's listener threads).

Listeners only record a question and `submit` it; this pool announces it in the thread at once (working,
or queued behind others), runs the agent with live progress, and posts the answer. Whatever fails —
the LLM, the store, a bug — the thread is told, and the process keeps serving.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from slack_sdk.web.async_client import AsyncWebClient

from agent import RunStatus, TerminationReason, exception_line
from bot.runs import NotResumed, RunService
from bot.slack.blocks import SlackMessage, answer_messages, failure_message, progress_blocks, queued_message
from bot.slack.marks import mark_ended
from bot.slack.medium import Media, Medium, StreamingMode
from bot.slack.progress import SlackProgress
from bot.slack.reply import DEFAULT_MIN_INTERVAL_S, ThreadReply
from bot.slack.status import ThreadStatus
from bot.slack.stream import StreamReply
from bot.store import Database, RunOrigin, RunSource
from bot.store.conversations import SlackAsk, load_run, set_reply_ts, thread_history
from bot.store.database import patiently
from bot.wording import DATABASE_UNAVAILABLE, NOT_STARTED_DATABASE_UNAVAILABLE, InThread

log = logging.getLogger(__name__)

GOODBYE_TIMEOUT_S = 5.0


RunReply = ThreadReply | StreamReply  # the two media of a run's reply (`bot.slack.medium` chooses)


@dataclass
class _Job:
    run_id: str
    ask: SlackAsk
    reply: RunReply
    status: ThreadStatus
    announced: asyncio.Task[None]
    resume_by: str | None = None  # a reviewer approved the held calls: resume the run instead of starting it


class RunQueue:
    def __init__(
        self,
        db: Database,
        runs: RunService,
        client: AsyncWebClient,
        *,
        size: int,
        min_interval_s: float = DEFAULT_MIN_INTERVAL_S,
        streaming: StreamingMode = "auto",
    ) -> None:
        self._db = db
        self._runs = runs
        self._client = client
        self._size = size
        self._interval = min_interval_s
        self._media = Media(streaming)
        self._queue: asyncio.Queue[_Job] = asyncio.Queue()
        self._workers: list[asyncio.Task[None]] = []
        self._busy = 0
        self._current: dict[str, _Job] = {}  # run id → the job a worker is answering
        self._delivering: set[asyncio.Task[None]] = set()  # answers waiting out the update interval

    @property
    def busy(self) -> int:
        return self._busy

    @property
    def waiting(self) -> int:
        return self._queue.qsize()

    def start(self) -> None:
        self._workers = [asyncio.create_task(self._work(), name=f"parley-worker-{n}") for n in range(self._size)]

    async def stop(self) -> None:
        """Stop the workers; every question not answered yet is told so in its thread (bounded in time)."""
        unfinished = list(self._current.values())
        while not self._queue.empty():
            unfinished.append(self._queue.get_nowait())
        started = set(self._current)
        for worker in self._workers:
            worker.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        self._workers = []
        if self._delivering:  # answers already computed still reach their threads (bounded in time)
            await asyncio.wait(self._delivering, timeout=GOODBYE_TIMEOUT_S + self._interval)
        await asyncio.gather(*(self._say_interrupted(job, started=job.run_id in started) for job in unfinished))

    async def _say_interrupted(self, job: _Job, *, started: bool) -> None:
        """A queued run is ended here, and a started one the engine had no time to record as ended; then its
        thread is told."""
        try:
            async with asyncio.timeout(GOODBYE_TIMEOUT_S):
                # The engine records a cancelled run itself, unless it was cancelled before it could.
                await self._runs.cancel_stopped(job.run_id, InThread.INTERRUPTED, started=started)
                await job.announced
                await job.reply.finish(_ended(InThread.INTERRUPTED, job.run_id))
                await job.status.clear()
        except Exception as exc:  # shutting down: a thread we cannot reach is logged, not retried
            log.warning("could not tell the thread of run %s that it was interrupted: %s", job.run_id, exc)

    def submit(self, run_id: str, ask: SlackAsk, *, resume_by: str | None = None, reply_ts: str | None = None) -> None:
        """Take a recorded question (or an approved held run to resume); returns at once (the announcement
        is posted in the background). With `reply_ts` the run goes on in that message (a queued run taken
        over from a stopped replica: its placeholder becomes the progress, then the answer) instead of a new one."""
        # Queued when every worker is busy; `ahead` counts the runs already waiting before this one.
        ahead = self._queue.qsize() if self._busy + self._queue.qsize() >= self._size else None
        reply = self._reply(ask, reply_ts, queued=ahead is not None)
        status = ThreadStatus(self._client, self._media, ask.workspace_id, ask.channel_id, ask.thread_ts)
        announced = asyncio.create_task(self._announce(run_id, ask, reply, ahead))
        self._queue.put_nowait(_Job(run_id, ask, reply, status, announced, resume_by))

    def _reply(self, ask: SlackAsk, reply_ts: str | None, *, queued: bool) -> RunReply:
        """The run's reply in the medium its workspace supports; a run that shows a placeholder (queued, or
        taken over with its own) keeps that message and updates it."""
        match self._media.medium(ask.workspace_id, placeholder=queued or reply_ts is not None):
            case Medium.STREAM:
                return StreamReply(
                    self._client,
                    self._media,
                    workspace=ask.workspace_id,
                    asker=ask.asker,
                    channel=ask.channel_id,
                    thread_ts=ask.thread_ts,
                    min_interval_s=self._interval,
                )
            case Medium.UPDATES:
                return ThreadReply(
                    self._client, ask.channel_id, ask.thread_ts, ts=reply_ts, min_interval_s=self._interval
                )

    async def tell(self, ask: SlackAsk, problem: str) -> None:
        """Say in the thread that a question could not be taken (and why)."""
        reply = ThreadReply(self._client, ask.channel_id, ask.thread_ts, min_interval_s=self._interval)
        await reply.post(failure_message(problem, None))

    async def _announce(self, run_id: str, ask: SlackAsk, reply: RunReply, ahead: int | None) -> None:
        working = progress_blocks(ask.question, [], state="working")
        message = working if ahead is None else queued_message(ahead)
        ts = await reply.announce(message)  # None: not posted, or the run's own placeholder (already recorded)
        if ts is not None:
            try:
                await patiently(lambda: set_reply_ts(self._db, run_id, ts))
            except Exception as exc:  # the reply still works; only the record of its ts is missing
                log.warning("could not record the reply of run %s: %s", run_id, exc)

    async def _work(self) -> None:
        while True:
            job = await self._queue.get()
            self._busy += 1
            self._current[job.run_id] = job
            try:
                await self._answer(job)
            except asyncio.CancelledError:
                raise  # stays in `_current`: stop() tells its thread
            except Exception:
                log.exception("run %s failed outside the engine", job.run_id)
            finally:
                self._busy -= 1
                self._queue.task_done()
            self._current.pop(job.run_id, None)

    async def _answer(self, job: _Job) -> None:
        await job.announced
        try:
            run = await patiently(lambda: load_run(self._db, job.run_id))
            history = await patiently(lambda: thread_history(self._db, run)) if run is not None else []
        except Exception as exc:
            log.error("run %s: the store is unavailable: %s", job.run_id, exception_line(exc))
            await self._end_unstarted(job.run_id)
            self._deliver(job, _ended(DATABASE_UNAVAILABLE, job.run_id))
            return
        if run is not None and run.owner not in (None, self._runs.owner.id):
            # Another replica took it over while this one could not renew its hold (cut off from the
            # database): it is that replica's to answer now.
            log.warning("run %s is held by %s now: not started here", job.run_id, run.owner)
            return
        if job.resume_by is None and run is not None and run.status != RunStatus.QUEUED:
            # Ended while it waited (another replica recorded its end): its thread was told then; starting
            # it now would overwrite that honest ending.
            log.warning("run %s is %s, not queued any more: not started", job.run_id, run.status)
            return
        ask = job.ask
        origin = RunOrigin(RunSource.SLACK, ask.asker, ask.workspace_id, ask.channel_id, ask.thread_ts)
        progress = SlackProgress(job.reply, ask.question, job.status)
        await job.status.show(InThread.STATUS_WORKING)
        try:
            if job.resume_by is not None:
                result = await self._runs.resume(
                    job.run_id, approved_by=job.resume_by, watchers=[progress], thread_watched=True
                )
            else:
                result = await self._runs.ask(
                    ask.question, origin, run_id=job.run_id, history=history, watchers=[progress]
                )
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("run %s raised", job.run_id)
            self._deliver(job, _ended(InThread.SOMETHING_BROKE, job.run_id, TerminationReason.IRRECOVERABLE_ERROR))
            return
        if isinstance(result, NotResumed):
            self._deliver(job, _ended(InThread.HELD_CHANGED, job.run_id))
            return
        progress.state.close_checks()  # the run ended: what it checked last passed or ended it
        self._deliver(
            job,
            mark_ended(answer_messages(result, feedback=True), result.run_id, result.status, result.termination_reason),
        )

    async def _end_unstarted(self, run_id: str) -> None:
        """The run could not start: end it in the store too (now, or when the database is back)."""
        try:
            await self._runs.cancel_stopped(run_id, NOT_STARTED_DATABASE_UNAVAILABLE)
        except Exception:
            log.exception("run %s could not be ended in the store", run_id)

    def _deliver(self, job: _Job, messages: list[SlackMessage]) -> None:
        """Post the answer in the background: waiting out the update interval must not hold a worker."""
        task = asyncio.create_task(self._finish(job, messages), name=f"parley-answer-{job.run_id}")
        self._delivering.add(task)
        task.add_done_callback(self._delivering.discard)

    async def _finish(self, job: _Job, messages: list[SlackMessage]) -> None:
        try:
            await job.reply.finish(messages)
        except Exception:
            log.exception("the answer of run %s could not be posted", job.run_id)
        await job.status.clear()


def _ended(problem: str, run_id: str, reason: TerminationReason = TerminationReason.CANCELLED) -> list[SlackMessage]:
    """The notice that replaces the placeholder of a run that cannot go on, marked as its end."""
    return mark_ended([failure_message(problem, run_id)], run_id, reason.status, reason)
