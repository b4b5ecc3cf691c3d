"""RunJournal: the engine's `Journal` on the store, for one run held by this process.

A checkpoint is written while the run goes on (its next LLM call takes far longer), and waited for before
anything else the journal writes, so they reach the store in order; one the database cannot take now is
skipped (the run goes on; a survivor would resume from the one before, and treat the calls since as in
flight). An intent is different: a call whose intent is not in the store must not run, so a store that cannot
take it — or a process fenced by its own heartbeat's silence, or one that no longer holds the run — refuses
the run (`JournalRefused`) and it stops here, for whoever holds it to finish.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from agent import CallIntent, JournalRefused, RunSnapshot, exception_line
from bot.core.owner import RunOwner
from bot.store import Database, StoreUnavailable
from bot.store.journal import record_intents, save_checkpoint

log = logging.getLogger(__name__)


class RunJournal:
    """Implements `agent.Journal` for `run_id`, held by `owner`."""

    def __init__(self, db: Database, run_id: str, owner: RunOwner) -> None:
        self._db = db
        self._run_id = run_id
        self._owner = owner
        self._saving: asyncio.Task[bool] | None = None  # the checkpoint being written

    async def checkpoint(self, snapshot: RunSnapshot) -> None:
        self._go_on()
        await self._saved()
        state = snapshot.model_dump(mode="json")
        self._saving = asyncio.create_task(self._save(snapshot.step, state), name=f"parley-checkpoint-{self._run_id}")

    async def intend(self, step: int, calls: Sequence[CallIntent]) -> None:
        self._go_on()
        await self._saved()
        try:
            recorded = await record_intents(self._db, self._run_id, self._owner.id, step, calls)
        except StoreUnavailable as exc:
            raise JournalRefused(
                f"the calls of run {self._run_id} could not be recorded: {exception_line(exc)}"
            ) from exc
        if not recorded:
            raise JournalRefused(f"run {self._run_id} is no longer held by {self._owner.id}")

    async def _save(self, step: int, state: dict[str, Any]) -> bool:
        """False when this process no longer holds the run; a checkpoint the database cannot take is skipped."""
        try:
            return await save_checkpoint(self._db, self._run_id, self._owner.id, step, state)
        except StoreUnavailable as exc:
            log.warning("run %s: step %d was not saved (%s)", self._run_id, step, exception_line(exc))
            return True

    async def _saved(self) -> None:
        """The checkpoint being written, written (`JournalRefused` when the run was not this process's)."""
        saving, self._saving = self._saving, None
        if saving is not None and not await saving:
            raise JournalRefused(f"run {self._run_id} is no longer held by {self._owner.id}")

    def _go_on(self) -> None:
        if self._owner.fenced:
            silent = self._owner.silent_for()
            raise JournalRefused(f"the heartbeat of {self._owner.id} has not reached the database for {silent:.1f} s")
