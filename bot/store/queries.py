"""Queries for people: runs filtered and paged (keyset, so page 10,000 costs what page 1 does), one run's
whole trace, and a stream of runs for export — all read back as records (`bot.store.records`)."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Generic, Protocol, TypeVar

from sqlalchemy import Select, exists, select, tuple_, union_all

from bot.store.database import Database
from bot.store.errors import AmbiguousRun, BadCursor, RunNotFound
from bot.store.models import AuditEvent, EscalationRecord, FeedbackRecord, Run, Step, ToolCallRecord, Verdict
from bot.store.records import RunSummary, StoredRun, StoredTrace
from bot.store.rows import (
    STORED_COLUMNS,
    SUMMARY_COLUMNS,
    columns_of,
    run_summary,
    stored_audit_event,
    stored_escalation,
    stored_feedback,
    stored_run,
    stored_step,
    stored_tool_call,
    stored_verdict,
)
from bot.store.vocabulary import RunSource

MIN_PREFIX = 6
# What an export writes of each run, in this order.
EXPORT_COLUMNS = (
    "id", "created_at", "finished_at", "source", "workspace_id", "channel_id", "thread_ts", "asker", "question",
    "status", "termination_reason", "answer", "steps", "llm_calls", "tool_calls", "retries", "critique_rounds",
    "tokens", "duration_ms", "brain", "replayed", "config_hash", "completed", "missing", "citations", "escalation",
)  # fmt: skip
Entry = TypeVar("Entry", RunSummary, StoredRun)


@dataclass(frozen=True)
class RunFilter:
    statuses: Sequence[str] = ()
    reasons: Sequence[str] = ()
    since: datetime | None = None
    asker: str | None = None
    feedback: str | None = None  # runs with at least one verdict of this kind (`up`, `down`)
    source: str | None = None  # only runs asked this way; None: every run but `parley eval`'s

    def apply(self, stmt: Select) -> Select:
        if self.source is None:
            stmt = stmt.where(Run.source != RunSource.EVAL)
        else:
            stmt = stmt.where(Run.source == self.source)
        if self.statuses:
            stmt = stmt.where(Run.status.in_(list(self.statuses)))
        if self.reasons:
            stmt = stmt.where(Run.termination_reason.in_(list(self.reasons)))
        if self.since is not None:
            stmt = stmt.where(Run.created_at >= self.since)
        if self.asker:
            stmt = stmt.where(Run.asker == self.asker)
        if self.feedback:
            given = (FeedbackRecord.run_id == Run.id) & (FeedbackRecord.verdict == self.feedback)
            stmt = stmt.where(exists().where(given))
        return stmt


@dataclass(frozen=True)
class Page(Generic[Entry]):
    runs: list[Entry]
    next_cursor: str | None


class Positioned(Protocol):
    """Anything with a run's place in the history (a record, a row)."""

    @property
    def id(self) -> str: ...

    @property
    def created_at(self) -> datetime: ...


def encode_cursor(run: Positioned) -> str:
    return base64.urlsafe_b64encode(f"{run.created_at.isoformat()}|{run.id}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    """The (created_at, id) a cursor of `encode_cursor` stands for; `BadCursor` for anything else."""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        stamp, run_id = text.split("|", 1)
        return datetime.fromisoformat(stamp), run_id
    except (ValueError, UnicodeDecodeError):
        raise BadCursor(cursor) from None


def list_statement(
    filters: RunFilter, *, limit: int, cursor: str | None = None, columns: Sequence[Any] = SUMMARY_COLUMNS
) -> Select:
    """The list's columns, newest first; the (status|reason|asker, created_at, id) indexes serve it at any depth.

    Several statuses or reasons become one ordered, limited branch per value, merged (UNION ALL): an `IN (…)`
    list cannot be read from the index in time order, so the database would scan and filter instead.
    """
    after_cursor = None
    if cursor:
        created_at, run_id = decode_cursor(cursor)
        after_cursor = tuple_(Run.created_at, Run.id) < tuple_(created_at, run_id)

    def page(of: RunFilter) -> Select:
        stmt = of.apply(select(*columns))
        if after_cursor is not None:
            stmt = stmt.where(after_cursor)
        return stmt.order_by(Run.created_at.desc(), Run.id.desc()).limit(limit + 1)

    every: list[str | None] = [None]  # no filter on that column
    combos = [
        replace(filters, statuses=[status] if status else (), reasons=[reason] if reason else ())
        for status in (list(filters.statuses) or every)
        for reason in (list(filters.reasons) or every)
    ]
    if len(combos) == 1:
        return page(filters)
    branches = [page(combo).subquery() for combo in combos]
    merged = union_all(*(select(*branch.c) for branch in branches)).subquery()
    return select(*merged.c).order_by(merged.c.created_at.desc(), merged.c.id.desc()).limit(limit + 1)


async def list_runs(
    db: Database, filters: RunFilter, *, limit: int = 50, cursor: str | None = None
) -> Page[RunSummary]:
    """A page of runs as a list shows them, newest first."""
    rows, more = await _page(db, list_statement(filters, limit=limit, cursor=cursor), limit)
    runs = [run_summary(row) for row in rows]
    return Page(runs, encode_cursor(runs[-1]) if more and runs else None)


async def list_stored_runs(
    db: Database, filters: RunFilter, *, limit: int = 50, cursor: str | None = None
) -> Page[StoredRun]:
    """A page of runs read back whole (their outcomes, for views that render them), newest first."""
    statement = list_statement(filters, limit=limit, cursor=cursor, columns=STORED_COLUMNS)
    rows, more = await _page(db, statement, limit)
    runs = [stored_run(Run(**row._mapping)) for row in rows]
    return Page(runs, encode_cursor(runs[-1]) if more and runs else None)


async def newer_stored_runs(db: Database, filters: RunFilter, cursor: str, *, limit: int) -> list[StoredRun] | None:
    """The `limit` runs just newer than `cursor`'s run, newest first; None when fewer than `limit` + 1 are newer
    (the newest page is the one to show)."""
    created_at, run_id = decode_cursor(cursor)
    after_cursor = tuple_(Run.created_at, Run.id) > tuple_(created_at, run_id)
    stmt = filters.apply(select(*STORED_COLUMNS)).where(after_cursor)
    stmt = stmt.order_by(Run.created_at.asc(), Run.id.asc()).limit(limit + 1)
    async with db.sessions() as session:
        rows = (await session.execute(stmt)).all()
    if len(rows) <= limit:
        return None
    return [stored_run(Run(**row._mapping)) for row in reversed(rows[:limit])]


async def _page(db: Database, statement: Select, limit: int) -> tuple[list[Any], bool]:
    async with db.sessions() as session:
        rows = (await session.execute(statement)).all()
    return list(rows[:limit]), len(rows) > limit


async def export_rows(db: Database, filters: RunFilter, *, batch: int = 500) -> AsyncIterator[dict[str, Any]]:
    """Every matching run's `EXPORT_COLUMNS` as plain values (times in ISO 8601), newest first, a batch at a time."""
    cursor: str | None = None
    while True:
        stmt = filters.apply(select(Run))
        if cursor:
            created_at, run_id = decode_cursor(cursor)
            stmt = stmt.where(tuple_(Run.created_at, Run.id) < tuple_(created_at, run_id))
        stmt = stmt.order_by(Run.created_at.desc(), Run.id.desc()).limit(batch)
        async with db.sessions() as session:
            runs = list((await session.scalars(stmt)).all())
        for run in runs:
            row = {column: getattr(run, column) for column in EXPORT_COLUMNS}
            for key in ("created_at", "finished_at"):
                row[key] = row[key].isoformat() if row[key] else None
            yield row
        if len(runs) < batch:
            return
        cursor = encode_cursor(runs[-1])


async def resolve_run_id(db: Database, wanted: str, *, asker: str | None = None) -> str:
    """A whole run id, or a unique prefix of one (at least six characters), like git.

    With `asker`, only that person's runs are searched: anyone else's run is unknown, as if it did not exist.
    `RunNotFound` or `AmbiguousRun` when `wanted` names no run or several.
    """
    wanted = wanted.strip()
    async with db.sessions() as session:
        whole = await session.get(Run, wanted)
        if whole is not None and asker in (None, whole.asker):
            return wanted
        if len(wanted) < MIN_PREFIX:
            raise RunNotFound(wanted, too_short=True, min_prefix=MIN_PREFIX)
        # A range, not LIKE: the primary key serves it under any collation, and `%` or `_` mean themselves.
        after = wanted[:-1] + chr(ord(wanted[-1]) + 1)
        in_range = (Run.id >= wanted) & (Run.id < after)
        if asker is not None:
            in_range &= Run.asker == asker
        found = list((await session.scalars(select(Run.id).where(in_range).limit(2))).all())
    if not found:
        raise RunNotFound(wanted)
    if len(found) > 1:
        raise AmbiguousRun(wanted)
    return found[0]


async def load_trace(db: Database, run_id: str) -> StoredTrace:
    """One run (by id or unique prefix) with everything recorded about it, in order."""
    run_id = await resolve_run_id(db, run_id)
    async with db.sessions() as session:
        run = await session.get(Run, run_id)
        assert run is not None

        async def rows(model, build, *order):
            found = await session.scalars(select(model).where(model.run_id == run_id).order_by(*order))
            return [build(row) for row in found.all()]

        return StoredTrace(
            run=stored_run(run),
            columns=columns_of(run),
            steps=await rows(Step, stored_step, Step.step),
            tool_calls=await rows(ToolCallRecord, stored_tool_call, ToolCallRecord.step, ToolCallRecord.id),
            verdicts=await rows(Verdict, stored_verdict, Verdict.id),
            escalations=await rows(EscalationRecord, stored_escalation, EscalationRecord.id),
            audit=await rows(AuditEvent, stored_audit_event, AuditEvent.at, AuditEvent.id),
            feedback=await rows(FeedbackRecord, stored_feedback, FeedbackRecord.created_at, FeedbackRecord.id),
        )
