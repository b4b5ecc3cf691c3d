"""The history as people see it in Slack: a run in a few words, who may see which run, reads bounded in time.

Shared by the Home tab (`home.py`) and `/parley` (`commands.py`). Every piece of a person's or a tool's text
goes through `escape`; the store's failures are translated here, once, into `HistoryUnavailable`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime

from agent import RunStatus
from bot.review.authority import Reviewers
from bot.slack.blocks import RUN_ID_CHARS, escape, shorten
from bot.store import StoreUnavailable
from bot.store.models import EscalationRecord, Run

log = logging.getLogger(__name__)

# What people read, in one place.
STORE_DOWN = "I can't read Parley's history right now: its database is unavailable. Please try again in a minute."
STORE_SLOW = "I can't read Parley's history right now: it took too long to read. Please try again in a minute."
RUN_HEAD = "{emoji} *{status}*"
RUN_ID = "run `{run}`"
WAITING_SINCE = "waiting {age}"
ASKED_BY = "asked by {person}"
WHY = "why: {why}"

# A slash command's answer rides on its acknowledgement, due within Slack's 3 seconds.
READ_BUDGET_S = 2.0
QUESTION_CHARS = 150
WHY_CHARS = 300
STATUS_EMOJI = {
    RunStatus.QUEUED: "🕒",
    RunStatus.RUNNING: "⏳",
    RunStatus.SOLVED: "✅",
    RunStatus.DEGRADED: "⚠️",
    RunStatus.REFUSED: "⛔",
    RunStatus.AWAITING_REVIEW: "👀",
    RunStatus.APPROVED: "👍",
    RunStatus.REJECTED: "🚫",
    RunStatus.EXPIRED: "⌛",
}
UNKNOWN_STATUS_EMOJI = "❔"
# The statuses of a run that has ended (with a termination reason), whatever happened after.
ENDED = tuple(status.value for status in RunStatus if status not in (RunStatus.QUEUED, RunStatus.RUNNING))

_SLACK_USER = re.compile(r"^[UW][A-Z0-9]{2,}$")


class HistoryUnavailable(Exception):
    """The store could not be read (down, or too slow); the message is the sentence to show people."""


@contextlib.asynccontextmanager
async def reading(budget_s: float = READ_BUDGET_S) -> AsyncIterator[None]:
    """Bound the reads inside in time; a store that fails or is too slow becomes `HistoryUnavailable`."""
    try:
        async with asyncio.timeout(budget_s):
            yield
    except TimeoutError:
        log.warning("reading the history took longer than %.1f s (the store or Slack is slow)", budget_s)
        raise HistoryUnavailable(STORE_SLOW) from None
    except StoreUnavailable as exc:
        log.error("reading the history failed, the store is unavailable: %s", _one_line(exc))
        raise HistoryUnavailable(STORE_DOWN) from None


async def may_see(reviewers: Reviewers, user: str, run: Run) -> bool:
    """A run is shown to the person who asked it, and to reviewers."""
    return run.asker == user or await reviewers.is_reviewer(user)


def run_entry(run: Run, *, asker: bool = False) -> str:
    """One run in mrkdwn: status, termination reason, (who asked,) when, run id; the question below it."""
    parts = [RUN_HEAD.format(emoji=status_emoji(run.status), status=escape(run.status))]
    if run.termination_reason:
        parts.append(escape(run.termination_reason))
    if asker:
        parts.append(person(run.asker))
    parts.append(when(run.created_at))
    parts.append(RUN_ID.format(run=escape(run.id[:RUN_ID_CHARS])))
    return " · ".join(parts) + "\n" + question_of(run)


def escalation_entry(escalation: EscalationRecord, run: Run, *, now: datetime | None = None) -> str:
    """A run waiting for review: its question, who asked, how long it has waited, why, and its run id."""
    why = " · ".join(escape(part) for part in (escalation.kind, escalation.reason, escalation.level) if part)
    if escalation.message:
        why += " — " + escape(shorten(escalation.message, WHY_CHARS))
    details = [
        ASKED_BY.format(person=person(run.asker)),
        WAITING_SINCE.format(age=age(escalation.created_at, now=now)),
        RUN_ID.format(run=escape(run.id[:RUN_ID_CHARS])),
    ]
    lines = [f"{STATUS_EMOJI[RunStatus.AWAITING_REVIEW]} {question_of(run)}", " · ".join(details), WHY.format(why=why)]
    return "\n".join(lines)


def question_of(run: Run) -> str:
    return escape(shorten(run.question, QUESTION_CHARS))


def status_emoji(status: str) -> str:
    try:
        return STATUS_EMOJI[RunStatus(status)]
    except ValueError:
        return UNKNOWN_STATUS_EMOJI


def person(asker: str) -> str:
    """A Slack user as a mention (it shows their name, and notifies nobody in a view or an ephemeral message);
    anyone else (`cli:alice`) as inert text."""
    return f"<@{asker}>" if _SLACK_USER.match(asker) else escape(asker)


def when(moment: datetime) -> str:
    """A time Slack shows in each reader's own time zone, with a UTC fallback for clients that cannot."""
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    fallback = moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{int(moment.timestamp())}^{{date_short_pretty}} {{time}}|{fallback}>"


def age(since: datetime, *, now: datetime | None = None) -> str:
    """How long ago, in the two largest units: `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h`."""
    since = since if since.tzinfo else since.replace(tzinfo=UTC)
    seconds = max(0, int(((now or datetime.now(UTC)) - since).total_seconds()))
    if seconds < 60:
        return f"{seconds} s"
    minutes, hours, days = seconds // 60, seconds // 3600, seconds // 86400
    if hours < 1:
        return f"{minutes} min"
    if days < 1:
        return f"{hours} h {minutes % 60} min" if minutes % 60 else f"{hours} h"
    return f"{days} d {hours % 24} h" if hours % 24 else f"{days} d"


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__
