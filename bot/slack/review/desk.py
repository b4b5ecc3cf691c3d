"""The reviewer desk: the decisions made in the reviewer channel — Approve / Reject / Retry buttons and their
forms, who may decide, and exactly one decision.

Only the run id travels in a button or a modal; everything else is read from the store through the run service.
Who may decide is checked on the click and again on the modal's submission; refusals are ephemeral and audited.
The decision itself is the service's (one conditional UPDATE): whoever comes second is told who decided.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncApp

from bot.core import (
    DECISIONS,
    Decision,
    DecisionRefused,
    Escalated,
    EscalationKind,
    RunService,
    Settled,
)
from bot.slack.gateway import SlackGateway
from bot.slack.interactions import Interaction, answer_privately, open_form, read_interaction
from bot.slack.review.blocks import (
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
    reason_modal,
)
from bot.slack.review.reviewers import Reviewers
from bot.wording import InReview

log = logging.getLogger(__name__)


def actor_of(user: str) -> str:
    return f"slack:{user}"


class ReviewDesk:
    """Takes the decisions made in the reviewer channel: buttons, modals, rights, exactly one decision."""

    def __init__(self, app: AsyncApp, service: RunService, reviewers: Reviewers, gateway: SlackGateway) -> None:
        self._service = service
        self._gateway = gateway
        self._reviewers = reviewers
        app.action(APPROVE)(self._on_approve)
        app.action(REJECT)(self._on_reject)
        app.action(RETRY)(self._on_retry)
        app.view(APPROVE_MODAL)(self._on_approve_submitted)
        app.view(REJECT_MODAL)(self._on_reject_submitted)

    # --- buttons -------------------------------------------------------------------------------------------

    async def _on_approve(self, ack: Any, body: dict[str, Any]) -> None:
        await ack()
        found = await self._allowed(body, Decision.APPROVED)
        if found is None:
            return
        esc, run = found.escalation, found.run
        if esc.kind is EscalationKind.HELD_ACTION:
            # Resumed by the service's pool: a new message below (the asker is notified) becomes its answer.
            decided = await self._service.approve_held(run.id, actor=actor_of(read_interaction(body).clicker))
            await self._won(decided, body)
            return
        await self._open(read_interaction(body), answer_modal(run.id, esc.draft_answer or run.answer or ""))

    async def _on_reject(self, ack: Any, body: dict[str, Any]) -> None:
        await ack()
        found = await self._allowed(body, Decision.REJECTED)
        if found is not None:
            await self._open(read_interaction(body), reason_modal(found.run.id))

    async def _on_retry(self, ack: Any, body: dict[str, Any]) -> None:
        await ack()
        found = await self._allowed(body, Decision.RETRIED)
        if found is None:
            return
        # Queued again and answered by the service's pool, in the run's thread.
        retried = await self._service.retry(found.run.id, actor=actor_of(read_interaction(body).clicker))
        await self._won(retried.settled, body)

    async def _allowed(self, body: dict[str, Any], attempted: Decision) -> Escalated | None:
        """The escalation a click is about, if the clicker may decide, it is still pending, and its kind offers
        the decision."""
        clicked = read_interaction(body)
        user, run_id = clicked.clicker, clicked.value
        found = await self._service.escalation_of(run_id)
        if found is None:
            await answer_privately(self._gateway, clicked, InReview.GONE)
            return None
        esc, run = found.escalation, found.run
        refusal = await self._reviewers.refusal(user, run.asker)
        if refusal is not None:
            await self._service.note_refusal(run.id, actor_of(user), attempted.value, refusal)
            await answer_privately(self._gateway, clicked, refusal)
            return None
        if not esc.pending:
            await answer_privately(self._gateway, clicked, InReview.ALREADY_DECIDED.format(line=decision_line(esc)))
            return None
        if attempted not in DECISIONS[esc.kind]:  # a button this kind never offered (an old or forged one)
            await answer_privately(self._gateway, clicked, InReview.NOT_OFFERED)
            return None
        return found

    async def _won(self, decided: Settled, body: dict[str, Any]) -> bool:
        """True when this decision won; a latecomer is told privately who decided."""
        if not decided.won and decided.escalation is not None:
            line = decision_line(decided.escalation)
            await answer_privately(self._gateway, read_interaction(body), InReview.ALREADY_DECIDED.format(line=line))
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
        found = await self._service.escalation_of(run_id)
        if found is None:
            await ack(response_action="errors", errors={block: InReview.GONE})
            return
        run = found.run
        refusal = await self._reviewers.refusal(user, run.asker)  # checked again: rights can change meanwhile
        if refusal is not None:
            await self._service.note_refusal(run.id, actor_of(user), decision.value, refusal)
            await ack(response_action="errors", errors={block: refusal})
            return
        try:
            decided = await self._service.decide(
                run.id, decision, actor=actor_of(user), reason=reason, answer=final_answer, announce=False
            )
        except DecisionRefused:
            await ack(response_action="errors", errors={block: InReview.NOT_OFFERED})
            return
        if not decided.won:
            line = decision_line(decided.escalation) if decided.escalation else InReview.SOMEONE_DECIDED
            await ack(response_action="errors", errors={block: InReview.ALREADY_DECIDED.format(line=line)})
            return
        await ack()  # Slack's 3 seconds: the announcement comes after
        await self._service.announce(decided)

    async def _open(self, clicked: Interaction, view: dict[str, Any]) -> None:
        if not await open_form(self._gateway, clicked, view, "the review form"):
            await answer_privately(self._gateway, clicked, InReview.FORM_NOT_OPENED)
