"""Exactly once: one Slack message is one run and one answer, however many times and ways Slack delivers it.

The guarantee lives in the database (the unique (workspace, channel, trigger_ts) key), so it holds across
replicas of the bot, not only inside one process.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

from tests.bot.slack.harness import ByQuestion, calculation, mentioned_and_answered, running_bot
from tests.bot.slack.seen import answer_in, runs
from tests.fakes.slack_events import CHANNEL, app_mention, event_callback, thread_reply

QUESTION = "What is 47 times 12?"
SENTINEL = "What is 6 times 7?"  # asked last: once answered, every earlier event has been handled
OTHER_SENTINEL = "What is 8 times 9?"


def llm() -> ByQuestion:
    return ByQuestion(
        {
            QUESTION: calculation("47 * 12", "564"),
            SENTINEL: calculation("6 * 7", "42"),
            OTHER_SENTINEL: calculation("8 * 9", "72"),
        }
    )


def message_twin(mention: dict[str, Any]) -> dict[str, Any]:
    """The `message` event Slack also sends for a mention (message.channels): the same message — same ts,
    text with `<@UBOT>`, client_msg_id — with a `channel_type`, in an envelope of its own (a new event_id)."""
    event = dict(mention["event"], type="message", channel_type="channel")
    return event_callback(event)


@pytest.mark.parametrize("order", ["app_mention first", "message first", "at the same time"])
async def test_mention_and_its_message_event_make_one_run(db, slack_api, llm_server, order):
    llm_server.respond_with(llm())
    mention = app_mention(QUESTION)
    twin = message_twin(mention)
    assert twin["event"]["ts"] == mention["event"]["ts"] and "<@UBOT>" in twin["event"]["text"]
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        if order == "at the same time":
            responses = await asyncio.gather(bot.post(mention), bot.post(twin))
        else:
            pair = (mention, twin) if order == "app_mention first" else (twin, mention)
            responses = [await bot.post(body) for body in pair]
        assert [r.status_code for r in responses] == [200, 200]
        thread = mention["event"]["ts"]
        [answer] = await answer_in(slack_api, CHANNEL, thread)
        await mentioned_and_answered(bot, SENTINEL)

    assert "564" in answer["text"]
    assert [run.question for run in await runs(db)] == [QUESTION, SENTINEL]
    assert len(slack_api.messages_in(CHANNEL, thread)) == 1


async def test_mention_in_a_thread_and_its_message_event_make_one_follow_up(db, slack_api, llm_server):
    """In a thread Parley is in, the message twin of a mention is also a thread reply: still one run."""
    llm_server.respond_with(llm())
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        first = await mentioned_and_answered(bot, QUESTION)
        thread = first[0]["thread_ts"]
        mention = app_mention(SENTINEL, thread_ts=thread)
        twin = thread_reply(mention["event"]["text"], thread_ts=thread, ts=mention["event"]["ts"])
        responses = await asyncio.gather(bot.post(mention), bot.post(twin))
        assert [r.status_code for r in responses] == [200, 200]
        await slack_api.wait_for_async(
            lambda: (
                len(slack_api.messages_in(CHANNEL, thread)) == 2
                and "42" in slack_api.messages_in(CHANNEL, thread)[1]["text"]
            ),
            what="the follow-up's answer",
        )
        await mentioned_and_answered(bot, OTHER_SENTINEL)

    questions = [run.question for run in await runs(db)]
    assert questions.count(SENTINEL) == 1, questions


@pytest.mark.parametrize("replicas", [1, 2], ids=["one process", "two replicas"])
async def test_the_same_event_delivered_twice_at_once_is_one_run(db, slack_api, llm_server, replicas):
    llm_server.respond_with(llm())
    body = app_mention(QUESTION)
    async with contextlib.AsyncExitStack() as stack:
        bots = [await stack.enter_async_context(running_bot(db, slack_api, llm_server.base_url))]
        if replicas == 2:  # a second process behind the same URL, sharing only the database
            bots.append(await stack.enter_async_context(running_bot(db, slack_api, llm_server.base_url)))
        first, second = await asyncio.gather(bots[0].post(body), bots[-1].post(body, retry_num=1))
        assert (first.status_code, second.status_code) == (200, 200)
        thread = body["event"]["ts"]
        await answer_in(slack_api, CHANNEL, thread)
        for bot, sentinel in zip(bots, (SENTINEL, OTHER_SENTINEL), strict=False):
            await mentioned_and_answered(bot, sentinel)

    assert [run.question for run in await runs(db)].count(QUESTION) == 1
    assert len(slack_api.messages_in(CHANNEL, thread)) == 1
    assert len([c for c in slack_api.calls("chat.postMessage") if c.params.get("thread_ts") == thread]) == 1
