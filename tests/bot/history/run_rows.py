"""RunRows: runs written straight through the models (bulk rows for paging and filters), and read back.

Reading back goes around `bot.store.queries` on purpose: it is the oracle the command line is compared with.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, insert, select

from bot.store import connect
from bot.store.models import Run

BULK_QUESTION = "批量问题 bulk question: how did run {n} go?"


@dataclass(frozen=True)
class RunRow:
    id: str
    created_at: datetime
    status: str
    termination_reason: str | None
    asker: str


def bulk_run(created_at: datetime, **fields: Any) -> dict[str, Any]:
    """One finished run's columns; every row of a batch has the same keys (one executemany)."""
    run_id = fields.pop("id", None) or uuid.uuid4().hex
    row: dict[str, Any] = {
        "id": run_id,
        "source": "slack",
        "workspace_id": "T0TEST",
        "channel_id": "C0TEST",
        "thread_ts": None,
        "asker": "U0BULK",
        "question": BULK_QUESTION.format(n=run_id[:8]),
        "status": "solved",
        "termination_reason": "answered",
        "answer": "bulk answer [1]",
        "citations": [],
        "completed": [],
        "missing": [],
        "done_plan": [],
        "steps": 2,
        "llm_calls": 3,
        "tool_calls": 1,
        "retries": 0,
        "critique_rounds": 1,
        "tokens": 0,
        "brain": "bulk",
        "replayed": False,
        "config_hash": "",
        "limits": {},
        "created_at": created_at,
        "started_at": created_at,
        "finished_at": created_at,
        "duration_ms": 1200,
    }
    row.update(fields)
    return row


def newest_first(rows: Iterable[RunRow]) -> list[RunRow]:
    """The order `parley runs list` promises: created_at, then id, both descending."""
    return sorted(rows, key=lambda r: (r.created_at, r.id), reverse=True)


class RunRows:
    """Direct access to one store's `runs` table; remembers what it inserted so it can take it out again."""

    def __init__(self, url: str) -> None:
        self._url = url
        self.inserted: list[str] = []

    def insert(self, rows: Sequence[dict[str, Any]]) -> list[str]:
        asyncio.run(self._insert(rows))
        ids = [row["id"] for row in rows]
        self.inserted.extend(ids)
        return ids

    def all(self) -> list[RunRow]:
        return newest_first(asyncio.run(self._all()))

    def remove_inserted(self) -> None:
        if self.inserted:
            asyncio.run(self._delete(self.inserted))
            self.inserted.clear()

    async def _insert(self, rows: Sequence[dict[str, Any]]) -> None:
        db = connect(self._url)
        try:
            async with db.sessions() as session, session.begin():
                await session.execute(insert(Run), list(rows))
        finally:
            await db.aclose()

    async def _all(self) -> list[RunRow]:
        db = connect(self._url)
        try:
            async with db.sessions() as session:
                found = await session.execute(
                    select(Run.id, Run.created_at, Run.status, Run.termination_reason, Run.asker)
                )
                return [RunRow(*row) for row in found.all()]
        finally:
            await db.aclose()

    async def _delete(self, ids: Sequence[str]) -> None:
        db = connect(self._url)
        try:
            async with db.sessions() as session, session.begin():
                for start in range(0, len(ids), 500):
                    await session.execute(delete(Run).where(Run.id.in_(ids[start : start + 500])))
        finally:
            await db.aclose()
