"""SlackNotifier: the core's `Notifier` in Slack — the reviewer message, its updates, and the notices in the
asker's thread.

The run service, the timed jobs and `parley review` (when Slack is configured) tell people through it, so a
decision shows the same wherever it was taken. It is given records and posts; the claims that make each post
happen once across replicas are the service's.
"""

from __future__ import annotations

import logging
from typing import Any

from agent import RunResult, TerminationReason
from bot.age import age
from bot.core import (
    Escalated,
    EscalationKind,
    EscalationStatus,
    Posted,
    ReviewConfig,
    ShownEnd,
    StoredRun,
)
from bot.slack.blocks import SlackMessage, answer_messages
from bot.slack.gateway import SlackFailure, SlackGateway, slack_call
from bot.slack.reply.marks import mark_ended, shown_end
from bot.slack.reply.session import Sessions, SessionStatus
from bot.slack.review.blocks import (
    expiry,
    held_decided,
    held_in_full,
    notice,
    rejection,
    review_message,
    reviewed_answer,
)
from bot.wording import InReview

log = logging.getLogger(__name__)

MAX_THREAD_PAGES = 5  # a thread read back for a run's end: 1,000 messages, past any real conversation
# Slack's refusals to read a thread that no retry will change (a missing scope, a channel Parley left).
UNREADABLE_THREAD = {"missing_scope", "not_in_channel", "channel_not_found", "thread_not_found", "is_archived"}


class SlackNotifier:
    """Tells reviewers in their channel and askers in their threads."""

    def __init__(
        self,
        gateway: SlackGateway,
        config: ReviewConfig,
        *,
        channel: str | None = None,
        sessions: Sessions | None = None,
    ) -> None:
        self._gateway = gateway
        self._config = config
        self.review_channel = channel or config.channel
        self._sessions = sessions

    async def post_escalation(self, escalated: Escalated, channel: str) -> Posted | None:
        """The reviewer message in `channel`; held arguments too long for it follow in its thread."""
        run = escalated.run
        message = review_message(escalated, await self._permalink(run))
        what = f"post run {run.id} to the reviewer channel {channel}"
        response = await self._gateway.post(channel, message, what=what, level=logging.ERROR)
        if response is None:
            return None
        # Slack answers with the channel's id: kept for updates even when the setting names the channel.
        posted = Posted(response.get("channel") or channel, response["ts"])
        for part in held_in_full(escalated.escalation):
            what = f"post the held arguments of run {run.id} in full"
            await self._gateway.post(posted.channel, part, what=what, thread_ts=posted.ts, level=logging.ERROR)
        return posted

    async def show_escalation(self, escalated: Escalated) -> None:
        """The reviewer message again, as the escalation reads now (still pending, or decided)."""
        esc = escalated.escalation
        if not esc.posted:
            return
        assert esc.review_channel is not None and esc.review_ts is not None
        message = review_message(escalated, await self._permalink(escalated.run), decided=not esc.pending)
        what = f"update the review message of run {escalated.run.id}"
        await self._gateway.update(esc.review_channel, esc.review_ts, message, what=what)

    async def decided(self, escalated: Escalated) -> None:
        """The decision taken, shown: the reviewer message updated, the thread told."""
        esc, run = escalated.escalation, escalated.run
        if esc.pending:
            return
        await self.show_escalation(escalated)
        if esc.kind is EscalationKind.HELD_ACTION:
            await self._settle_held_notice(escalated)  # first: what follows below then reads as its sequel
        if esc.status is EscalationStatus.APPROVED and esc.final_answer is not None:
            await self._tell_thread(run, reviewed_answer(esc.final_answer, esc.decided_by or "?", run.id))
            await self._move_session(run, SessionStatus.ACTIVE)  # answered by the reviewer: a follow-up may come
        elif esc.status is EscalationStatus.REJECTED:
            await self._tell_thread(run, rejection(esc.decision_reason or "", esc.decided_by or "?", run.id))
            await self._move_session(run, SessionStatus.CLOSED)
        elif esc.status is EscalationStatus.EXPIRED and esc.kind is not EscalationKind.FEEDBACK:
            # (a 👎 nobody looked at: the answer stands as it was given)
            await self._tell_thread(run, expiry(self._config.expire_after_hours, run.id))
            await self._move_session(run, SessionStatus.CLOSED)

    async def _move_session(self, run: StoredRun, status: SessionStatus) -> None:
        if self._sessions is not None and run.conversation is not None:
            await self._sessions.move(run.conversation, status)

    async def resumed(self, run: StoredRun, result: RunResult) -> None:
        """An approved run that went on away from Slack (`parley review approve`): its thread sees the end."""
        for message in answer_messages(result, feedback=True):
            await self._tell_thread(run, message)

    async def remind(self, escalated: Escalated) -> None:
        esc = escalated.escalation
        assert esc.review_channel is not None and esc.review_ts is not None  # the service reminds posted ones
        reminder = SlackMessage(text=InReview.REMINDER.format(age=age(esc.created_at)))
        what = f"remind the reviewers of run {escalated.run.id}"
        await self._gateway.post(esc.review_channel, reminder, what=what, thread_ts=esc.review_ts)

    async def stale_ended(self, run: StoredRun) -> None:
        """The run's notice replaces its placeholder (a new message when it has none), marked as its end."""
        if not run.channel_id or not run.thread_ts:
            return
        stopped = run.answer or InReview.STOPPED
        reason = run.termination_reason or TerminationReason.CANCELLED
        [message] = mark_ended([notice(stopped, run.id, f"⚠️ {run.status} · {reason}")], run.id, run.status, reason)
        what = f"tell the thread of run {run.id} that it was ended"
        if run.reply_ts is None or not await self._gateway.update(run.channel_id, run.reply_ts, message, what=what):
            await self._tell_thread(run, message)

    async def shown_end(self, run: StoredRun) -> ShownEnd | None:
        """The run's end as its thread shows it (its marked message), read back from Slack; SlackFailure when
        the thread cannot be read now."""
        if not run.channel_id or not run.thread_ts:
            return None
        messages: list[dict[str, Any]] = []
        cursor = None
        for _ in range(MAX_THREAD_PAGES):
            try:
                page = await slack_call(
                    self._gateway.client.conversations_replies(
                        channel=run.channel_id, ts=run.thread_ts, include_all_metadata=True, cursor=cursor, limit=200
                    )
                )
            except SlackFailure as exc:
                if exc.error not in UNREADABLE_THREAD:
                    raise  # Slack away or busy: asked again at the next pass
                # Refused for good: waiting would leave the run open forever, so it is ended as if its thread
                # showed nothing final.
                log.warning("run %s: its thread cannot be read (%s); it is ended without knowing", run.id, exc)
                return None
            messages.extend(page.get("messages") or [])
            cursor = (page.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                break
        return shown_end(messages, run.id)

    async def _settle_held_notice(self, escalated: Escalated) -> None:
        """The thread's "waiting for a reviewer" message no longer waits: it says how it was decided."""
        run = escalated.run
        if not run.channel_id or not run.reply_ts:
            return
        message = held_decided(escalated.escalation, run.id)
        what = f"update the held notice of run {run.id}"
        await self._gateway.update(run.channel_id, run.reply_ts, message, what=what)

    async def _tell_thread(self, run: StoredRun, message: SlackMessage) -> None:
        if not run.channel_id or not run.thread_ts:
            return  # asked on the command line: no thread to tell
        what = f"tell the thread of run {run.id}"
        await self._gateway.post(run.channel_id, message, what=what, thread_ts=run.thread_ts)

    async def _permalink(self, run: StoredRun) -> str | None:
        ts = run.trigger_ts or run.thread_ts
        if not run.channel_id or not ts:
            return None
        return await self._gateway.permalink(run.channel_id, ts, what=f"link to the question of run {run.id}")
