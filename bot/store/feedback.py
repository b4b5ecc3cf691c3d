"""Feedback on answers: a person's 👍 / 👎 on a run, at most one per person per run, and its comment.

A second click by the same person changes their verdict (the unique key is the run and the person; one
INSERT … ON CONFLICT DO UPDATE, so double clicks and two replicas record one row). Only the newest verdict is
kept, with when it was first given and when it last changed. A comment belongs to a 👎: switching to 👍
drops it. Feedback from someone other than the run's asker is kept with `by_asker` false.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from sqlalchemy import func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store.database import Database, rows_changed
from bot.store.escalations import set_message
from bot.store.lifecycle import HELD
from bot.store.models import EscalationRecord, FeedbackRecord, Run
from bot.store.records import StoredFeedback
from bot.store.rows import stored_feedback
from bot.store.vocabulary import EscalationKind, EscalationStatus, FeedbackVerdict

COMMENT_CHARS = 3000  # Slack's plain_text_input holds at most 3,000 characters; longer is cut here too
FEEDBACK_REASON = "feedback"  # the reason of an escalation a 👎 opened (its kind is `feedback`)
FEEDBACK_LEVEL = "L4"  # a person must look: the level of every escalation that waits for people

Refusal = Literal["unknown_run", "unfinished"]


class FeedbackRefused(Exception):
    """The feedback names no run, or a run that has not ended: nothing is recorded."""

    def __init__(self, run_id: str, why: Refusal) -> None:
        super().__init__(f"no feedback recorded on run {run_id!r}: {why}")
        self.run_id = run_id
        self.why = why


@dataclass(frozen=True)
class Recorded:
    """A verdict as it now stands, and what it was before this click (None: the person's first)."""

    run_id: str
    user: str
    verdict: FeedbackVerdict
    previous: FeedbackVerdict | None
    by_asker: bool
    asker: str
    escalated: bool = False  # this click opened the run's feedback escalation


@dataclass(frozen=True)
class Tally:
    """How many people gave a run (or every run) 👍 and 👎."""

    up: int = 0
    down: int = 0

    def __bool__(self) -> bool:
        return bool(self.up or self.down)


async def record_feedback(
    db: Database,
    run_id: str,
    user: str,
    verdict: FeedbackVerdict,
    *,
    escalation: Callable[[bool], str] | None = None,
    now: datetime | None = None,
) -> Recorded:
    """Record (or change) `user`'s verdict on run `run_id`; `FeedbackRefused` for an unknown or unfinished run.

    With `escalation` (its message, given whether the clicker asked the run), a 👎 also opens the run's one
    feedback escalation in the same transaction, unless the run has had one, or has another one pending.
    """
    for attempt in (1, 2):
        try:
            return await _record(db, run_id, user, verdict, escalation, now or datetime.now(UTC))
        except IntegrityError:
            # Two 👎 at the same moment both opened the escalation (one pending per run): the loser records its
            # verdict again, and this time finds the escalation open.
            if attempt == 2 or escalation is None:
                raise
    raise AssertionError("unreachable")


async def _record(
    db: Database,
    run_id: str,
    user: str,
    verdict: FeedbackVerdict,
    escalation: Callable[[bool], str] | None,
    now: datetime,
) -> Recorded:
    async with db.sessions() as session, session.begin():
        run = await session.get(Run, run_id)
        if run is None:
            raise FeedbackRefused(run_id, "unknown_run")
        if run.status in HELD:  # people judge a run once it ended
            raise FeedbackRefused(run_id, "unfinished")
        previous = await session.scalar(
            select(FeedbackRecord.verdict).where(FeedbackRecord.run_id == run_id, FeedbackRecord.user == user)
        )
        by_asker = run.asker == user
        insert = postgresql.insert if db.engine.dialect.name == "postgresql" else sqlite.insert
        statement = insert(FeedbackRecord).values(
            run_id=run_id, user=user, verdict=verdict, by_asker=by_asker, comment=None, created_at=now, updated_at=now
        )
        changes = {"verdict": statement.excluded.verdict, "updated_at": statement.excluded.updated_at}
        if verdict is FeedbackVerdict.UP:
            changes["comment"] = statement.excluded.comment  # a comment says what was wrong: not for a 👍
        await session.execute(statement.on_conflict_do_update(index_elements=["run_id", "user"], set_=changes))
        escalated = False
        if verdict is FeedbackVerdict.DOWN and escalation is not None:
            escalated = await _open_escalation(session, run, escalation(by_asker), now)
        asker = run.asker
    was = FeedbackVerdict(previous) if previous else None
    return Recorded(run_id, user, verdict, was, by_asker, asker, escalated)


async def _open_escalation(session: AsyncSession, run: Run, message: str, now: datetime) -> bool:
    already = await session.scalar(
        select(func.count())
        .select_from(EscalationRecord)
        .where(
            EscalationRecord.run_id == run.id,
            (EscalationRecord.kind == EscalationKind.FEEDBACK) | (EscalationRecord.status == EscalationStatus.PENDING),
        )
    )
    if already:
        return False
    session.add(
        EscalationRecord(
            run_id=run.id,
            kind=EscalationKind.FEEDBACK,
            reason=FEEDBACK_REASON,
            level=FEEDBACK_LEVEL,
            message=message,
            draft_answer=run.answer,
            created_at=now,
        )
    )
    await session.flush()
    return True


async def comment_on(db: Database, run_id: str, user: str, comment: str, *, now: datetime | None = None) -> bool:
    """Keep `comment` (at most COMMENT_CHARS) on `user`'s 👎 of the run; False when they have no 👎 there."""
    now = now or datetime.now(UTC)
    async with db.sessions() as session, session.begin():
        changed = await rows_changed(
            session,
            update(FeedbackRecord)
            .where(
                FeedbackRecord.run_id == run_id,
                FeedbackRecord.user == user,
                FeedbackRecord.verdict == FeedbackVerdict.DOWN,
            )
            .values(comment=comment[:COMMENT_CHARS], updated_at=now),
        )
    return changed == 1


async def feedback_on(db: Database, run_id: str) -> list[StoredFeedback]:
    """Every verdict on the run, oldest first."""
    async with db.sessions() as session:
        rows = await session.scalars(
            select(FeedbackRecord).where(FeedbackRecord.run_id == run_id).order_by(FeedbackRecord.created_at)
        )
        return [stored_feedback(row) for row in rows.all()]


async def tallies(db: Database, run_ids: Iterable[str]) -> dict[str, Tally]:
    """👍 and 👎 per run, for the runs that have any (one query)."""
    wanted = list(run_ids)
    if not wanted:
        return {}
    counts: dict[str, dict[FeedbackVerdict, int]] = {}
    async with db.sessions() as session:
        rows = await session.execute(
            select(FeedbackRecord.run_id, FeedbackRecord.verdict, func.count())
            .where(FeedbackRecord.run_id.in_(wanted))
            .group_by(FeedbackRecord.run_id, FeedbackRecord.verdict)
        )
        for run_id, verdict, count in rows.all():
            counts.setdefault(run_id, {})[FeedbackVerdict(verdict)] = int(count)
    return {
        run_id: Tally(up=c.get(FeedbackVerdict.UP, 0), down=c.get(FeedbackVerdict.DOWN, 0))
        for run_id, c in counts.items()
    }


async def count_feedback(db: Database) -> Tally:
    """Every person's current verdict on every run, counted (one GROUP BY)."""
    async with db.sessions() as session:
        rows = await session.execute(select(FeedbackRecord.verdict, func.count()).group_by(FeedbackRecord.verdict))
        counts = {FeedbackVerdict(verdict): int(count) for verdict, count in rows.all()}
    return Tally(up=counts.get(FeedbackVerdict.UP, 0), down=counts.get(FeedbackVerdict.DOWN, 0))


async def note_on_feedback_escalation(db: Database, run_id: str, message: str) -> bool:
    """Replace the message of the run's pending feedback escalation (a comment arrived); False when none waits."""
    return await set_message(db, run_id, message, kind=EscalationKind.FEEDBACK)
