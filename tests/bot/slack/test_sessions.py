"""Agent sessions follow the run, read back from the fake Web API: `processing` while it works (titled by the
question, started by the asker), `active` after an answer, `suspended` while a person reviews it, `closed` when
rejected; a workspace that refuses sessions still gets its answers, logged once."""

from __future__ import annotations

import logging

from tests.bot.slack.harness import ByQuestion, calculation, running_bot
from tests.bot.slack.seen import answer_in, runs, shown
from tests.bot.slack.test_review import (
    APPROVE,
    POLICIES,
    REJECT,
    REJECT_MODAL,
    REVIEW,
    REVIEWER,
    click,
    escalated,
    held_then_answered,
    thread_messages,
    transfer_tool,
)
from tests.fakes.slack_events import ASKER, CHANNEL, app_mention, view_submission

QUESTION = "What is 47 times 12, and please show me how you worked it out step by step?"
SECOND = "What is 6 times 7?"
TITLE = "What is 47 times 12, and please show me how you worked it o…"


async def session_moved_to(slack_api, thread: str, *statuses: str) -> dict:
    return await slack_api.wait_for_async(
        lambda: (found := slack_api.session(CHANNEL, thread)) and found["statuses"] == list(statuses) and found,
        what=f"the session of {thread} through {statuses}",
    )


async def test_a_solved_run_moves_its_session_from_processing_to_active(db, slack_api, llm_server):
    llm_server.respond_with(calculation("47 * 12", "564"))
    async with running_bot(db, slack_api, llm_server.base_url, tools=("calculator",)) as bot:
        asked = app_mention(QUESTION)
        thread = asked["event"]["ts"]
        assert (await bot.post(asked)).status_code == 200
        await answer_in(slack_api, CHANNEL, thread)
        session = await session_moved_to(slack_api, thread, "processing", "active")

    assert (session["title"], session["initiator_user_id"]) == (TITLE, ASKER)
    processing, active = slack_api.calls("agents.sessions.setStatus")
    assert processing.params["title"] == TITLE and "title" not in active.params  # named once, when it starts


async def test_an_escalated_run_is_suspended_then_processing_again_once_approved(db, slack_api, llm_server):
    llm_server.respond_with(held_then_answered())
    async with running_bot(
        db, slack_api, llm_server.base_url, tools=(transfer_tool(),), review=REVIEW, policies=POLICIES
    ) as bot:
        thread, message, _ = await escalated(db, bot)
        await session_moved_to(slack_api, thread, "processing", "suspended")
        await click(bot, APPROVE, message, REVIEWER)
        await thread_messages(bot, thread, 2, showing="The transfer was sent")
        await session_moved_to(slack_api, thread, "processing", "suspended", "processing", "active")


async def test_a_rejected_run_closes_its_session(db, slack_api, llm_server):
    llm_server.respond_with(held_then_answered())
    async with running_bot(
        db, slack_api, llm_server.base_url, tools=(transfer_tool(),), review=REVIEW, policies=POLICIES
    ) as bot:
        thread, message, _ = await escalated(db, bot)
        await click(bot, REJECT, message, REVIEWER)
        form = await slack_api.wait_for_async(lambda: slack_api.calls("views.open"), what="the reject form")
        view = form[0].params["view"]
        values = {"reason": {"reason_input": {"type": "plain_text_input", "value": "Not this quarter."}}}
        submitted = view_submission(REJECT_MODAL, values, user=REVIEWER, private_metadata=view["private_metadata"])
        assert (await bot.post(submitted)).status_code == 200
        await session_moved_to(slack_api, thread, "processing", "suspended", "closed")

    [run] = await runs(db)
    assert run.status == "rejected"


async def test_a_workspace_refusing_sessions_still_gets_answers_and_is_told_once(db, slack_api, llm_server, caplog):
    slack_api.refuse("agents.sessions.setStatus", "unknown_method")
    llm_server.respond_with(ByQuestion({QUESTION: calculation("47 * 12", "564"), SECOND: calculation("6 * 7", "42")}))
    caplog.set_level(logging.WARNING)
    async with running_bot(db, slack_api, llm_server.base_url, tools=("calculator",)) as bot:
        answers = []
        for question in (QUESTION, SECOND):
            asked = app_mention(question)
            assert (await bot.post(asked)).status_code == 200
            answers.append(await answer_in(slack_api, CHANNEL, asked["event"]["ts"]))

    assert "564" in shown(answers[0][-1]) and "42" in shown(answers[1][-1])
    [refused] = slack_api.calls("agents.sessions.setStatus")  # refused once: never asked again
    assert not refused.ok
    assert caplog.text.count("Slack refused agent sessions") == 1
