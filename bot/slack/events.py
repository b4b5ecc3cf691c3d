"""Slack events, parsed where they enter: which messages ask Parley something, and which are ignored."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from bot.core import Ask, Conversation, RunOrigin, RunSource

# Subtypes that are still a person asking: a message with a file, a thread reply also sent to the channel.
# Edits (message_changed) and deletions (message_deleted) are not new questions: a run already under way
# answers the original.
ASKING_SUBTYPES = frozenset({"file_share", "thread_broadcast"})


class MessageEvent(BaseModel):
    """The fields of `app_mention` and `message` events that Parley reads (Slack sends many more)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    type: Literal["app_mention", "message"]
    channel: str
    ts: str
    user: str | None = None
    text: str = ""
    thread_ts: str | None = None
    channel_type: str | None = None
    subtype: str | None = None
    bot_id: str | None = None
    team: str | None = None


class EventEnvelope(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    team_id: str
    event: MessageEvent


@dataclass(frozen=True)
class Ignored:
    reason: str


Kind = Literal["mention", "direct_message", "thread_reply"]


@dataclass(frozen=True)
class Candidate:
    """A message that may ask Parley something; a thread reply counts only in a thread Parley is in."""

    kind: Kind
    ask: Ask

    @property
    def follow_up(self) -> bool:
        """A plain reply in a thread: a question only where Parley was asked before."""
        return self.kind == "thread_reply"


def read(body: dict[str, Any], bot_user_id: str | None) -> Candidate | Ignored:
    """Parse an Events API body; say why it is ignored when it asks nothing."""
    try:
        envelope = EventEnvelope.model_validate(body)
    except ValidationError as exc:
        return Ignored(f"not a message event Parley handles ({exc.error_count()} problem(s))")
    event = envelope.event
    if event.bot_id or (event.subtype and event.subtype not in ASKING_SUBTYPES):
        return Ignored(f"subtype {event.subtype or 'bot message'}")
    if not event.user or event.user == bot_user_id:
        return Ignored("sent by Parley itself or by no user")
    question = strip_mention(event.text, bot_user_id)
    if not question:
        return Ignored("no question in the message")
    thread = Conversation(
        workspace=event.team or envelope.team_id, channel=event.channel, thread=event.thread_ts or event.ts
    )
    ask = Ask(question, RunOrigin(RunSource.SLACK, event.user, thread), message=event.ts)
    if event.type == "app_mention":
        return Candidate("mention", ask)
    if event.channel_type == "im":
        return Candidate("direct_message", ask)
    if bot_user_id and f"<@{bot_user_id}>" in event.text:
        return Ignored("a mention: its app_mention event asks")
    if event.thread_ts and event.thread_ts != event.ts:
        return Candidate("thread_reply", ask)
    return Ignored("a channel message that does not mention Parley")


def strip_mention(text: str, bot_user_id: str | None) -> str:
    """The question without the leading `<@BOT>` (mentions of other people stay)."""
    if bot_user_id:
        text = re.sub(rf"<@{re.escape(bot_user_id)}(\|[^>]*)?>", " ", text)
    return " ".join(text.split())


class AssistantThread(BaseModel):
    """The `assistant_thread` of Slack's assistant events: whose pane, where its thread is."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    user_id: str
    channel_id: str
    thread_ts: str


class AssistantThreadEvent(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    type: Literal["assistant_thread_started", "assistant_thread_context_changed"]
    assistant_thread: AssistantThread


class AssistantEnvelope(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    team_id: str
    event: AssistantThreadEvent


def read_assistant_thread(body: dict[str, Any]) -> AssistantThread | Ignored:
    """The thread an `assistant_thread_started` (or `…_context_changed`) event names; why not, when it names none."""
    try:
        return AssistantEnvelope.model_validate(body).event.assistant_thread
    except ValidationError as exc:
        return Ignored(f"an assistant event without its thread ({exc.error_count()} problem(s))")


class SessionStoppedEvent(BaseModel):
    """`agent_session_stopped`: someone clicked the stop button of a thread's agent session."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    type: Literal["agent_session_stopped"]
    channel: str
    thread_ts: str
    user: str
    streaming_message_ts: list[str] = []  # the app's streams Slack stopped (empty when none was active)


class SessionStoppedEnvelope(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    team_id: str
    event: SessionStoppedEvent


@dataclass(frozen=True)
class SessionStopped:
    """Who stopped which thread's session."""

    user: str
    conversation: Conversation

    @property
    def where(self) -> str:
        return f"{self.conversation.channel}/{self.conversation.thread}"


def read_session_stopped(body: dict[str, Any]) -> SessionStopped | Ignored:
    """The thread and the person of an `agent_session_stopped` event; why not, when it names neither."""
    try:
        envelope = SessionStoppedEnvelope.model_validate(body)
    except ValidationError as exc:
        return Ignored(f"an agent_session_stopped event without its thread or person ({exc.error_count()} problem(s))")
    event = envelope.event
    return SessionStopped(event.user, Conversation(envelope.team_id, event.channel, event.thread_ts))
