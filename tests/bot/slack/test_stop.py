"""A person's stop, through signed events to running bots on one PostgreSQL: the native stop button
(`agent_session_stopped`) stops a run mid-tool-call held by another replica, within seconds, and its thread is
told once what had been found; a stranger's click is refused privately and audited; a stop after the end, or
where nothing runs, changes nothing; `/parley stop` does the same for the older experience and for reviewers."""

from __future__ import annotations

import asyncio

from sqlalchemy import select

from bot.core import ReviewConfig
from bot.store import RunOrigin, RunSource
from bot.store.models import AuditEvent
from tests.agent.toolbox import Hang, ScriptedTool
from tests.bot.slack.harness import ByQuestion, calculation, question_of, running_bot, scripted
from tests.bot.slack.seen import answer_in, runs, shown
from tests.bot.slack.test_home_and_commands import command, text_of
from tests.bot.slack.test_review import (
    APPROVE,
    POLICIES,
    REVIEW,
    REVIEWER,
    click,
    escalated,
    held_then_answered,
    thread_messages,
    transfer_tool,
)
from tests.fakes.slack_events import ASKER, CHANNEL, agent_session_stopped, app_mention

QUESTION = "What is 47 times 12, and what does the slow archive say about it?"
STRANGER = "U0STRANGER"
STOP_WITHIN_S = 5.0  # the bound: a stop reaches a run on another replica within seconds


def slow_archive() -> ScriptedTool:
    """A tool whose call never comes back by itself (a minute): the run is in it when the stop comes."""
    return ScriptedTool("slow_archive", [Hang(60, {"note": "too late"})], timeout_s=120)


def llm():
    return scripted(
        {"tool": "calculator", "args": {"expression": "47 * 12"}},
        {"tool": "slow_archive", "args": {}},
        {"final": "47 * 12 = 564 [1]"},
    )


async def audit_of(db, action: str) -> list[AuditEvent]:
    async with db.sessions() as session:
        return list((await session.scalars(select(AuditEvent).where(AuditEvent.action == action))).all())


async def test_the_stop_button_stops_a_run_mid_tool_call_on_another_replica(db, slack_api, llm_server):
    llm_server.respond_with(llm())
    archive = slow_archive()
    tools = ("calculator", archive)
    async with (
        running_bot(db, slack_api, llm_server.base_url, tools=tools) as holder,
        running_bot(db, slack_api, llm_server.base_url, tools=tools) as other,
    ):
        asked = app_mention(QUESTION)
        thread = asked["event"]["ts"]
        assert (await holder.post(asked)).status_code == 200
        await slack_api.wait_for_async(lambda: archive.calls, timeout_s=10, what="the run inside slow_archive")

        stopped = agent_session_stopped(channel=CHANNEL, thread_ts=thread, user=ASKER)
        assert (await other.post(stopped)).status_code == 200  # the other replica takes the click
        messages = await answer_in(slack_api, CHANNEL, thread, timeout_s=STOP_WITHIN_S)
        assert (await other.post(stopped, retry_num=1)).status_code == 200  # a redelivery changes nothing

    answer = shown(messages[-1])
    assert answer.startswith(f"⚠️ Partial answer\n🛑 *Stopped by <@{ASKER}>.* Here is what I had found:")
    assert "564" in answer and "[1]" in answer
    [run] = await runs(db)
    assert (run.status, run.termination_reason) == ("degraded", "stopped_by_user")
    assert run.owner != other.bot.service.owner.id or run.owner is None
    [requested] = await audit_of(db, "stop_requested")
    assert (requested.run_id, requested.actor) == (run.id, f"slack:{ASKER}")
    assert slack_api.calls("chat.postEphemeral") == []  # the asker is told in the thread, once
    assert slack_api.session(CHANNEL, thread)["statuses"] == ["processing", "active"]  # off processing


async def test_a_strangers_stop_is_refused_privately_and_audited_a_reviewers_is_taken(db, slack_api, llm_server):
    llm_server.respond_with(llm())
    archive = slow_archive()
    review = ReviewConfig(reviewers=(REVIEWER,))
    async with running_bot(db, slack_api, llm_server.base_url, tools=("calculator", archive), review=review) as bot:
        asked = app_mention(QUESTION)
        thread = asked["event"]["ts"]
        assert (await bot.post(asked)).status_code == 200
        await slack_api.wait_for_async(lambda: archive.calls, timeout_s=10, what="the run inside slow_archive")

        stranger = agent_session_stopped(channel=CHANNEL, thread_ts=thread, user=STRANGER)
        assert (await bot.post(stranger)).status_code == 200
        [refusal] = await slack_api.wait_for_async(
            lambda: slack_api.calls("chat.postEphemeral"), what="the stranger's refusal"
        )
        [run] = await runs(db)
        assert run.status == "running"  # still under way

        reviewer = agent_session_stopped(channel=CHANNEL, thread_ts=thread, user=REVIEWER)
        assert (await bot.post(reviewer)).status_code == 200
        messages = await answer_in(slack_api, CHANNEL, thread, timeout_s=STOP_WITHIN_S)

    assert (refusal.params["user"], refusal.params["channel"]) == (STRANGER, CHANNEL)
    assert "Only the person who asked, or a reviewer" in refusal.params["text"]
    [refused] = await audit_of(db, "stop_refused")
    assert refused.actor == f"slack:{STRANGER}"
    assert f"Stopped by <@{REVIEWER}>" in shown(messages[-1])
    [run] = await runs(db)
    assert run.termination_reason == "stopped_by_user"


async def test_a_stop_after_the_end_changes_nothing(db, slack_api, llm_server):
    llm_server.respond_with(scripted({"tool": "calculator", "args": {"expression": "47 * 12"}}, {"final": "564 [1]"}))
    async with running_bot(db, slack_api, llm_server.base_url, tools=("calculator",)) as bot:
        asked = app_mention("What is 47 times 12?")
        thread = asked["event"]["ts"]
        assert (await bot.post(asked)).status_code == 200
        before = await answer_in(slack_api, CHANNEL, thread)
        assert (await bot.post(agent_session_stopped(channel=CHANNEL, thread_ts=thread))).status_code == 200
        nowhere = agent_session_stopped(channel=CHANNEL, thread_ts="1700000000.000001")
        assert (await bot.post(nowhere)).status_code == 200
        said = text_of(await command(bot, "stop"))  # the older experience: nothing of theirs runs

    [run] = await runs(db)
    assert (run.status, run.termination_reason) == ("solved", "answered")
    assert slack_api.messages_in(CHANNEL, thread) == before
    assert await audit_of(db, "stop_requested") == []
    assert "no run to stop" in said


async def test_parley_stop_stops_the_askers_newest_run(db, slack_api, llm_server):
    llm_server.respond_with(llm())
    archive = slow_archive()
    async with running_bot(db, slack_api, llm_server.base_url, tools=("calculator", archive)) as bot:
        asked = app_mention(QUESTION)
        assert (await bot.post(asked)).status_code == 200
        await slack_api.wait_for_async(lambda: archive.calls, timeout_s=10, what="the run inside slow_archive")
        said = text_of(await command(bot, "stop"))
        messages = await answer_in(slack_api, CHANNEL, asked["event"]["ts"], timeout_s=STOP_WITHIN_S)
        again = text_of(await command(bot, "stop"))

    [run] = await runs(db)
    assert f"Stopping run `{run.id[:8]}`" in said and "no run to stop" in again
    assert run.termination_reason == "stopped_by_user" and "564" in shown(messages[-1])


async def test_a_held_action_is_not_executed_after_a_stop_even_once_approved(db, slack_api, llm_server):
    tool = transfer_tool()
    llm_server.respond_with(held_then_answered())
    async with running_bot(db, slack_api, llm_server.base_url, tools=(tool,), review=REVIEW, policies=POLICIES) as bot:
        thread, message, _ = await escalated(db, bot)
        said = text_of(await command(bot, "stop"))  # the asker: their run waits for a reviewer
        await click(bot, APPROVE, message, REVIEWER)
        messages = await thread_messages(bot, thread, 2, showing="Stopped by")

    [run] = await runs(db)
    assert f"Stopped run `{run.id[:8]}`: its held action will not run" in said
    assert tool.calls == []  # approved after the stop: never executed
    assert f"Stopped by <@{ASKER}>" in shown(messages[-1])
    assert run.termination_reason == "stopped_by_user"


async def test_a_queued_run_is_stopped_at_once_and_runs_nothing(db, slack_api, llm_server):
    archive = slow_archive()
    llm_server.respond_with(ByQuestion({QUESTION: llm(), "What is 6 times 7?": calculation("6 * 7", "42")}))
    async with running_bot(db, slack_api, llm_server.base_url, tools=("calculator", archive), workers=1) as bot:
        first = app_mention(QUESTION)
        assert (await bot.post(first)).status_code == 200
        await slack_api.wait_for_async(lambda: archive.calls, timeout_s=10, what="the first run inside slow_archive")
        second = app_mention("What is 6 times 7?")
        thread = second["event"]["ts"]
        assert (await bot.post(second)).status_code == 200
        await slack_api.wait_for_async(
            lambda: "Queued" in shown(slack_api.messages_in(CHANNEL, thread)[0]), what="the second run queued"
        )
        stopped = agent_session_stopped(channel=CHANNEL, thread_ts=thread)
        assert (await bot.post(stopped)).status_code == 200
        messages = await answer_in(slack_api, CHANNEL, thread, timeout_s=STOP_WITHIN_S)  # the worker is still busy
        [running, queued] = sorted(await runs(db), key=lambda run: run.created_at)
        assert running.status == "running" and archive.calls == [{}]
        assert (await bot.post(agent_session_stopped(channel=CHANNEL, thread_ts=first["event"]["ts"]))).status_code
        await answer_in(slack_api, CHANNEL, first["event"]["ts"], timeout_s=STOP_WITHIN_S)

    assert f"Stopped by <@{ASKER}>" in shown(messages[-1])
    assert (queued.status, queued.termination_reason, queued.tool_calls) == ("degraded", "stopped_by_user", 0)
    asked = [question_of(body) for body in llm_server.chat_requests]
    assert QUESTION in asked and "What is 6 times 7?" not in asked  # the model was never asked the stopped one


async def test_a_command_line_run_is_not_said_to_stop_from_slack(db, slack_api, llm_server):
    """A run under way in a `parley ask` process (here: asked through the service as the command line asks)
    has no server's pool to read a stop: `/parley stop RUN_ID` says so, and records nothing."""
    llm_server.respond_with(llm())
    archive = slow_archive()
    review = ReviewConfig(reviewers=(REVIEWER,))
    async with running_bot(db, slack_api, llm_server.base_url, tools=("calculator", archive), review=review) as bot:
        origin = RunOrigin(RunSource.CLI, "cli:someone")
        asking = asyncio.create_task(bot.bot.service.ask(QUESTION, origin))
        try:
            await slack_api.wait_for_async(lambda: archive.calls, timeout_s=10, what="the run inside slow_archive")
            [run] = await runs(db)
            said = text_of(await command(bot, f"stop {run.id}", user=REVIEWER))
            assert not asking.done()  # still under way: nothing stopped it
        finally:
            asking.cancel()
            await asyncio.gather(asking, return_exceptions=True)

    assert f"Run `{run.id[:8]}` is under way in a `parley` command" in said and "Nothing was changed" in said, said
    assert await audit_of(db, "stop_requested") == []
