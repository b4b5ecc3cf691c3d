"""Block Kit rendering of what people see in a Slack thread: answers, partial answers, refusals, progress.

Pure functions, no I/O. Every piece of user or tool text goes through `escape`, and nothing is ever cut to
fit Slack's limits: long text is split into more sections, and past a message's limits into more messages.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agent import REPLAY_NOTICE, Citation, OutcomeKind, RunResult, RunStatus, TerminationReason, shorten
from bot.slack.feedback_blocks import feedback_block
from bot.wording import InThread

STATUS_EMOJI = {
    RunStatus.QUEUED: "🕒",
    RunStatus.RUNNING: "⏳",
    RunStatus.SOLVED: "✅",
    RunStatus.DEGRADED: "⚠️",
    RunStatus.REFUSED: "⛔",
    RunStatus.AWAITING_REVIEW: "⏸️",
    RunStatus.APPROVED: "👍",
    RunStatus.REJECTED: "🚫",
    RunStatus.EXPIRED: "⌛",
}
# The final answers people are asked to judge (👍 / 👎): a cited answer and an honest partial one.
FEEDBACK_OUTCOMES = frozenset({OutcomeKind.ANSWERED, OutcomeKind.PARTIAL})
UNKNOWN_STATUS_EMOJI = "❔"  # a status this version does not know (a row written by a newer one)
# An answer's status line: an answer approved by a reviewer is shown as answered, a partial one as partial.
_SHOWN_STATUS = {OutcomeKind.ANSWERED: RunStatus.SOLVED, OutcomeKind.PARTIAL: RunStatus.DEGRADED}

# Block Kit limits (https://docs.slack.dev/reference/block-kit/blocks).
SECTION_CHARS = 3000
CONTEXT_CHARS = 2000
HEADER_CHARS = 150
MESSAGE_BLOCKS = 50
# Undocumented: chat.postMessage answers msg_blocks_too_long from about 12,000 characters of block text
# in total (slackapi/bolt-js#2509, #2867), far below 50 full sections; stay well clear of it.
MESSAGE_CHARS = 8000
TEXT_CHARS = 4000  # the plain-text fallback (notifications, screen readers)
RUN_ID_CHARS = 12
PROGRESS_LINES = 15
PROGRESS_LINE_CHARS = 200
PROGRESS_QUESTION_CHARS = 300
PROBLEM_CHARS = 500

ProgressState = Literal["queued", "working"]

_ZWJ = "\u200d"
_BROADCAST = re.compile(r"@(?=channel|here|everyone)", re.IGNORECASE)
# Where long text may be split, best first: paragraph, line, sentence, word (anything else is a hard cut).
_BOUNDARIES = (
    re.compile(r"\n[ \t]*\n"),
    re.compile(r"\n"),
    re.compile(r"[.!?;:]\s|[。！？；]"),
    re.compile(r"\s"),
)
_ENTITY = re.compile(r"&[a-z]{0,3}$")
# A stopped run's explanation names who stopped it as Slack's stop wrote them (`<@U…>`): shown as a mention.
_STOPPED_BY = re.compile(r"^stopped by <@([UW][A-Z0-9]{1,20})>")


@dataclass(frozen=True)
class SlackMessage:
    """One message to post (or to update in place): plain-text fallback, Block Kit blocks, and the message
    metadata apps read back (`bot.slack.reply.marks`), if any."""

    text: str
    blocks: list[dict[str, Any]] = field(default_factory=list)
    metadata: dict[str, Any] | None = None
    closing: int = 0  # how many of the last blocks are the answer's closing blocks (`closing_blocks`)

    @property
    def body(self) -> list[dict[str, Any]]:
        """The blocks before the closing ones: what a streamed reply appends as text."""
        return self.blocks[: len(self.blocks) - self.closing]

    @property
    def closing_part(self) -> list[dict[str, Any]]:
        return self.blocks[len(self.blocks) - self.closing :]


def escape(text: str) -> str:
    """Text from a person or a tool, made inert for mrkdwn: no links, mentions or broadcasts can come from it."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _BROADCAST.sub("@" + _ZWJ, text)


def status_emoji(status: RunStatus | str) -> str:
    """The emoji a run's status is shown with, wherever it is shown."""
    try:
        return STATUS_EMOJI[RunStatus(status)]
    except ValueError:
        return UNKNOWN_STATUS_EMOJI


def answer_messages(result: RunResult, *, feedback: bool = False) -> list[SlackMessage]:
    """A finished run as one or more messages: a cited answer, an honest partial answer, or a refusal; with
    `feedback`, an answer or partial answer ends with the 👍 / 👎 buttons (as posted in its thread)."""
    escalation = result.escalation
    match result.outcome:
        case OutcomeKind.ANSWERED:
            blocks = sections(escape(result.answer) if result.answer.strip() else InThread.EMPTY_ANSWER)
        case OutcomeKind.HELD if escalation is not None:
            held = "\n".join(f"• {escape(held_call_text(c.tool, c.arguments))}" for c in escalation.held_calls)
            blocks = [
                header(InThread.HELD_HEADER),
                *sections(f"*{InThread.WHY}*\n{escape(escalation.message)}"),
                *sections(f"*{InThread.HELD}*\n{held}"),
                *sections(InThread.HELD_NOTE),
                *[block for part in (_bullets(InThread.DONE, result.completed),) if part for block in sections(part)],
            ]
        case OutcomeKind.REFUSED:
            reason = escalation.message if escalation else (result.answer or InThread.NO_REASON)
            blocks = [
                header(InThread.REFUSED_HEADER),
                *sections(escape(reason)),
                *sections(InThread.REVIEW_NOTE),
            ]
        case OutcomeKind.ESCALATED:
            why = escalation.message if escalation is not None else result.termination_reason.value
            blocks = [
                header(InThread.PARTIAL_HEADER),
                *_partial(result),
                *sections(InThread.REVIEWING.format(why=escape(why))),
            ]
        case _:
            blocks = [header(InThread.PARTIAL_HEADER), *_partial(result)]
    return pack(blocks, closing=closing_blocks(result, feedback=feedback))


def closing_blocks(result: RunResult, *, feedback: bool = False) -> list[dict[str, Any]]:
    """What closes every final answer, in both media: its sources and its status line, and with `feedback` an
    answer's or partial answer's 👍 / 👎 buttons. The chat.update reply shows them under the answer; a streamed
    reply is stopped with them (`chat.stopStream` blocks)."""
    closing = [*sources(result.citations), _status_line(result)]
    if feedback and result.outcome in FEEDBACK_OUTCOMES:
        closing.append(feedback_block(result.run_id))
    return closing


def progress_blocks(question: str, lines: Sequence[str], *, state: ProgressState, ahead: int = 0) -> SlackMessage:
    """The live progress placeholder: where the run stands and its latest steps (earlier ones folded)."""
    headline = _queued(ahead) if state == "queued" else InThread.WORKING
    blocks = [
        section(headline),
        *contexts(InThread.QUESTION.format(question=escape(shorten(question, PROGRESS_QUESTION_CHARS)))),
    ]
    shown = [escape(shorten(line, PROGRESS_LINE_CHARS)) for line in lines[-PROGRESS_LINES:]]
    while len("\n".join(shown)) > SECTION_CHARS:
        shown.pop(0)
    if folded := len(lines) - len(shown):
        blocks.extend(contexts(InThread.FOLDED.format(count=count_of(folded, "earlier line"))))
    if shown:
        blocks.append(section("\n".join(shown)))
    return SlackMessage(text=headline, blocks=blocks)


def failure_message(problem: str, run_id: str | None) -> SlackMessage:
    """Parley itself failed (LLM, database, a bug): say so calmly; `problem` is a sentence, never a traceback."""
    first_line = next((line.strip() for line in problem.splitlines() if line.strip()), "")
    sentence = shorten(first_line, PROBLEM_CHARS).rstrip(".") + "."
    blocks = [section(InThread.FAILURE.format(problem=escape(sentence)))]
    if run_id:
        blocks.extend(contexts(InThread.FAILURE_RUN.format(run=escape(run_id[:RUN_ID_CHARS]))))
    return SlackMessage(text=_fallback(blocks), blocks=blocks)


def queued_message(position: int) -> SlackMessage:
    """The placeholder of a run waiting for a worker; `position` is how many runs are ahead of it."""
    headline = _queued(position)
    return SlackMessage(text=headline, blocks=[section(headline), *contexts(InThread.QUEUED_NOTE)])


def held_call_text(tool: str, arguments: dict[str, Any]) -> str:
    """A held call exactly as it will run: the tool and its arguments as JSON (not yet escaped)."""
    return f"{tool}({json.dumps(arguments, ensure_ascii=False, sort_keys=True)})"


def _partial(result: RunResult) -> list[dict[str, Any]]:
    degraded = result.degraded
    explanation = degraded.explanation if degraded else result.answer
    verified = degraded.verified if degraded else []
    parts = [
        _why(result, explanation),
        _bullets(InThread.VERIFIED, verified),
        _bullets(InThread.UNCHECKED, degraded.unchecked if degraded else []),
        _bullets(InThread.FOUND if not verified else InThread.FOUND_MORE, degraded.known_facts if degraded else []),
        _bullets(InThread.DONE, result.completed),
        _bullets(InThread.MISSING, result.missing),
        _bullets(InThread.NEXT_STEPS, degraded.next_steps if degraded else []),
    ]
    return [block for part in parts if part for block in sections(part)]


def _why(result: RunResult, explanation: str) -> str:
    stopped = _STOPPED_BY.match(explanation)
    if result.termination_reason is TerminationReason.STOPPED_BY_USER and stopped is not None:
        return InThread.STOPPED_BY.format(person=f"<@{stopped.group(1)}>")
    return f"*{InThread.WHY}*\n{escape(explanation)}"


def _bullets(title: str, items: Sequence[str]) -> str:
    if not items:
        return ""
    return f"*{title}*\n" + "\n".join(f"• {escape(item)}" for item in items)


def outcome_line(outcome: OutcomeKind) -> str:
    """A run's outcome in a few words, as Home and `/parley` show it under the run."""
    return f"_{InThread.OUTCOME[outcome]}_"


def sources(citations: Sequence[Citation]) -> list[dict[str, Any]]:
    """An answer's sources, one footnote a line: the same under an answer, in `/parley show` and for reviewers."""
    if not citations:
        return []
    return contexts(f"*{InThread.SOURCES}*\n" + "\n".join(escape(footnote(c)) for c in citations))


def footnote(citation: Citation) -> str:
    """One source as people read it in Slack (not yet escaped): `[1] get_weather(city=Paris) · step 1`."""
    # Keys sorted: stored arguments come back in another order (JSONB's), and a run reads the same live and later.
    arguments = ", ".join(f"{key}={_argument(value)}" for key, value in sorted(citation.arguments.items()))
    return InThread.FOOTNOTE.format(marker=citation.marker, tool=citation.tool, arguments=arguments, step=citation.step)


def _argument(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _status_line(result: RunResult) -> dict[str, Any]:
    emoji = status_emoji(_SHOWN_STATUS.get(result.outcome, result.status))
    line = InThread.STATUS_LINE if result.status is RunStatus.SOLVED else InThread.STATUS_REASON_LINE
    text = line.format(
        emoji=emoji,
        status=result.status.value,
        reason=result.termination_reason.value,
        steps=count_of(result.steps, "step"),
        run=escape(result.run_id[:RUN_ID_CHARS]),
    )
    elements = [_mrkdwn(text)] + ([_mrkdwn(REPLAY_NOTICE)] if result.replayed else [])
    return {"type": "context", "elements": elements}


def _queued(ahead: int) -> str:
    return InThread.QUEUED_BEHIND.format(count=count_of(ahead, "run")) if ahead > 0 else InThread.QUEUED_NEXT


def header(text: str) -> dict[str, Any]:
    return {"type": "header", "text": {"type": "plain_text", "text": text[:HEADER_CHARS], "emoji": True}}


def _mrkdwn(text: str) -> dict[str, str]:
    return {"type": "mrkdwn", "text": text}


def section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": _mrkdwn(text)}


def sections(text: str) -> list[dict[str, Any]]:
    return [section(piece) for piece in split_text(text, SECTION_CHARS)]


def contexts(text: str) -> list[dict[str, Any]]:
    # One element per context block: several elements would sit side by side, not read top to bottom.
    return [{"type": "context", "elements": [_mrkdwn(piece)]} for piece in split_text(text, CONTEXT_CHARS)]


def split_text(text: str, limit: int) -> list[str]:
    """Escaped mrkdwn in pieces of at most `limit` characters that join back to exactly `text`.

    Splits at the last paragraph break in the second half of the window, else the last line break, sentence
    end or space, else hard (never inside an `&amp;`-style entity or a defused `@channel`). Only pieces that
    are pure whitespace are dropped (Slack refuses empty section text).
    """
    pieces: list[str] = []
    while len(text) > limit:
        cut = _cut(text, limit)
        pieces.append(text[:cut])
        text = text[cut:]
    pieces.append(text)
    return [piece for piece in pieces if piece.strip()]


def _cut(text: str, limit: int) -> int:
    window = text[:limit]
    for boundary in _BOUNDARIES:
        ends = [match.end() for match in boundary.finditer(window)]
        if ends and ends[-1] >= limit // 2:
            return ends[-1]
    cut = limit
    if entity := _ENTITY.search(window):
        cut = entity.start()
    if text[cut] == _ZWJ and text[cut - 1] == "@":
        cut -= 1
    return max(cut, 1)


def pack(blocks: list[dict[str, Any]], *, closing: Sequence[dict[str, Any]] = ()) -> list[SlackMessage]:
    """Blocks in as few messages as Slack's limits allow; `closing` blocks come last, counted in `.closing` of the
    messages they land in."""
    messages: list[SlackMessage] = []
    current: list[dict[str, Any]] = []
    chars = 0
    closing_ids = {id(block) for block in closing}
    for block in [*blocks, *closing]:
        size = sum(len(text) for text in _texts(block))
        if current and (len(current) >= MESSAGE_BLOCKS or chars + size > MESSAGE_CHARS):
            messages.append(_packed(current, closing_ids))
            current, chars = [], 0
        current.append(block)
        chars += size
    messages.append(_packed(current, closing_ids))
    return messages


def _packed(blocks: list[dict[str, Any]], closing_ids: set[int]) -> SlackMessage:
    closing = sum(1 for block in blocks if id(block) in closing_ids)
    return SlackMessage(text=_fallback(blocks), blocks=blocks, closing=closing)


def _texts(block: dict[str, Any]) -> list[str]:
    if "text" in block:
        return [block["text"]["text"]]
    return [text for element in block.get("elements", []) if isinstance(text := element.get("text"), str)]


def _fallback(blocks: list[dict[str, Any]]) -> str:
    # Notification text only: the blocks carry everything, so this one may end in "…".
    text = "\n".join(text for block in blocks for text in _texts(block))
    if len(text) <= TEXT_CHARS:
        return text
    head = text[: TEXT_CHARS - 1]
    return head[: entity.start()] + "…" if (entity := _ENTITY.search(head)) else head + "…"


def count_of(n: int, word: str) -> str:
    return f"{n} {word if n == 1 else word + 's'}"
