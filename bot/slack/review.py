"""The reviewer channel: one message per escalation, Approve / Reject / Retry, modals, and the thread told.

Only the run id travels in a button or a modal; everything else is read from the store. Who may decide is
checked on the click and again on the modal's submission; refusals are ephemeral and audited. The decision
itself is `settle` (one conditional UPDATE): whoever comes second is told who decided.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from agent import RunResult, TerminationReason
from bot.age import age
from bot.review.config import ReviewConfig
from bot.review.service import (
    Settled,
    claim_review_message,
    release_review_message,
    set_review_message,
)
from bot.runs import RunService
from bot.slack.blocks import SlackMessage, answer_messages
from bot.slack.gateway import SlackFailure, slack_call
from bot.slack.interactions import Interaction, answer_privately, open_form, read_interaction
from bot.slack.marks import mark_ended, shown_end
from bot.slack.review_blocks import (
    ANSWER_BLOCK,
    ANSWER_INPUT,
    APPROVE,
    APPROVE_MODAL,
    REASON_BLOCK,
    REASON_INPUT,
    REJECT,
    REJECT_MODAL,
    RETRY,
    answer_modal,
    decision_line,
    expiry,
    held_decided,
    held_in_full,
    notice,
    reason_modal,
    rejection,
    review_message,
    reviewed_answer,
)
from bot.slack.reviewers import Reviewers
from bot.slack.workers import RunQueue
from bot.store import Database, Decision, EscalationKind, EscalationStatus
from bot.store.conversations import ask_of
from bot.store.feedback import from_feedback
from bot.store.models import EscalationRecord, Run
from bot.store.owners import ShownEnd
from bot.store.stored_run import escalated_run
from bot.wording import InReview

log = logging.getLogger(__name__)

MAX_THREAD_PAGES = 5  # a thread read back for a run's end: 1,000 messages, past any real conversation
# Slack's refusals to read a thread that no retry will change (a missing scope, a channel Parley left).
UNREADABLE_THREAD = {"missing_scope", "not_in_channel", "channel_not_found", "thread_not_found", "is_archived"}


def actor_of(user: str) -> str:
    return f"slack:{user}"


class ReviewBoard:
    """The Slack `Notifier`: the reviewer message, its updates, and the notices in the asker's thread.

    The run service, the timed jobs and `parley review` (when Slack is configured) tell people through it,
    so a decision shows the same wherever it was taken.
    """

    def __init__(self, db: Database, client: AsyncWebClient, config: ReviewConfig, *, channel: str | None = None):
        self._db = db
        self._client = client
        self._config = config
        self.channel = channel or config.channel

    async def escalated(self, esc: EscalationRecord, run: Run) -> None:
        """Post the run's pending escalation in the reviewer channel, once across replicas (claimed first)."""
        if esc.status != EscalationStatus.PENDING or esc.review_channel:
            return
        if not self.channel:
            log.warning("run %s waits for review, but no reviewer channel is set (PARLEY_REVIEW_CHANNEL)", run.id)
            return
        if not await claim_review_message(self._db, esc.id, self.channel):
            return  # another worker or replica is posting it
        message = review_message(esc, escalated_run(run, esc), await self._permalink(run))
        what = f"post run {run.id} to the reviewer channel {self.channel}"
        response = await self._send(message, what, level=logging.ERROR, channel=self.channel)
        if response is None:
            await release_review_message(self._db, esc.id)  # the `announce` job tries again
            return
        # Slack answers with the channel's id: kept for updates even when the setting names the channel.
        channel = response.get("channel") or self.channel
        await set_review_message(self._db, esc.id, channel, response["ts"])
        for part in held_in_full(esc):
            what = f"post the held arguments of run {run.id} in full"
            await self._send(part, what, level=logging.ERROR, channel=channel, thread_ts=response["ts"])

    async def decided(self, esc: EscalationRecord, run: Run) -> None:
        """The decision taken on the run's escalation, shown: reviewer message updated, the thread told."""
        if esc.status == EscalationStatus.PENDING:
            return
        await self.show_decided(esc, run)
        if esc.kind == EscalationKind.HELD_ACTION:
            await self.settle_held_notice(esc, run)  # first: what follows below then reads as its sequel
        if esc.status == EscalationStatus.APPROVED and esc.final_answer is not None:
            await self.tell_thread(run, reviewed_answer(esc.final_answer, esc.decided_by or "?", run.id))
        elif esc.status == EscalationStatus.REJECTED:
            await self.tell_thread(run, rejection(esc.decision_reason or "", esc.decided_by or "?", run.id))
        elif esc.status == EscalationStatus.EXPIRED and not from_feedback(esc):  # a 👎's answer still stands
            await self.tell_thread(run, expiry(self._config.expire_after_hours, run.id))

    async def resumed(self, run: Run, result: RunResult) -> None:
        """An approved run that went on away from Slack (`parley review approve`): its thread sees the end."""
        for message in answer_messages(result, feedback=True):
            await self.tell_thread(run, message)

    async def show_pending(self, esc: EscalationRecord, run: Run) -> None:
        """The pending escalation's reviewer message, shown again after its note changed (a 👎's comment)."""
        if esc.status != EscalationStatus.PENDING or not esc.review_ts or not esc.review_channel:
            return
        message = review_message(esc, escalated_run(run, esc), await self._permalink(run))
        what = f"update the review message of run {run.id}"
        await self._send(message, what, channel=esc.review_channel, ts=esc.review_ts)

    async def settle_held_notice(self, esc: EscalationRecord, run: Run) -> None:
        """The thread's "waiting for a reviewer" message no longer waits: it says how it was decided."""
        if not run.channel_id or not run.reply_ts:
            return
        what = f"update the held notice of run {run.id}"
        await self._send(held_decided(esc, run.id), what, channel=run.channel_id, ts=run.reply_ts)

    async def show_decided(self, esc: EscalationRecord, run: Run) -> None:
        if not esc.review_ts or not esc.review_channel:
            return
        message = review_message(esc, escalated_run(run, esc), await self._permalink(run), decided=True)
        what = f"update the review message of run {run.id}"
        await self._send(message, what, channel=esc.review_channel, ts=esc.review_ts)

    async def tell_thread(self, run: Run, message: SlackMessage) -> None:
        if not run.channel_id or not run.thread_ts:
            return  # asked on the command line: no thread to tell
        await self._send(message, f"tell the thread of run {run.id}", channel=run.channel_id, thread_ts=run.thread_ts)

    async def _send(
        self,
        message: SlackMessage,
        what: str,
        *,
        channel: str,
        level: int = logging.WARNING,
        ts: str | None = None,
        thread_ts: str | None = None,
    ) -> Any:
        """Post `message` in `channel` (in `thread_ts`), or update message `ts` there; Slack's answer, or None,
        logged, when Slack refused or could not be reached (a lost message never undoes a decision)."""
        text, blocks, metadata = message.text, message.blocks, message.metadata
        try:
            if ts is None:
                call = self._client.chat_postMessage(
                    channel=channel, thread_ts=thread_ts, text=text, blocks=blocks, metadata=metadata
                )
            else:
                call = self._client.chat_update(channel=channel, ts=ts, text=text, blocks=blocks, metadata=metadata)
            return await slack_call(call)
        except SlackFailure as exc:
            log.log(level, "could not %s: %s", what, exc)
            return None

    async def _permalink(self, run: Run) -> str | None:
        ts = run.trigger_ts or run.thread_ts
        if not run.channel_id or not ts:
            return None
        try:
            response = await slack_call(self._client.chat_getPermalink(channel=run.channel_id, message_ts=ts))
        except SlackFailure as exc:
            log.warning("no permalink for run %s: %s", run.id, exc)
            return None
        return response.get("permalink")

    async def remind(self, escalation: EscalationRecord, run: Run) -> None:
        if not escalation.review_channel or not escalation.review_ts:
            await self.escalated(escalation, run)
            return
        await slack_call(
            self._client.chat_postMessage(
                channel=escalation.review_channel,
                thread_ts=escalation.review_ts,
                text=InReview.REMINDER.format(age=age(escalation.created_at)),
            )
        )

    async def stale_ended(self, run: Run) -> None:
        """The run's notice replaces its placeholder (a new message when it has none), marked as its end."""
        if not run.channel_id or not run.thread_ts:
            return
        stopped = run.answer or InReview.STOPPED
        reason = run.termination_reason or TerminationReason.CANCELLED
        [message] = mark_ended([notice(stopped, run.id, f"⚠️ {run.status} · {reason}")], run.id, run.status, reason)
        what = f"tell the thread of run {run.id} that it was ended"
        if run.reply_ts is None or await self._send(message, what, channel=run.channel_id, ts=run.reply_ts) is None:
            await self.tell_thread(run, message)

    async def shown_end(self, run: Run) -> ShownEnd | None:
        """The run's end as its thread shows it (its marked message), read back from Slack; SlackFailure when
        the thread cannot be read."""
        if not run.channel_id or not run.thread_ts:
            return None
        messages: list[dict[str, Any]] = []
        cursor = None
        for _ in range(MAX_THREAD_PAGES):
            try:
                page = await slack_call(
                    self._client.conversations_replies(
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


class ReviewDesk:
    """Takes the decisions made in the reviewer channel: buttons, modals, rights, exactly one decision."""

    def __init__(
        self, app: AsyncApp, runs: RunService, reviewers: Reviewers, queue: RunQueue, client: AsyncWebClient
    ) -> None:
        self._runs = runs
        self._client = client
        self._reviewers = reviewers
        self._queue = queue
        app.action(APPROVE)(self._on_approve)
        app.action(REJECT)(self._on_reject)
        app.action(RETRY)(self._on_retry)
        app.view(APPROVE_MODAL)(self._on_approve_submitted)
        app.view(REJECT_MODAL)(self._on_reject_submitted)

    # --- buttons -------------------------------------------------------------------------------------------

    async def _on_approve(self, ack: Any, body: dict[str, Any]) -> None:
        await ack()
        found = await self._allowed(body, "approve")
        if found is None:
            return
        esc, run = found
        if esc.kind == EscalationKind.HELD_ACTION:
            actor = actor_of(read_interaction(body).clicker)
            decided = await self._runs.decide(run.id, Decision.APPROVED, actor=actor)
            if await self._won(decided, body):
                # A new message below (the asker is notified), which becomes the resumed run's answer.
                self._queue.submit(run.id, ask_of(run, esc), resume_by=actor)
            return
        await self._open(read_interaction(body), answer_modal(run.id, esc.draft_answer or run.answer or ""))

    async def _on_reject(self, ack: Any, body: dict[str, Any]) -> None:
        await ack()
        found = await self._allowed(body, "reject")
        if found is not None:
            await self._open(read_interaction(body), reason_modal(found[1].id))

    async def _on_retry(self, ack: Any, body: dict[str, Any]) -> None:
        await ack()
        found = await self._allowed(body, "retry")
        if found is None:
            return
        esc, run = found
        retried = await self._runs.retry(run.id, actor=actor_of(read_interaction(body).clicker))
        if await self._won(retried.settled, body) and retried.retry_id is not None:
            self._queue.submit(retried.retry_id, ask_of(run, esc))

    async def _allowed(self, body: dict[str, Any], attempted: str) -> tuple[EscalationRecord, Run] | None:
        """The escalation and run a click is about, if the clicker may decide and it is still pending."""
        clicked = read_interaction(body)
        user, run_id = clicked.clicker, clicked.value
        esc, run = await self._runs.escalation_of(run_id)
        if esc is None or run is None:
            await answer_privately(self._client, clicked, InReview.GONE)
            return None
        refusal = await self._reviewers.refusal(user, run.asker)
        if refusal is not None:
            await self._runs.note_refusal(run.id, actor_of(user), attempted, refusal)
            await answer_privately(self._client, clicked, refusal)
            return None
        if esc.status != EscalationStatus.PENDING:
            await answer_privately(self._client, clicked, InReview.ALREADY_DECIDED.format(line=decision_line(esc)))
            return None
        return esc, run

    async def _won(self, decided: Settled, body: dict[str, Any]) -> bool:
        """True when this decision won; a latecomer is told privately who decided."""
        if not decided.won and decided.escalation is not None:
            line = decision_line(decided.escalation)
            await answer_privately(self._client, read_interaction(body), InReview.ALREADY_DECIDED.format(line=line))
        return decided.won

    # --- modals --------------------------------------------------------------------------------------------

    async def _on_approve_submitted(self, ack: Any, body: dict[str, Any]) -> None:
        submitted = read_interaction(body)
        answer = submitted.typed(ANSWER_BLOCK, ANSWER_INPUT)
        if not answer.strip():
            await ack(response_action="errors", errors={ANSWER_BLOCK: InReview.ANSWER_REQUIRED})
            return
        await self._submitted(ack, submitted, Decision.APPROVED, ANSWER_BLOCK, final_answer=answer.strip())

    async def _on_reject_submitted(self, ack: Any, body: dict[str, Any]) -> None:
        submitted = read_interaction(body)
        reason = submitted.typed(REASON_BLOCK, REASON_INPUT)
        if not reason.strip():
            await ack(response_action="errors", errors={REASON_BLOCK: InReview.REASON_REQUIRED})
            return
        await self._submitted(ack, submitted, Decision.REJECTED, REASON_BLOCK, reason=reason.strip())

    async def _submitted(
        self,
        ack: Any,
        submitted: Interaction,
        decision: Decision,
        block: str,
        *,
        reason: str | None = None,
        final_answer: str | None = None,
    ) -> None:
        user, run_id = submitted.clicker, submitted.about
        esc, run = await self._runs.escalation_of(run_id)
        if esc is None or run is None:
            await ack(response_action="errors", errors={block: InReview.GONE})
            return
        refusal = await self._reviewers.refusal(user, run.asker)  # checked again: rights can change meanwhile
        if refusal is not None:
            await self._runs.note_refusal(run.id, actor_of(user), decision.value, refusal)
            await ack(response_action="errors", errors={block: refusal})
            return
        decided = await self._runs.decide(
            run.id, decision, actor=actor_of(user), reason=reason, answer=final_answer, announce=False
        )
        if not decided.won:
            line = decision_line(decided.escalation) if decided.escalation else InReview.SOMEONE_DECIDED
            await ack(response_action="errors", errors={block: InReview.ALREADY_DECIDED.format(line=line)})
            return
        await ack()  # Slack's 3 seconds: the announcement comes after
        await self._runs.announce(decided)

    async def _open(self, clicked: Interaction, view: dict[str, Any]) -> None:
        if not await open_form(self._client, clicked, view, "the review form"):
            await answer_privately(self._client, clicked, InReview.FORM_NOT_OPENED)
