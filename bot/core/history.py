"""History: what front ends read of recorded runs — pages of runs, one run's trace, the escalations waiting, the
feedback given — as records, never rows. Read-only: every change goes through `RunService`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import Any

from bot.store import Database, Escalated, RunSummary, StoredRun, StoredTrace, queries
from bot.store.escalations import pending_escalations
from bot.store.feedback import Tally, tallies
from bot.store.queries import Page, RunFilter


class History:
    """Reads of the store for people (the Home tab, `/parley`, `parley runs`, `parley review list`)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def runs(self, filters: RunFilter, *, limit: int = 50, cursor: str | None = None) -> Page[RunSummary]:
        """A page of runs as a list shows them, newest first; `BadCursor` for a cursor the store never gave."""
        return await queries.list_runs(self._db, filters, limit=limit, cursor=cursor)

    async def stored_runs(self, filters: RunFilter, *, limit: int = 50, cursor: str | None = None) -> Page[StoredRun]:
        """A page of runs with their outcomes, newest first."""
        return await queries.list_stored_runs(self._db, filters, limit=limit, cursor=cursor)

    async def newer_runs(self, filters: RunFilter, cursor: str, *, limit: int) -> list[StoredRun] | None:
        """The `limit` runs just newer than `cursor`'s, newest first; None when the newest page is the one."""
        return await queries.newer_stored_runs(self._db, filters, cursor, limit=limit)

    async def trace(self, wanted: str, *, asker: str | None = None) -> StoredTrace:
        """One run by id or unique prefix, everything recorded about it. With `asker`, only that person's runs
        are searched (`RunNotFound` for anyone else's, as if it did not exist)."""
        run_id = await queries.resolve_run_id(self._db, wanted, asker=asker)
        return await queries.load_trace(self._db, run_id)

    async def run_id(self, wanted: str) -> str:
        """The whole id of the run `wanted` names (an id or a unique prefix)."""
        return await queries.resolve_run_id(self._db, wanted)

    async def tallies(self, run_ids: Iterable[str]) -> dict[str, Tally]:
        """👍 and 👎 per run, for the runs that have any."""
        return await tallies(self._db, run_ids)

    async def waiting(self, *, limit: int = 50, offset: int = 0) -> list[Escalated]:
        """Escalations waiting for a decision, oldest first."""
        return await pending_escalations(self._db, limit=limit, offset=offset)

    def export(self, filters: RunFilter) -> AsyncIterator[dict[str, Any]]:
        """Every matching run's exported columns, newest first."""
        return queries.export_rows(self._db, filters)
