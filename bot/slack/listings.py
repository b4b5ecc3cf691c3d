"""The history as people see it in Slack (listings): a run in a few words, who may see which run, reads bounded in time.

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

from agent import RunStatus, exception_line, shorten
from bot.age import age
from bot.core import ENDED as ENDED_STATUSES
from bot.core import FeedbackVerdict, StoredEscalation, StoredFeedback, StoredRun, StoreUnavailable, Tally
from bot.slack.blocks import RUN_ID_CHARS, escape, outcome_line, status_emoji
from bot.wording import NO_HISTORY_DATABASE_UNAVAILABLE, InFeedback, InListings

log = logging.getLogger(__name__)


# A slash command's answer rides on its acknowledgement, due within Slack's 3 seconds.
READ_BUDGET_S = 2.0
QUESTION_CHARS = 150
WHY_CHARS = 300
COMMENT_SHOWN_CHARS = 1000  # a feedback note as a run shows it (the whole note: `parley runs show`)
# The statuses of a run that has ended (with a termination reason), whatever happened after.
ENDED = tuple(status.value for status in RunStatus if status in ENDED_STATUSES)

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
        raise HistoryUnavailable(InListings.STORE_SLOW) from None
    except StoreUnavailable as exc:
        log.error("reading the history failed, the store is unavailable: %s", exception_line(exc))
        raise HistoryUnavailable(NO_HISTORY_DATABASE_UNAVAILABLE) from None


def run_entry(run: StoredRun, *, asker: bool = False, feedback: Tally | None = None) -> str:
    """One run in mrkdwn: status, termination reason, (who asked,) when, run id, (people's 👍 / 👎); the
    question below it, and below that its outcome once it ended."""
    result = run.result
    parts = [InListings.RUN_HEAD.format(emoji=status_emoji(run.status), status=escape(run.status))]
    if result is not None:
        parts.append(escape(result.termination_reason))
    if asker:
        parts.append(person(run.asker))
    parts.append(when(run.created_at))
    parts.append(InListings.RUN_ID.format(run=escape(run.id[:RUN_ID_CHARS])))
    if feedback:
        parts.append(InFeedback.TALLY.format(up=feedback.up, down=feedback.down))
    entry = " · ".join(parts) + "\n" + question_of(run)
    return entry if result is None else entry + "\n" + outcome_line(result.outcome)


def escalation_entry(escalation: StoredEscalation, run: StoredRun, *, now: datetime | None = None) -> str:
    """A run waiting for review (`escalated_run`): its question, who asked, how long it has waited, why, its run
    id, and what kind of end brought it to people."""
    why = " · ".join(escape(part) for part in (escalation.kind, escalation.reason, escalation.level) if part)
    if escalation.message:
        why += " — " + escape(shorten(escalation.message, WHY_CHARS))
    details = [
        InListings.ASKED_BY.format(person=person(run.asker)),
        InListings.WAITING_SINCE.format(age=age(escalation.created_at, now=now)),
        InListings.RUN_ID.format(run=escape(run.id[:RUN_ID_CHARS])),
    ]
    lines = [
        f"{status_emoji(RunStatus.AWAITING_REVIEW)} {question_of(run)}",
        " · ".join(details),
        InListings.WHY.format(why=why),
    ]
    if run.outcome is not None:
        lines.append(outcome_line(run.outcome))
    return "\n".join(lines)


def feedback_entry(given: StoredFeedback) -> str:
    """One person's verdict on a run in mrkdwn: 👍 / 👎, who, when (and that they did not ask it), their note."""
    parts = ["👍" if given.verdict == FeedbackVerdict.UP else "👎", person(given.user), when(given.updated_at)]
    if not given.by_asker:
        parts.append(f"_{InFeedback.NOT_ASKER_MARK}_")
    line = " · ".join(parts)
    return line + (f" — “{escape(shorten(given.comment, COMMENT_SHOWN_CHARS))}”" if given.comment else "")


def question_of(run: StoredRun) -> str:
    return escape(shorten(run.question, QUESTION_CHARS))


def person(asker: str) -> str:
    """A Slack user as a mention (it shows their name, and notifies nobody in a view or an ephemeral message);
    anyone else (`cli:alice`) as inert text."""
    return f"<@{asker}>" if _SLACK_USER.match(asker) else escape(asker)


def when(moment: datetime) -> str:
    """A time Slack shows in each reader's own time zone, with a UTC fallback for clients that cannot."""
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    fallback = moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{int(moment.timestamp())}^{{date_short_pretty}} {{time}}|{fallback}>"
