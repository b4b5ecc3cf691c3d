"""RunJournal: the engine's `Journal` on the store, for one run held by this process.

The store's `RunWriter` writes the run's checkpoints and its calls' intents, in order: a checkpoint while the run
goes on (with the next step that makes calls, or alone), and a step's intents with the step's own row, which the
recorder writes anyway (it is given `writer`). Here the engine's calls become the writer's, and what may not go on
becomes `JournalRefused`: a call whose intent is not in the store must not run, so a store that cannot take it —
or a process fenced by its own heartbeat's silence, or one that no longer holds the run — refuses the run, and it
stops here, for whoever holds it to finish.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent import CallIntent, JournalRefused, RunSnapshot, exception_line
from bot.core.owner import RunOwner
from bot.store import Database, StoreUnavailable
from bot.store.run_writer import RunWriter


class RunJournal:
    """Implements `agent.Journal` for `run_id`, held by `owner`; `writer` goes to the run's recorder."""

    def __init__(self, db: Database, run_id: str, owner: RunOwner) -> None:
        self._run_id = run_id
        self._owner = owner
        self.writer = RunWriter(db, run_id, owner.id, fenced=lambda: owner.fenced)

    async def checkpoint(self, snapshot: RunSnapshot) -> None:
        self._go_on()
        if not self.writer.checkpoint(snapshot.step, snapshot.model_dump(mode="json")):
            raise self._lost()

    async def intend(self, step: int, calls: Sequence[CallIntent]) -> None:
        self._go_on()
        try:
            recorded = await self.writer.intend(step, calls)
        except StoreUnavailable as exc:
            raise JournalRefused(
                f"the calls of run {self._run_id} could not be recorded: {exception_line(exc)}"
            ) from exc
        if not recorded:
            raise self._lost()

    def _lost(self) -> JournalRefused:
        return JournalRefused(f"run {self._run_id} is no longer held by {self._owner.id}")

    def _go_on(self) -> None:
        if self._owner.fenced:
            silent = self._owner.silent_for()
            raise JournalRefused(f"the heartbeat of {self._owner.id} has not reached the database for {silent:.1f} s")
