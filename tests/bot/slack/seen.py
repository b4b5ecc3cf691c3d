"""What people see in Slack, read back from the fake Web API, and what the store recorded."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select

from bot.store import Database
from bot.store.models import Run
from tests.fakes.slack_api import FakeSlackApi, SlackCall
from tests.fakes.slack_workspace import Message

WAIT_S = 10.0
PLACEHOLDER_MARKS = ("⏳", "🕒")  # working, queued: what the bot shows until the answer replaces it
FAILURE_MARK = "I couldn't answer this"
STATUS_MARK = " · run `"  # the context line closing every finished answer: status · steps · run id
WRITES = ("chat.postMessage", "chat.update")


def block_texts(blocks: Sequence[dict[str, Any]] | None) -> list[str]:
    """Every piece of text in Block Kit blocks: section, header and context texts."""
    texts: list[str] = []
    for block in blocks or []:
        if isinstance(block.get("text"), dict):
            texts.append(block["text"].get("text", ""))
        for element in block.get("elements") or []:
            if isinstance(element, dict) and "text" in element:
                texts.append(str(element["text"]))
    return texts


def shown(message: Message | dict[str, Any]) -> str:
    """What a message (or a call's params) shows: its blocks' texts, one per line (the fallback text when no
    blocks)."""
    texts = block_texts(message.get("blocks"))
    return "\n".join(texts) if texts else str(message.get("text") or "")


def is_finished(messages: Sequence[Message]) -> bool:
    if not messages or shown(messages[0]).startswith(PLACEHOLDER_MARKS):
        return False
    last = shown(messages[-1])
    return STATUS_MARK in last or FAILURE_MARK in last


async def answer_in(slack: FakeSlackApi, channel: str, thread_ts: str, *, timeout_s: float = WAIT_S) -> list[Message]:
    """The bot's messages in the thread once its answer (or its failure notice) is complete."""
    return await slack.wait_for_async(
        lambda: (messages := slack.messages_in(channel, thread_ts)) and is_finished(messages) and messages,
        timeout_s=timeout_s,
        what=f"the bot's finished answer in {channel}/{thread_ts}",
    )


def writes(slack: FakeSlackApi) -> list[SlackCall]:
    """Every chat.postMessage and chat.update the bot made, in order."""
    return [call for call in slack.calls() if call.method in WRITES]


def everything_posted(slack: FakeSlackApi) -> list[str]:
    """The fallback text and every block text of every message the bot posted or updated."""
    return [text for call in writes(slack) for text in [str(call.params.get("text") or ""), shown(call.params)]]


def versions_of(slack: FakeSlackApi, channel: str, ts: str) -> list[SlackCall]:
    """The successful post that created message `ts` and every successful update of it, oldest first."""
    return [
        call
        for call in writes(slack)
        if call.ok
        and call.params.get("channel") == channel
        and (call.response.get("ts") == ts if call.method == "chat.postMessage" else call.params.get("ts") == ts)
    ]


async def runs(db: Database) -> list[Run]:
    async with db.sessions() as session:
        return list((await session.scalars(select(Run).order_by(Run.created_at))).all())
