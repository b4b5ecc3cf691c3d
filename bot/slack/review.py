"""The reviewer channel: one message per escalation, Approve / Reject / Retry, modals, and the thread told.

Only the run id travels in a button or a modal; everything else is read from the store. Who may decide is
checked on the click and again on the modal's submission; refusals are ephemeral and audited. The decision
itself is `settle` (one conditional UPDATE): whoever comes second is told who decided.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from agent import RunStatus
from bot.review.authority import Reviewers
from bot.review.config import ReviewConfig
from bot.review.service import Decision, Settled, current_escalation, note_refusal, set_review_message, settle
from bot.slack.blocks import SlackMessage, _contexts, _header, _sections, _split, escape, held_call_text
from bot.slack.workers import RunQueue
from bot.store import Database
from bot.store.conversations import SlackAsk, enqueue_retry
from bot.store.models import EscalationRecord, Run

log = logging.getLogger(__name__)

APPROVE = "parley_review_approve"
REJECT = "parley_review_reject"
RETRY = "parley_review_retry"
APPROVE_MODAL = "parley_review_approve_modal"
REJECT_MODAL = "parley_review_reject_modal"
ANSWER_BLOCK, ANSWER_INPUT = "answer", "answer_input"
REASON_BLOCK, REASON_INPUT = "reason", "reason_input"
INPUT_CHARS = 3000  # plain_text_input's limit

KIND_TITLE = {
    "held_action": "⏸️ An action is waiting for approval",
    "policy": "⛔ A policy refused this request",
    "exhausted": "🧯 Parley could not finish this on its own",
}
DECIDED = {
    "approved": "✅ Approved by <@{who}> at {at}",
    "rejected": "⛔ Rejected by <@{who}> at {at}: {reason}",
    "expired": "⌛ Expired at {at}: {reason}",
    "retried": "🔁 Run again by <@{who}> at {at}",
}


def actor_of(user: str) -> str:
    return f"slack:{user}"


def _user_of(actor: str | None) -> str:
    return (actor or "").removeprefix("slack:")


def _when(at: datetime | None) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if at else "?"


def review_message(esc: EscalationRecord, run: Run, permalink: str | None, *, decided: bool = False) -> SlackMessage:
    """The reviewer-channel message: what was asked, why it is here, what was done, what is held, the draft."""
    blocks: list[dict[str, Any]] = [_header(KIND_TITLE.get(esc.kind, KIND_TITLE["exhausted"]))]
    asked = f"*Question* from <@{escape(run.asker)}>" + (f" · <{permalink}|thread>" if permalink else "")
    blocks += _sections(f"{asked}\n{escape(run.question)}")
    blocks += _sections(f"*Why*\n{escape(esc.message or esc.reason)} (`{escape(esc.reason)}`, {escape(esc.level)})")
    if run.completed:
        blocks += _sections("*Done*\n" + "\n".join(f"• {escape(str(item))}" for item in run.completed))
    if run.missing:
        blocks += _sections("*Missing*\n" + "\n".join(f"• {escape(str(item))}" for item in run.missing))
    if run.citations:
        footnotes = "\n".join(
            escape(f"{c.get('marker')} {c.get('tool')}({json.dumps(c.get('arguments') or {}, ensure_ascii=False)})")
            for c in run.citations
        )
        blocks += _contexts(f"*Sources*\n{footnotes}")
    if esc.held_calls:
        held = "\n".join(escape(held_call_text(c["tool"], c["arguments"])) for c in esc.held_calls)
        blocks += _sections(f"*Held action (runs exactly as shown if approved)*\n```{held}```")
    if esc.draft_answer and esc.kind != "held_action":
        blocks += _sections(f"*Draft answer*\n{escape(esc.draft_answer)}")
    if decided:
        blocks += _sections(decision_line(esc))
    else:
        buttons = [_button("Approve", APPROVE, run.id, "primary"), _button("Reject", REJECT, run.id, "danger")]
        if esc.kind == "exhausted":
            buttons.append(_button("Retry", RETRY, run.id))
        blocks.append({"type": "actions", "block_id": "review", "elements": buttons})
    blocks += _contexts(f"run `{escape(run.id[:12])}` · escalated {_when(esc.created_at)}")
    return SlackMessage(text=f"Review needed: {_plain(run.question)}", blocks=blocks)


def decision_line(esc: EscalationRecord) -> str:
    template = DECIDED.get(esc.status, "{status}")
    return template.format(
        who=escape(_user_of(esc.decided_by)),
        at=_when(esc.decided_at),
        reason=escape(esc.decision_reason or ""),
        status=esc.status,
    )


def _button(text: str, action_id: str, run_id: str, style: str | None = None) -> dict[str, Any]:
    button = {"type": "button", "text": {"type": "plain_text", "text": text}, "action_id": action_id, "value": run_id}
    if style:
        button["style"] = style
    return button


def _plain(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= 150 else flat[:149] + "…"


def ask_of(run: Run) -> SlackAsk:
    return SlackAsk(
        workspace_id=run.workspace_id or "",
        channel_id=run.channel_id or "",
        thread_ts=run.thread_ts or "",
        trigger_ts=run.trigger_ts or "",
        asker=run.asker,
        question=run.question,
    )


class ReviewDesk:
    """Posts escalations to the reviewer channel and takes the decisions made there."""

    def __init__(
        self,
        app: AsyncApp,
        db: Database,
        client: AsyncWebClient,
        reviewers: Reviewers,
        config: ReviewConfig,
        queue: RunQueue,
        *,
        channel: str | None = None,
    ) -> None:
        self._db = db
        self._client = client
        self._reviewers = reviewers
        self._config = config
        self._queue = queue
        self.channel = channel or config.channel
        app.action(APPROVE)(self._on_approve)
        app.action(REJECT)(self._on_reject)
        app.action(RETRY)(self._on_retry)
        app.view(APPROVE_MODAL)(self._on_approve_submitted)
        app.view(REJECT_MODAL)(self._on_reject_submitted)

    # --- escalations in ----------------------------------------------------------------------------------

    async def post(self, run_id: str) -> None:
        """Post the run's pending escalation in the reviewer channel (once; its ts is kept for updates)."""
        esc, run = await current_escalation(self._db, run_id)
        if esc is None or run is None or esc.status != "pending" or esc.review_ts:
            return
        if not self.channel:
            log.warning("run %s waits for review, but no reviewer channel is set (PARLEY_REVIEW_CHANNEL)", run_id)
            return
        message = review_message(esc, run, await self._permalink(run))
        try:
            response = await self._client.chat_postMessage(
                channel=self.channel, text=message.text, blocks=message.blocks
            )
        except (SlackApiError, SlackClientError, OSError) as exc:
            log.error("could not post run %s to the reviewer channel %s: %s", run_id, self.channel, exc)
            return
        await set_review_message(self._db, esc.id, self.channel, response["ts"])

    async def _permalink(self, run: Run) -> str | None:
        if not run.channel_id or not (run.trigger_ts or run.thread_ts):
            return None
        try:
            response = await self._client.chat_getPermalink(
                channel=run.channel_id, message_ts=run.trigger_ts or run.thread_ts
            )
        except (SlackApiError, SlackClientError, OSError) as exc:
            log.warning("no permalink for run %s: %s", run.id, exc)
            return None
        return response.get("permalink")

    # --- buttons -------------------------------------------------------------------------------------------

    async def _on_approve(self, ack: Any, body: dict[str, Any]) -> None:
        await ack()
        found = await self._allowed(body, "approve")
        if found is None:
            return
        esc, run = found
        if esc.kind == "held_action":
            decided = await settle(
                self._db, run.id, Decision.APPROVED, actor=actor_of(_clicker(body)), run_status=RunStatus.RUNNING
            )
            if await self._after(decided, body):
                self._queue.submit(run.id, ask_of(run), resume_by=actor_of(_clicker(body)))
            return
        draft = (esc.draft_answer or run.answer or "")[:INPUT_CHARS]
        await self._open(body, _answer_modal(run.id, draft))

    async def _on_reject(self, ack: Any, body: dict[str, Any]) -> None:
        await ack()
        found = await self._allowed(body, "reject")
        if found is not None:
            await self._open(body, _reason_modal(found[1].id))

    async def _on_retry(self, ack: Any, body: dict[str, Any]) -> None:
        await ack()
        found = await self._allowed(body, "retry")
        if found is None:
            return
        _, run = found
        # The old run keeps its honest engine outcome (degraded); the new one is linked by retry_of.
        decided = await settle(
            self._db, run.id, Decision.RETRIED, actor=actor_of(_clicker(body)), run_status=RunStatus.DEGRADED
        )
        if await self._after(decided, body):
            retry_id = await enqueue_retry(self._db, run)
            self._queue.submit(retry_id, ask_of(run))

    async def _allowed(self, body: dict[str, Any], attempted: str) -> tuple[EscalationRecord, Run] | None:
        """The escalation and run a click is about, if the clicker may decide and it is still pending."""
        user, run_id = _clicker(body), _run_id(body)
        esc, run = await current_escalation(self._db, run_id)
        if esc is None or run is None:
            await self._ephemeral(body, "This escalation no longer exists.")
            return None
        refusal = await self._reviewers.refusal(user, run.asker)
        if refusal is not None:
            await note_refusal(self._db, run.id, actor_of(user), attempted, refusal)
            await self._ephemeral(body, refusal)
            return None
        if esc.status != "pending":
            await self._ephemeral(body, f"Already decided: {decision_line(esc)}")
            return None
        return esc, run

    async def _after(self, decided: Settled, body: dict[str, Any]) -> bool:
        """Update the reviewer message; tell a latecomer who decided. True when this decision won."""
        if not decided.won:
            if decided.escalation is not None:
                await self._ephemeral(body, f"Already decided: {decision_line(decided.escalation)}")
            return False
        await self._show_decided(decided)
        return True

    # --- modals --------------------------------------------------------------------------------------------

    async def _on_approve_submitted(self, ack: Any, body: dict[str, Any], view: dict[str, Any]) -> None:
        answer = _value(view, ANSWER_BLOCK, ANSWER_INPUT)
        if not answer.strip():
            await ack(response_action="errors", errors={ANSWER_BLOCK: "Write the answer the asker will see."})
            return
        await self._submitted(ack, body, view, Decision.APPROVED, ANSWER_BLOCK, final_answer=answer.strip())

    async def _on_reject_submitted(self, ack: Any, body: dict[str, Any], view: dict[str, Any]) -> None:
        reason = _value(view, REASON_BLOCK, REASON_INPUT)
        if not reason.strip():
            await ack(response_action="errors", errors={REASON_BLOCK: "A reason is required: the asker will read it."})
            return
        await self._submitted(ack, body, view, Decision.REJECTED, REASON_BLOCK, reason=reason.strip())

    async def _submitted(
        self,
        ack: Any,
        body: dict[str, Any],
        view: dict[str, Any],
        decision: Decision,
        block: str,
        *,
        reason: str | None = None,
        final_answer: str | None = None,
    ) -> None:
        user, run_id = body["user"]["id"], view.get("private_metadata", "")
        esc, run = await current_escalation(self._db, run_id)
        if esc is None or run is None:
            await ack(response_action="errors", errors={block: "This escalation no longer exists."})
            return
        refusal = await self._reviewers.refusal(user, run.asker)  # checked again: rights can change meanwhile
        if refusal is not None:
            await note_refusal(self._db, run.id, actor_of(user), decision.value, refusal)
            await ack(response_action="errors", errors={block: refusal})
            return
        decided = await settle(
            self._db, run.id, decision, actor=actor_of(user), reason=reason, final_answer=final_answer
        )
        if not decided.won:
            line = decision_line(decided.escalation) if decided.escalation else "someone else decided"
            await ack(response_action="errors", errors={block: f"Already decided: {line}"})
            return
        await ack()
        await self._show_decided(decided)
        if decision is Decision.APPROVED:
            await self._tell_thread(run, reviewed_answer(final_answer or "", user, run.id))
        else:
            await self._tell_thread(run, rejection(reason or "", user, run.id))

    async def _open(self, body: dict[str, Any], view: dict[str, Any]) -> None:
        try:
            await self._client.views_open(trigger_id=body["trigger_id"], view=view)
        except (SlackApiError, SlackClientError, OSError) as exc:
            log.warning("could not open the review modal: %s", exc)
            await self._ephemeral(body, "Slack did not open the form in time; please click again.")

    # --- telling people ------------------------------------------------------------------------------------

    async def _show_decided(self, decided: Settled) -> None:
        esc, run = decided.escalation, decided.run
        if esc is None or run is None or not esc.review_ts or not esc.review_channel:
            return
        message = review_message(esc, run, await self._permalink(run), decided=True)
        try:
            await self._client.chat_update(
                channel=esc.review_channel, ts=esc.review_ts, text=message.text, blocks=message.blocks
            )
        except (SlackApiError, SlackClientError, OSError) as exc:
            log.warning("could not update the review message of run %s: %s", run.id, exc)

    async def _tell_thread(self, run: Run, message: SlackMessage) -> None:
        if not run.channel_id or not run.thread_ts:
            return
        try:
            await self._client.chat_postMessage(
                channel=run.channel_id, thread_ts=run.thread_ts, text=message.text, blocks=message.blocks
            )
        except (SlackApiError, SlackClientError, OSError) as exc:
            log.warning("could not tell the thread of run %s: %s", run.id, exc)

    async def _ephemeral(self, body: dict[str, Any], text: str) -> None:
        channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id")
        if not channel:
            return
        try:
            await self._client.chat_postEphemeral(channel=channel, user=_clicker(body), text=text)
        except (SlackApiError, SlackClientError, OSError) as exc:
            log.warning("could not answer %s privately: %s", _clicker(body), exc)

    # --- the timed jobs' notifier (bot.jobs.notifier.Notifier) ---------------------------------------------

    async def remind(self, escalation: EscalationRecord, run: Run) -> None:
        if not escalation.review_channel or not escalation.review_ts:
            await self.post(run.id)
            return
        waited = int((datetime.now(UTC) - escalation.created_at).total_seconds() // 60)
        await self._client.chat_postMessage(
            channel=escalation.review_channel,
            thread_ts=escalation.review_ts,
            text=f"⏰ Still waiting for a decision ({waited} min). Approve or reject above.",
        )

    async def expired(self, escalation: EscalationRecord, run: Run) -> None:
        await self._show_decided(Settled(True, escalation, run))
        await self._tell_thread(
            run,
            _notice(
                f"⌛ No reviewer decided within {self._config.expire_after_hours:g} h, so this request expired. "
                "Nothing held was done; ask again if you still need it.",
                run.id,
                "⌛ expired",
            ),
        )

    async def stale_ended(self, run: Run) -> None:
        stopped = run.answer or "Parley stopped before it finished this question."
        await self._tell_thread(run, _notice(stopped, run.id, f"⚠️ {run.status} · {run.termination_reason}"))


def reviewed_answer(answer: str, reviewer: str, run_id: str) -> SlackMessage:
    blocks = [
        *_sections(escape(answer)),
        *_contexts(f"✅ Reviewed and approved by <@{escape(reviewer)}> · run `{escape(run_id[:12])}`"),
    ]
    return SlackMessage(text=_plain(answer), blocks=blocks)


def rejection(reason: str, reviewer: str, run_id: str) -> SlackMessage:
    text = f"⛔ A reviewer (<@{escape(reviewer)}>) declined this request: {escape(reason)}"
    return _notice(text, run_id, "⛔ rejected", escaped=True)


def _notice(text: str, run_id: str, status: str, *, escaped: bool = False) -> SlackMessage:
    body = text if escaped else escape(text)
    blocks = [*_sections(body), *_contexts(f"{status} · run `{escape(run_id[:12])}`")]
    return SlackMessage(text=_plain(" ".join(_split(body, 4000))), blocks=blocks)


def _answer_modal(run_id: str, draft: str) -> dict[str, Any]:
    return _modal(
        APPROVE_MODAL,
        run_id,
        "Approve with answer",
        "Approve",
        ANSWER_BLOCK,
        ANSWER_INPUT,
        "The answer posted in the thread (edit the draft as needed)",
        initial=draft,
    )


def _reason_modal(run_id: str) -> dict[str, Any]:
    return _modal(REJECT_MODAL, run_id, "Reject", "Reject", REASON_BLOCK, REASON_INPUT, "Why? The asker will read it")


def _modal(
    callback: str, run_id: str, title: str, submit: str, block: str, action: str, label: str, *, initial: str = ""
) -> dict[str, Any]:
    element: dict[str, Any] = {"type": "plain_text_input", "action_id": action, "multiline": True}
    element["max_length"] = INPUT_CHARS
    if initial:
        element["initial_value"] = initial
    return {
        "type": "modal",
        "callback_id": callback,
        "private_metadata": run_id,
        "title": {"type": "plain_text", "text": title},
        "submit": {"type": "plain_text", "text": submit},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            {"type": "input", "block_id": block, "label": {"type": "plain_text", "text": label}, "element": element}
        ],
    }


def _clicker(body: dict[str, Any]) -> str:
    return str((body.get("user") or {}).get("id") or "")


def _run_id(body: dict[str, Any]) -> str:
    actions = body.get("actions") or [{}]
    return str(actions[0].get("value") or "")


def _value(view: dict[str, Any], block: str, action: str) -> str:
    values = ((view.get("state") or {}).get("values") or {}).get(block) or {}
    return str((values.get(action) or {}).get("value") or "")
