"""`/parley`: a person's history in Slack, answered at once and only to them (ephemeral).

    /parley runs [STATUS]   the newest runs you asked (a reviewer: everyone's), only of STATUS if given
    /parley show RUN_ID     one run, by id or a unique prefix of 6+ characters: to its asker or a reviewer
    /parley stop [RUN_ID]   stop a run (your newest one without an id): its asker or a reviewer
    /parley help            how to use it

The answer rides on the acknowledgement, which Slack wants within 3 seconds, so every read is bounded
(`history.reading`). A run too long for one message goes on in more ephemeral messages through the command's
response_url; nothing is cut.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError
from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncRespond

from agent import OutcomeKind, RunStatus, shorten
from bot.core import (
    MIN_PREFIX,
    AmbiguousRun,
    History,
    RunFilter,
    RunNotFound,
    StoredEscalation,
    StoredRun,
    StoredToolCall,
    StoredTrace,
)
from bot.slack.blocks import (
    RUN_ID_CHARS,
    SlackMessage,
    contexts,
    count_of,
    escape,
    header,
    outcome_line,
    pack,
    section,
    sections,
    sources,
    status_emoji,
)
from bot.slack.gateway import SlackFailure, slack_call
from bot.slack.listings import HistoryUnavailable, feedback_entry, person, reading, run_entry, when
from bot.slack.review.reviewers import Reviewers
from bot.wording import InCommand

log = logging.getLogger(__name__)

COMMAND = "/parley"
LIST_SIZE = 15
STEP_LINES = 20
ARGUMENT_CHARS = 120
RUN_ID_INPUT_CHARS = 64  # a run id is at most 64 characters (runs.id)
VALID_STATUSES = ", ".join(f"`{status.value}`" for status in RunStatus)

USAGE = "\n".join(
    [
        "*Parley's history, just for you*",
        "`/parley runs` — your newest runs (reviewers see everyone's)",
        f"`/parley runs STATUS` — only the runs with that status: {VALID_STATUSES}",
        f"`/parley show RUN_ID` — one run in full (its id, or its first {MIN_PREFIX} or more characters)",
        "`/parley stop [RUN_ID]` — stop a run under way (without an id: your newest one)",
        "`/parley help` — this help",
    ]
)
NEED_RUN_ID = f"Which run? `/parley show RUN_ID` — its id, or its first {MIN_PREFIX} or more characters."
TOO_SHORT = f" Give the whole id or at least {MIN_PREFIX} characters."


class SlashCommand(BaseModel):
    """The fields of Slack's slash-command form that Parley reads."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    user_id: str
    text: str = ""


# `/parley stop`: who typed it and its arguments → what they are told.
StopCommand = Callable[[str, list[str]], Awaitable[str]]


class ParleyCommand:
    """Answers `/parley …` from the store, for the person who typed it."""

    def __init__(self, history: History, reviewers: Reviewers, stop: StopCommand | None = None) -> None:
        self._history = history
        self._reviewers = reviewers
        self._stop = stop

    async def on_command(self, ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond) -> None:
        try:
            command = SlashCommand.model_validate(body)
        except ValidationError:
            await ack(response_type="ephemeral", text=USAGE)
            return
        first, *more = await self.answer(command.user_id, command.text)
        await ack(response_type="ephemeral", text=first.text, blocks=first.blocks)
        for message in more:
            await _follow_up(respond, message)

    async def answer(self, user: str, text: str) -> list[SlackMessage]:
        """What `user` sees for `/parley text`: one message, or several for a long run."""
        verb, *arguments = text.split() or ["help"]
        try:
            if verb.lower() == "runs":
                return [await self._runs(user, arguments)]
            if verb.lower() == "show":
                return await self._show(user, arguments)
            if verb.lower() == "stop" and self._stop is not None:
                return [_notice(await self._stop(user, arguments))]
        except HistoryUnavailable as exc:
            return [_notice(str(exc))]
        if verb.lower() == "help":
            return [_notice(USAGE, InCommand.HOME_HINT)]
        return [_notice(InCommand.UNKNOWN_COMMAND.format(word=escape(shorten(verb, 40))) + "\n\n" + USAGE)]

    async def _runs(self, user: str, arguments: list[str]) -> SlackMessage:
        if len(arguments) > 1:
            return _notice(InCommand.ONE_STATUS + "\n\n" + USAGE)
        status = None
        if arguments:
            try:
                status = RunStatus(arguments[0].lower())
            except ValueError:
                wrong = escape(shorten(arguments[0], 40))
                return _notice(InCommand.UNKNOWN_STATUS.format(status=wrong, valid=VALID_STATUSES))
        async with reading():
            reviewer = await self._reviewers.is_reviewer(user)
            filters = RunFilter(statuses=[status.value] if status else (), asker=None if reviewer else user)
            page = await self._history.stored_runs(filters, limit=LIST_SIZE)
            counted = await self._history.tallies([run.id for run in page.runs])
        of_status = InCommand.OF_STATUS.format(status=status.value) if status else ""
        heading = (InCommand.EVERYONE_HEADING if reviewer else InCommand.MINE_HEADING) + of_status
        if not page.runs:
            return _notice(heading, InCommand.NONE_FOUND.format(of_status=of_status))
        blocks = [
            section(heading),
            *[section(run_entry(run, asker=reviewer, feedback=counted.get(run.id))) for run in page.runs],
        ]
        if page.next_cursor:
            blocks += contexts(InCommand.MORE.format(count=LIST_SIZE))
        return pack(blocks)[0]  # a page of short entries fits one message

    async def _show(self, user: str, arguments: list[str]) -> list[SlackMessage]:
        if not arguments:
            return [_notice(NEED_RUN_ID)]
        if len(arguments) > 1:
            return [_notice(InCommand.ONE_RUN_ID + " " + NEED_RUN_ID)]
        wanted = arguments[0][:RUN_ID_INPUT_CHARS]
        shown = escape(wanted)
        async with reading():
            reviewer = await self._reviewers.is_reviewer(user)
            try:
                # Anyone but a reviewer looks among their own runs only: another's run is as if it did not exist.
                trace = await self._history.trace(wanted, asker=None if reviewer else user)
            except RunNotFound as missing:
                refusal = InCommand.NO_RUN if reviewer else InCommand.NO_RUN_OF_YOURS
                return [_notice(refusal.format(wanted=shown) + (TOO_SHORT if missing.too_short else ""))]
            except AmbiguousRun:
                return [_notice(InCommand.AMBIGUOUS.format(wanted=shown))]
        return run_messages(trace)


def register_commands(
    app: AsyncApp, history: History, reviewers: Reviewers, stop: StopCommand | None = None
) -> ParleyCommand:
    """Answer `/parley` (the command the app manifest declares)."""
    command = ParleyCommand(history, reviewers, stop)
    app.command(COMMAND)(command.on_command)
    return command


def run_messages(trace: StoredTrace) -> list[SlackMessage]:
    """One run as people may read it in Slack: question, outcome, answer, sources, steps, review."""
    run = trace.run
    result = run.result
    answer = (result.answer if result else "").strip()
    title = InCommand.ANSWER if run.outcome is OutcomeKind.ANSWERED else InCommand.FINAL
    blocks = [
        header(InCommand.RUN_TITLE.format(run=run.id[:RUN_ID_CHARS])),
        *sections(f"{InCommand.QUESTION}\n{escape(run.question)}"),
        *contexts(_outcome(run)),
        *sections(f"{title}\n{escape(result.answer)}" if result and answer else InCommand.NO_ANSWER),
        *(sources(result.citations) if result else []),
        *_missing(result.missing if result else []),
        *sections(_steps(trace)),
        *[block for escalation in trace.escalations for block in sections(_review(escalation))],
        *_feedback(trace),
    ]
    return pack(blocks)


def _feedback(trace: StoredTrace) -> list[dict[str, Any]]:
    if not trace.feedback:
        return []
    return sections(f"{InCommand.FEEDBACK}\n" + "\n".join(f"• {feedback_entry(f)}" for f in trace.feedback))


def _outcome(run: StoredRun) -> str:
    result = run.result
    parts = [f"{status_emoji(run.status)} *{escape(run.status)}*"]
    if result is not None:
        parts += [
            escape(result.termination_reason),
            count_of(result.steps, "step"),
            count_of(result.tool_calls, "tool call"),
            f"{result.retries} {'retry' if result.retries == 1 else 'retries'}",
        ]
    parts += [f"asked by {person(run.asker)}", when(run.created_at), f"run `{escape(run.id)}`"]
    return " · ".join(parts) + ("\n" + outcome_line(result.outcome) if result is not None else "")


def _missing(items: list[str]) -> list[dict[str, Any]]:
    if not items:
        return []
    return sections(InCommand.MISSING + "\n" + "\n".join(f"• {escape(item)}" for item in items))


def _steps(trace: StoredTrace) -> str:
    calls: dict[int, list[StoredToolCall]] = {}
    for call in trace.tool_calls:
        calls.setdefault(call.step, []).append(call)
    lines = []
    for step in trace.steps:
        done = ", ".join(_call(call) for call in calls.get(step.step, []))
        lines.append(f"{step.step}. {escape(step.decision)}" + (f": {done}" if done else ""))
    if not lines:
        return f"{InCommand.STEPS}\n{InCommand.NO_STEPS}"
    shown = lines[:STEP_LINES]
    if folded := len(lines) - len(shown):
        shown.append(InCommand.MORE_STEPS.format(count=count_of(folded, "step"), run=escape(trace.run.id)))
    return InCommand.STEPS + "\n" + "\n".join(shown)


def _call(call: StoredToolCall) -> str:
    outcome = (
        "✓" if call.ok else f"✗ {call.error_code or 'failed'}" + (f" ({call.error_level})" if call.error_level else "")
    )
    retried = f" ↻{call.retries}" if call.retries else ""
    return escape(f"{call.tool}({_arguments(call.arguments)}) {outcome}{retried}")


def _review(escalation: StoredEscalation) -> str:
    why = " · ".join(part for part in (escalation.kind, escalation.reason, escalation.level) if part)
    if escalation.message:
        why += " — " + escalation.message
    lines = [InCommand.REVIEW.format(status=escape(escalation.status), why=escape(why))]
    if escalation.tool:
        lines.append(InCommand.HELD.format(call=escape(f"{escalation.tool}({_arguments(escalation.arguments)})")))
    if escalation.decided_at is not None:
        decider = person(escalation.decided_by) if escalation.decided_by else "?"
        lines.append(
            InCommand.DECIDED.format(
                decision=escape(escalation.status), person=decider, when=when(escalation.decided_at)
            )
        )
        if escalation.decision_reason:
            lines.append(InCommand.DECISION_REASON.format(reason=escape(escalation.decision_reason)))
    return "\n".join(lines)


def _arguments(arguments: Any) -> str:
    if not isinstance(arguments, dict):
        return "" if arguments is None else shorten(_value(arguments), ARGUMENT_CHARS)
    return shorten(", ".join(f"{key}={_value(value)}" for key, value in arguments.items()), ARGUMENT_CHARS)


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _notice(*paragraphs: str) -> SlackMessage:
    blocks = [block for paragraph in paragraphs for block in sections(paragraph)]
    return SlackMessage(text=paragraphs[0], blocks=blocks)


async def _follow_up(respond: AsyncRespond, message: SlackMessage) -> None:
    """A further ephemeral message through the command's response_url (Slack allows five in 30 minutes)."""
    try:
        response = await slack_call(respond(response_type="ephemeral", text=message.text, blocks=message.blocks))
    except (SlackFailure, ValueError) as exc:  # ValueError: a response_url aiohttp cannot use
        log.warning("could not send the rest of a /parley answer: %s", exc)
        return
    if response.status_code != 200:
        log.warning("Slack refused the rest of a /parley answer: HTTP %s %s", response.status_code, response.body)
