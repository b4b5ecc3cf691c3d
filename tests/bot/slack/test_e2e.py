"""A mention in Slack, end to end: signed request → ack → progress in the thread → cited answer."""

from __future__ import annotations

from sqlalchemy import func, select

from bot.store.models import Run
from tests.bot.slack.harness import running_bot, scripted
from tests.fakes.slack_events import CHANNEL, app_mention

QUESTION = "What is 47 times 12?"


async def test_slack_mention_gets_progress_then_a_cited_answer(db, slack_api, llm_server):
    llm_server.respond_with(
        scripted({"tool": "calculator", "args": {"expression": "47 * 12"}}, {"final": "47 × 12 = 564 [1]"})
    )
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        body = app_mention(QUESTION)
        response = await bot.post(body)
        assert response.status_code == 200

        thread = body["event"]["ts"]
        [reply] = await slack_api.wait_for_async(
            lambda: [m for m in slack_api.messages_in(CHANNEL, thread) if "564" in m.get("text", "")],
            timeout_s=10,
            what="the final answer in the thread",
        )

    assert "[1]" in reply["text"]
    updates = slack_api.calls("chat.update")
    assert any("calculator" in str(call.params.get("blocks")) for call in updates)
    async with db.sessions() as session:
        run = await session.scalar(select(Run))
        assert await session.scalar(select(func.count()).select_from(Run)) == 1
    assert (run.status, run.source, run.channel_id, run.thread_ts) == ("solved", "slack", CHANNEL, thread)
    assert run.reply_ts == reply["ts"]


async def test_slack_calls_of_a_run_share_kept_alive_connections(db, slack_api, llm_server):
    """slack_sdk opens a connection per call unless given a session; the bot gives it one for its lifetime."""
    llm_server.respond_with(
        scripted({"tool": "calculator", "args": {"expression": "47 * 12"}}, {"final": "47 × 12 = 564 [1]"})
    )
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        body = app_mention(QUESTION)
        assert (await bot.post(body)).status_code == 200
        await slack_api.wait_for_async(
            lambda: [m for m in slack_api.messages_in(CHANNEL, body["event"]["ts"]) if "564" in m.get("text", "")],
            timeout_s=10,
            what="the final answer in the thread",
        )

    calls = slack_api.calls()
    assert len(calls) >= 4
    assert len({call.peer for call in calls}) <= len(calls) // 2  # connections reused, not one per call
