"""RunWriter: one journaled run's checkpoints and intents, written in order, and as few times as possible.

The order that makes a resume exact: a step's intents are never in the store before the checkpoint of the step
before it (a survivor resumes from the last checkpoint, and takes the intents after it for the calls in flight).

- A checkpoint is handed over and the run goes on. It waits `grace_s` for the run's next step to carry it: a step
  that makes calls is written anyway (its `StepDecided` row, by the recorder), and carries the checkpoint and the
  calls' intents in the same transaction — one durable commit for all three. A checkpoint no step took within
  `grace_s` (the run's next LLM call takes longer) is written alone, in the background, after those before it.
- An intent is in the store before its call starts: carried by its step's transaction, or else written on its
  own, after every checkpoint handed over (`intend`).

Nothing waits for a checkpoint in the step's path, except a step that comes while one is being written alone:
that step's transaction waits for it (only when it is still under way), so the order holds.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from agent import CallIntent, exception_line
from bot.store.database import Database
from bot.store.errors import StoreUnavailable
from bot.store.journal import record_intents, save_checkpoint, write_checkpoint_and_intents, write_intents

log = logging.getLogger(__name__)

DEFAULT_CHECKPOINT_GRACE_S = 0.01  # how long a checkpoint waits to be carried by the run's next step


class RunWriter:
    """The store's side of the journal of `run_id`, held by `owner_id` (`fenced`: this process may not make
    calls now — its heartbeat has not reached the database for too long)."""

    def __init__(
        self,
        db: Database,
        run_id: str,
        owner_id: str,
        *,
        fenced: Callable[[], bool] = lambda: False,
        grace_s: float = DEFAULT_CHECKPOINT_GRACE_S,
    ) -> None:
        self._db = db
        self.run_id = run_id
        self.owner_id = owner_id
        self._fenced = fenced
        self._grace_s = grace_s
        self._saving: asyncio.Future[bool] | None = None  # the newest checkpoint written or being written
        self._unsaved: tuple[int, dict[str, Any]] | None = None  # the newest checkpoint, not written yet
        self._timer: asyncio.TimerHandle | None = None
        self._carried: tuple[int, frozenset[str]] = (-1, frozenset())  # intents a step's transaction carried

    def checkpoint(self, step: int, state: dict[str, Any]) -> bool:
        """Hand over the run after `step`, to be written with the next step or alone after `grace_s`; False when
        a checkpoint written before found the run no longer held (nothing is handed over)."""
        saving = self._saving
        if saving is not None and saving.done() and not saving.result():
            return False
        self._unsaved = (step, state)
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self._grace_s, self._write_alone)
        return True

    async def write_step(
        self, write: Callable[[AsyncSession], Awaitable[None]], step: int, intents: Sequence[CallIntent]
    ) -> None:
        """The step's own row (`write`), in one transaction with the checkpoint not written yet and the intents
        of the calls it makes — those two only while this process may make calls and still holds the run."""
        while True:  # the checkpoints being written alone first (one may start while waiting for another)
            before = self._saving
            ready = not self._fenced() and (before is None or await before)
            if self._saving is before:
                break
        unsaved, self._unsaved = self._unsaved, None
        self._stop_timer()
        if unsaved is not None and not ready:
            self._unsaved, unsaved = unsaved, None
            self._write_alone()
        settled: asyncio.Future[bool] | None = None  # the carried checkpoint: whether it found the run held
        if unsaved is not None:
            settled = self._saving = asyncio.get_running_loop().create_future()
        held = carries = False
        try:
            async with self._db.sessions() as session, session.begin():
                await write(session)
                if ready and unsaved is not None:
                    held = carries = await write_checkpoint_and_intents(
                        session, self.run_id, self.owner_id, unsaved, step, intents
                    )
                elif ready:
                    carries = await write_intents(session, self.run_id, self.owner_id, step, intents)
        except BaseException:
            if settled is not None and unsaved is not None:  # not written with the step after all: alone, now
                alone = asyncio.ensure_future(self._save(before, *unsaved))
                self._saving = alone
                alone.add_done_callback(lambda done: _settle(settled, done))
            raise
        if settled is not None:
            settled.set_result(held)
        if carries:
            self._carried = (step, frozenset(intent.id for intent in intents))

    async def intend(self, step: int, intents: Sequence[CallIntent]) -> bool:
        """The intents of `step` are in the store when this returns True: carried by the step's transaction, or
        written now, after every checkpoint handed over. False when `owner_id` no longer holds the run;
        `StoreUnavailable` when the database cannot take them."""
        carried_step, carried = self._carried
        if carried_step == step and {intent.id for intent in intents} <= carried:
            return True
        self._write_alone()
        if not await self._written():
            return False
        return await record_intents(self._db, self.run_id, self.owner_id, step, intents)

    def _write_alone(self) -> None:
        """Start writing the checkpoint not written yet, alone, after those before it."""
        self._stop_timer()
        unsaved, self._unsaved = self._unsaved, None
        if unsaved is not None:
            self._saving = asyncio.ensure_future(self._save(self._saving, *unsaved))

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def _save(self, before: asyncio.Future[bool] | None, step: int, state: dict[str, Any]) -> bool:
        """False when this process no longer holds the run; a checkpoint the database cannot take is skipped (a
        survivor would resume from the one before, and treat the calls since as in flight)."""
        if before is not None and not await before:
            return False
        try:
            return await save_checkpoint(self._db, self.run_id, self.owner_id, step, state)
        except StoreUnavailable as exc:
            log.warning("run %s: step %d was not saved (%s)", self.run_id, step, exception_line(exc))
            return True

    async def _written(self) -> bool:
        """The checkpoints being written alone, written; False when one found the run not this process's."""
        return self._saving is None or await self._saving


def _settle(settled: asyncio.Future[bool], done: asyncio.Future[bool]) -> None:
    """`settled` ends as `done` did."""
    if done.cancelled():
        settled.cancel()
    elif (exc := done.exception()) is not None:
        settled.set_exception(exc)
    else:
        settled.set_result(done.result())
