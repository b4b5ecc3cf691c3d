"""Which messages ask Parley something: DMs and follow-ups in its threads do; bots, edits, deletions and
strangers' threads do not. Follow-ups get the thread's earlier exchanges as context, from the store."""

from __future__ import annotations

from typing import Any

from tests.bot.slack.harness import ByQuestion, calculation, mentioned_and_answered, running_bot
from tests.bot.slack.seen import answer_in, runs, shown, writes
from tests.fakes.scripted_llm import RequestKind, classify
from tests.fakes.slack_events import (
    CHANNEL,
    DM_CHANNEL,
    app_mention,
    bot_message,
    direct_message,
    message_changed,
    message_deleted,
    thread_reply,
)
from tests.fakes.slack_workspace import next_ts

QUESTION = "What is 47 times 12?"
FOLLOW_UP = "And what is that times 2?"
SENTINEL = "What is 6 times 7?"  # asked last: once answered, every earlier event has been handled
OTHER_BOT_USER = "U0OTHERBOT"
OTHER_BOT_ID = "B0OTHER"


def llm() -> ByQuestion:
    return ByQuestion(
        {
            QUESTION: calculation("47 * 12", "564"),
            FOLLOW_UP: calculation("564 * 2", "1128"),
            SENTINEL: calculation("6 * 7", "42"),
        }
    )


def other_bot(body: dict[str, Any]) -> dict[str, Any]:
    """The same event as sent by another app's bot user (its own user and bot_id, same envelope)."""
    profile = {"id": OTHER_BOT_ID, "app_id": "A0OTHER", "name": "otherbot", "deleted": False, "team_id": "T0PARLEY"}
    event = body["event"] | {"user": OTHER_BOT_USER, "bot_id": OTHER_BOT_ID, "app_id": "A0OTHER"}
    if "bot_profile" in event or event["type"] == "app_mention":
        event["bot_profile"] = profile
    if event.get("subtype") == "bot_message":
        event.pop("user")
        event["username"] = "otherbot"
    return body | {"event": event}


def decisions_about(llm_server, question: str) -> list[dict[str, Any]]:
    """The decision requests the fake LLM received for the run of `question`."""
    return [
        body
        for body in llm_server.chat_requests
        if classify(body) is RequestKind.DECIDE
        and [m for m in body["messages"] if m["role"] == "user"][-1]["content"] == question
    ]


async def follow_up_answered(slack_api, thread: str, expected: str) -> None:
    """Wait for the bot's second message in `thread`: the follow-up's finished answer, showing `expected`."""
    await slack_api.wait_for_async(
        lambda: (found := slack_api.messages_in(CHANNEL, thread)) and len(found) == 2 and expected in shown(found[1]),
        what="the follow-up's answer in the same thread",
    )


async def test_direct_message_is_answered_in_its_dm_thread(db, slack_api, llm_server):
    llm_server.respond_with(llm())
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        body = direct_message(QUESTION)
        assert body["event"]["channel_type"] == "im" and "<@" not in body["event"]["text"]
        assert (await bot.post(body)).status_code == 200
        [answer] = await answer_in(slack_api, DM_CHANNEL, body["event"]["ts"])

    assert "564" in answer["text"]
    [run] = await runs(db)
    assert (run.channel_id, run.thread_ts, run.question, run.status) == (
        DM_CHANNEL,
        body["event"]["ts"],
        QUESTION,
        "solved",
    )
    assert {call.params["channel"] for call in writes(slack_api)} == {DM_CHANNEL}


async def test_reply_in_parleys_thread_is_a_follow_up_with_context_from_the_store(db, slack_api, llm_server):
    llm_server.respond_with(llm())
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        first = await mentioned_and_answered(bot, QUESTION)
        thread = first[0]["thread_ts"]
        reply = thread_reply(FOLLOW_UP, thread_ts=thread)  # no mention: Parley is in this thread
        assert (await bot.post(reply)).status_code == 200
        await follow_up_answered(slack_api, thread, "1128")

    earlier, follow_up = await runs(db)
    assert (follow_up.question, follow_up.thread_ts, follow_up.status) == (FOLLOW_UP, thread, "solved")
    assert "564" in earlier.answer
    [first_decision, *_] = decisions_about(llm_server, FOLLOW_UP)
    conversation = [(m["role"], m.get("content")) for m in first_decision["messages"] if m["role"] != "system"]
    assert conversation == [("user", QUESTION), ("assistant", earlier.answer), ("user", FOLLOW_UP)]
    # The context came from Parley's own records, not from reading the thread back from Slack.
    assert slack_api.calls("conversations.replies") == []
    assert slack_api.calls("conversations.history") == []


async def test_reply_in_a_thread_parley_is_not_in_starts_nothing(db, slack_api, llm_server):
    llm_server.respond_with(llm())
    strangers_thread = slack_api.add_message(CHANNEL, "lunch?", user="U0SOMEONE")
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        reply = thread_reply(QUESTION, thread_ts=strangers_thread, parent_user_id="U0SOMEONE")
        assert (await bot.post(reply)).status_code == 200
        await mentioned_and_answered(bot, SENTINEL)

    assert [run.question for run in await runs(db)] == [SENTINEL]
    assert slack_api.messages_in(CHANNEL, strangers_thread) == []


async def test_bots_edits_and_deletions_start_nothing(db, slack_api, llm_server):
    """Each of these arrives in a thread Parley is in, so a reply that slipped through would be a follow-up."""
    llm_server.respond_with(llm())
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        first = await mentioned_and_answered(bot, QUESTION)
        thread = question_ts = first[0]["thread_ts"]
        ignored = {
            "own bot_message": bot_message("own classic What is 1+1?", thread_ts=thread),
            "own chat.postMessage": bot_message("own app What is 2+2?", thread_ts=thread, subtype=None),
            "other bot_message": other_bot(bot_message("other classic What is 3+3?", thread_ts=thread)),
            "other chat.postMessage": other_bot(bot_message("other app What is 4+4?", thread_ts=thread, subtype=None)),
            "other bot mentions Parley": other_bot(app_mention("other mention What is 5+5?", thread_ts=thread)),
            "question edited": message_changed(
                question_ts, "<@UBOT> edited What is 7+7?", previous_text=f"<@UBOT> {QUESTION}"
            ),
            "question deleted": message_deleted(question_ts, previous_text=f"<@UBOT> {QUESTION}"),
            "reply edited": message_changed(
                next_ts(), "edited reply What is 9+9?", previous_text="reply", thread_ts=thread
            ),
        }
        for name, body in ignored.items():
            assert (await bot.post(body)).status_code == 200, name
        await mentioned_and_answered(bot, SENTINEL)

    assert [run.question for run in await runs(db)] == [QUESTION, SENTINEL]
    assert len(slack_api.messages_in(CHANNEL, thread)) == 1  # the first answer, nothing added


def broadcast_reply(text: str, *, thread_ts: str, question_ts: str) -> dict[str, Any]:
    """A reply in a thread that the person also sent to the channel (Slack's `thread_broadcast` subtype)."""
    body = thread_reply(text, thread_ts=thread_ts)
    reply_ts = body["event"]["ts"]
    body["event"] |= {
        "subtype": "thread_broadcast",
        "root": {
            "type": "message",
            "text": f"<@UBOT> {QUESTION}",
            "user": "U0ASKER",
            "ts": question_ts,
            "thread_ts": question_ts,
            "reply_count": 2,
            "replies": [{"user": "UBOT", "ts": next_ts()}, {"user": "U0ASKER", "ts": reply_ts}],
        },
    }
    return body


async def test_reply_also_sent_to_the_channel_is_a_follow_up(db, slack_api, llm_server):
    llm_server.respond_with(llm())
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        first = await mentioned_and_answered(bot, QUESTION)
        thread = first[0]["thread_ts"]
        assert (await bot.post(broadcast_reply(FOLLOW_UP, thread_ts=thread, question_ts=thread))).status_code == 200
        await follow_up_answered(slack_api, thread, "1128")

    assert [(run.question, run.thread_ts) for run in await runs(db)] == [(QUESTION, thread), (FOLLOW_UP, thread)]
