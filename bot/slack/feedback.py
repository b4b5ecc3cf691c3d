"""FeedbackDesk: the 👍 / 👎 under an answer, clicked; the "what was wrong?" form a 👎 opens, submitted.

Only the verdict and the run id travel in a button's value; the run is read from the store. A value that does
not read, a run that does not exist or has not ended, and a database that cannot be reached are each told to
the clicker privately, and nothing is recorded for them. With `review.escalate_on_feedback`, a 👎 sends the run
to the reviewer channel (once per run, whoever clicks), and the note that follows is added to what the
reviewers read.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

from slack_bolt.async_app import AsyncApp

from agent import exception_line
from bot.core import FeedbackRefused, FeedbackVerdict, Recorded, RunService, StoreUnavailable
from bot.slack.feedback_blocks import (
    COMMENT_BLOCK,
    COMMENT_INPUT,
    COMMENT_MODAL,
    FEEDBACK,
    RUN_ID_CHARS,
    comment_modal,
    read_value,
)
from bot.slack.gateway import SlackGateway
from bot.slack.interactions import Interaction, answer_privately, open_form, read_interaction
from bot.wording import InFeedback

log = logging.getLogger(__name__)


def escalation_note(user: str, by_asker: bool, comment: str | None = None) -> str:
    """What the reviewers read about a run a 👎 sent them (escaped where it is shown)."""
    whose = InFeedback.THE_ASKER if by_asker else InFeedback.NOT_THE_ASKER
    note = InFeedback.ESCALATED.format(person=user, whose=whose)
    return note + (InFeedback.ESCALATED_COMMENT.format(comment=comment) if comment else "")


class FeedbackDesk:
    """Takes the clicks on feedback buttons and the "what was wrong?" forms."""

    def __init__(self, app: AsyncApp, service: RunService, gateway: SlackGateway) -> None:
        self._service = service
        self._gateway = gateway
        app.action(FEEDBACK)(self._on_click)
        app.view(COMMENT_MODAL)(self._on_comment)

    async def _on_click(self, ack: Any, body: dict[str, Any]) -> None:
        await ack()
        clicked = read_interaction(body)
        user = clicked.clicker
        click = read_value(clicked.value)
        if click is None or not user:
            log.warning("refused a feedback click by %r whose value does not read: %.80r", user, clicked.value)
            await self._tell(clicked, InFeedback.UNKNOWN_RUN)
            return
        run = click.run_id
        try:
            recorded = await self._service.feedback(run, user, click.verdict, note=partial(escalation_note, user))
        except FeedbackRefused as exc:
            log.info("refused a feedback click by %s: %s", user, exc)
            shown = InFeedback.UNKNOWN_RUN if exc.why == "unknown_run" else InFeedback.UNFINISHED
            await self._tell(clicked, shown.format(run=run[:12]))
            return
        except StoreUnavailable as exc:
            log.error("feedback by %s on run %s not recorded, the store is unavailable: %s", user, run, _why(exc))
            await self._tell(clicked, InFeedback.NOT_RECORDED)
            return
        if recorded.verdict is FeedbackVerdict.DOWN and await open_form(
            self._gateway, clicked, comment_modal(run), "the feedback form"
        ):
            return  # the form is the acknowledgement
        await self._tell(clicked, _thanks(recorded))

    async def _on_comment(self, ack: Any, body: dict[str, Any]) -> None:
        submitted = read_interaction(body)
        user, run = submitted.clicker, submitted.about
        comment = submitted.typed(COMMENT_BLOCK, COMMENT_INPUT).strip()
        if not comment:
            await ack()  # the note is optional: the 👎 stands without one
            return
        if not run or len(run) > RUN_ID_CHARS:
            log.warning("refused a feedback note by %s naming no run: %.80r", user, run)
            await ack(response_action="errors", errors={COMMENT_BLOCK: InFeedback.UNKNOWN_RUN})
            return
        try:
            kept = await self._service.comment(run, user, comment)
        except StoreUnavailable as exc:
            log.error("feedback note by %s on run %s not kept, the store is unavailable: %s", user, run, _why(exc))
            # Shown in the form, which stays open with the text in it: nothing typed is lost.
            await ack(response_action="errors", errors={COMMENT_BLOCK: InFeedback.COMMENT_NOT_RECORDED})
            return
        if not kept:
            await ack(response_action="errors", errors={COMMENT_BLOCK: InFeedback.COMMENT_NO_DOWN})
            return
        await ack()  # Slack's 3 seconds: the reviewers' copy of the note comes after
        await self._service.renote_feedback(run, user, comment, note=partial(escalation_note, user))

    async def _tell(self, clicked: Interaction, text: str) -> None:
        await answer_privately(self._gateway, clicked, text)


def _thanks(recorded: Recorded) -> str:
    run = recorded.run_id[:12]
    if recorded.previous is not None and recorded.previous is not recorded.verdict:
        return InFeedback.CHANGED.format(run=run, verdict="👍" if recorded.verdict is FeedbackVerdict.UP else "👎")
    return (InFeedback.THANKS_UP if recorded.verdict is FeedbackVerdict.UP else InFeedback.THANKS_DOWN).format(run=run)


def _why(exc: BaseException) -> str:
    return exception_line(exc)
