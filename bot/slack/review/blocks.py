"""What reviewers and askers see of a review, as Block Kit: the reviewer message, decisions, notices, forms.

Pure functions, no I/O (the notifier and the desk of `bot.slack.review` send them). Text from people and tools
goes through `escape`; long parts are shortened only with a note saying how much more there is and where.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from agent import shorten
from bot.core import DECISIONS, Decision, Escalated, EscalationKind, EscalationStatus, StoredEscalation
from bot.slack.blocks import SlackMessage, contexts, escape, footnote, header, held_call_text, sections, split_text
from bot.slack.listings import person
from bot.wording import InReview

APPROVE = "parley_review_approve"
REJECT = "parley_review_reject"
RETRY = "parley_review_retry"
APPROVE_MODAL = "parley_review_approve_modal"
REJECT_MODAL = "parley_review_reject_modal"
ANSWER_BLOCK, ANSWER_INPUT = "answer", "answer_input"
REASON_BLOCK, REASON_INPUT = "reason", "reason_input"
INPUT_CHARS = 3000  # plain_text_input's limit
# The review message's budget (one message, ≤ 50 blocks, well under Slack's ~12,000 characters of text).
QUESTION_CHARS = 1500
DRAFT_CHARS = 2000
HELD_CHARS = 2500
HELD_PREVIEW_CHARS = 500
LIST_ITEMS = 10
ITEM_CHARS = 200
NOTIFICATION_CHARS = 150  # a message's `text`: what a notification shows

HELD_STATUS = {EscalationStatus.APPROVED: "▶️", EscalationStatus.REJECTED: "⛔", EscalationStatus.EXPIRED: "⌛"}


def who(actor: str | None) -> str:
    """A decider as people read it: `slack:U…` as a mention, anyone else (`cli:carol`) as inert text."""
    return person((actor or "?").removeprefix("slack:"))


def _when(at: datetime | None) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if at else "?"


def review_message(escalated: Escalated, permalink: str | None, *, decided: bool = False) -> SlackMessage:
    """The reviewer-channel message: what was asked, why it is here, what was done, what is held, the draft.

    It shows the run as it went to review (`Escalated.as_escalated`), the same before the decision and after it;
    the escalation's kind names it and says which decisions it offers (`DECISIONS`). One message (its buttons
    and later its decision live on one ts), so long parts are shortened within a budget — each time saying so
    and where the whole text is — and held arguments too long for it are posted in full in the message's
    thread (`held_in_full`). Nothing is cut without saying so.
    """
    esc, run = escalated.escalation, escalated.as_escalated
    result = run.result
    more = f"`/parley show {escape(run.id[:12])}`"
    blocks: list[dict[str, Any]] = [header(InReview.TITLE[esc.kind])]
    asked = InReview.QUESTION.format(asker=person(run.asker))
    asked += f" · <{permalink}|thread>" if permalink else ""
    blocks += sections(f"{asked}\n{_within(run.question, QUESTION_CHARS, more)}")
    why = InReview.WHY.format(why=escape(esc.message or esc.reason), reason=escape(esc.reason), level=escape(esc.level))
    blocks += sections(why)
    if result is not None:
        for heading, items in ((InReview.DONE, result.completed), (InReview.MISSING, result.missing)):
            if items:
                blocks += sections(f"{heading}\n" + _listed(items, more))
        if result.citations:
            blocks += contexts(f"{InReview.SOURCES}\n" + _listed([footnote(c) for c in result.citations], more))
    if esc.held_calls:
        held = _held(esc)
        if len(held) <= HELD_CHARS:
            blocks += sections(f"{InReview.HELD}\n```{escape(held)}```")
        else:
            preview = f"{InReview.HELD}\n```{escape(held[:HELD_PREVIEW_CHARS])}…```\n"
            blocks += sections(preview + InReview.HELD_TOO_LONG.format(chars=len(held)))
    if result is not None and result.answer and esc.kind is not EscalationKind.HELD_ACTION:
        heading = InReview.GIVEN if esc.kind is EscalationKind.FEEDBACK else InReview.DRAFT
        blocks += sections(f"{heading}\n{_within(result.answer, DRAFT_CHARS, InReview.IN_THE_FORM)}")
    if decided:
        blocks += sections(decision_line(esc))
    else:
        offered = DECISIONS[esc.kind]
        labels = InReview.BUTTONS.get(esc.kind, {})
        buttons = [
            _button(labels.get(decision, default), action, run.id, style)
            for decision, default, action, style in (
                (Decision.APPROVED, InReview.APPROVE, APPROVE, "primary"),
                (Decision.REJECTED, InReview.REJECT, REJECT, "danger"),
                (Decision.RETRIED, InReview.RETRY, RETRY, None),
            )
            if decision in offered
        ]
        blocks.append({"type": "actions", "block_id": "review", "elements": buttons})
    blocks += contexts(InReview.FOOTER.format(run=escape(run.id[:12]), at=_when(esc.created_at)))
    return SlackMessage(
        text=InReview.NOTIFICATION.format(question=shorten(run.question, NOTIFICATION_CHARS)), blocks=blocks
    )


def _held(esc: StoredEscalation, bullet: str = "") -> str:
    return "\n".join(bullet + held_call_text(call.tool, call.arguments) for call in esc.held_calls)


def held_decided(esc: StoredEscalation, run_id: str) -> SlackMessage:
    """The asker's held notice once people decided: approved (it runs now, the answer follows below), or
    rejected / expired (nothing held was done)."""
    held = escape(_held(esc, "• "))
    approved = esc.status == EscalationStatus.APPROVED
    blocks = [
        header(InReview.HELD_APPROVED if approved else InReview.HELD_NOT_DONE),
        *sections(f"{InReview.WHY_HELD}\n{escape(esc.message or esc.reason)}"),
        *sections(f"{InReview.HELD_RUN if approved else InReview.HELD_NEVER_RUN}\n{held}"),
        *sections(decision_line(esc) + (InReview.ANSWER_FOLLOWS if approved else "")),
        *contexts(f"{HELD_STATUS.get(esc.status, '')} {esc.status} · run `{escape(run_id[:12])}`"),
    ]
    return SlackMessage(text=InReview.HELD_NOTIFICATION.format(status=esc.status), blocks=blocks)


def held_in_full(esc: StoredEscalation) -> list[SlackMessage]:
    """Held arguments too long for the review message, in full, in as many thread replies as they need."""
    held = _held(esc)
    if len(held) <= HELD_CHARS:
        return []
    pieces = split_text(escape(held), HELD_CHARS)
    return [
        SlackMessage(
            text=InReview.HELD_PART.format(n=n, of=len(pieces)),
            blocks=sections(f"*{InReview.HELD_PART.format(n=n, of=len(pieces))}*\n```{piece}```"),
        )
        for n, piece in enumerate(pieces, start=1)
    ]


def _within(text: str, limit: int, where: str) -> str:
    """`text` escaped, shortened to `limit` characters if need be, saying how much more there is and where."""
    if len(text) <= limit:
        return escape(text)
    return f"{escape(text[:limit])}… " + InReview.MORE_CHARACTERS.format(count=len(text) - limit, where=where)


def _listed(items: list[str], where: str) -> str:
    shown = [f"• {escape(shorten(item, ITEM_CHARS))}" for item in items[:LIST_ITEMS]]
    if len(items) > LIST_ITEMS:
        shown.append(InReview.MORE_ITEMS.format(count=len(items) - LIST_ITEMS, where=where))
    return "\n".join(shown)


def decision_line(esc: StoredEscalation) -> str:
    template = InReview.DECIDED.get(esc.status, "{status}")
    return template.format(
        who=who(esc.decided_by),
        at=_when(esc.decided_at),
        reason=escape(esc.decision_reason or ""),
        status=esc.status,
    )


def _button(text: str, action_id: str, run_id: str, style: str | None = None) -> dict[str, Any]:
    button = {"type": "button", "text": {"type": "plain_text", "text": text}, "action_id": action_id, "value": run_id}
    if style:
        button["style"] = style
    return button


def reviewed_answer(answer: str, reviewer: str, run_id: str) -> SlackMessage:
    """The answer a reviewer wrote (or edited from the draft); `reviewer` is an actor (`slack:U…`, `cli:…`)."""
    blocks = [
        *sections(escape(answer)),
        *contexts(InReview.REVIEWED.format(who=who(reviewer), run=escape(run_id[:12]))),
    ]
    return SlackMessage(text=shorten(answer, NOTIFICATION_CHARS), blocks=blocks)


def rejection(reason: str, reviewer: str, run_id: str) -> SlackMessage:
    text = InReview.REJECTED.format(who=who(reviewer), reason=escape(reason))
    return notice(text, run_id, "⛔ rejected", escaped=True)


def expiry(hours: float, run_id: str) -> SlackMessage:
    text = InReview.EXPIRED.format(hours=hours)
    return notice(text, run_id, "⌛ expired")


def notice(text: str, run_id: str, status: str, *, escaped: bool = False) -> SlackMessage:
    body = text if escaped else escape(text)
    blocks = [*sections(body), *contexts(f"{status} · run `{escape(run_id[:12])}`")]
    return SlackMessage(text=shorten(" ".join(split_text(body, 4000)), NOTIFICATION_CHARS), blocks=blocks)


def answer_modal(run_id: str, draft: str) -> dict[str, Any]:
    """The answer form, prefilled with the draft; a draft longer than the form holds is said to be cut."""
    modal = _modal(
        APPROVE_MODAL,
        run_id,
        InReview.ANSWER_FORM_TITLE,
        InReview.APPROVE,
        ANSWER_BLOCK,
        ANSWER_INPUT,
        InReview.ANSWER_FORM_LABEL,
        initial=draft[:INPUT_CHARS],
    )
    if len(draft) > INPUT_CHARS:
        note = InReview.DRAFT_CUT.format(chars=len(draft), holds=INPUT_CHARS, run=run_id[:12])
        modal["blocks"].insert(0, {"type": "context", "elements": [{"type": "mrkdwn", "text": note}]})
    return modal


def reason_modal(run_id: str) -> dict[str, Any]:
    return _modal(
        REJECT_MODAL, run_id, InReview.REJECT, InReview.REJECT, REASON_BLOCK, REASON_INPUT, InReview.REASON_LABEL
    )


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
        "close": {"type": "plain_text", "text": InReview.CANCEL},
        "blocks": [
            {"type": "input", "block_id": block, "label": {"type": "plain_text", "text": label}, "element": element}
        ],
    }
