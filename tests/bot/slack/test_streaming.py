"""Streamed replies: Slack's native status while a run works, its tool calls as a task timeline in a streamed
message, the answer appended only once the run ended and its checks passed, then the stream stopped with the
answer's closing blocks and its end-of-run mark — and where Slack refuses streaming, today's chat.update reply,
said once per workspace in the log."""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from agent import ErrorCode, RunResult
from bot.core.config import OwnershipConfig
from bot.settings import Settings
from bot.slack.blocks import answer_messages, closing_blocks
from bot.slack.feedback_blocks import feedback_block
from bot.slack.reply.chunks import markdown_of
from bot.slack.reply.marks import ENDED
from bot.wording import InThread
from tests.agent.toolbox import Hang, ScriptedTool
from tests.bot.slack.harness import EVERY_STATE, ByQuestion, Gated, calculation, running_bot, scripted
from tests.bot.slack.seen import answer_in, runs, shown, versions_of
from tests.bot.slack.test_blocks import degraded_result, make_result, refused_result
from tests.bot.slack.test_home_and_commands import MANIFEST
from tests.bot.slack.test_what_people_see import flaky_rates
from tests.fakes.slack_api import FakeSlackApi, SlackCall
from tests.fakes.slack_events import ASKER, CHANNEL, app_mention
from tests.fakes.slack_workspace import TEAM_ID, Message

QUESTION = "What is 47 * 12?"
DRAFT = "The product is 574, trust me."  # a figure no result backs: the closing checks send it back
ANSWER = "47 * 12 = 564 [1]"
STREAM_CALLS = ("assistant.threads.setStatus", "chat.startStream", "chat.appendStream", "chat.stopStream")
REFUSED_LOG = "refused streaming"


@pytest.fixture
def streaming_slack() -> Iterator[FakeSlackApi]:
    with FakeSlackApi(streaming=True) as fake:
        yield fake


async def streamed_reply(slack: FakeSlackApi, thread: str) -> Message:
    """The bot's one message in the thread once its stream is stopped."""

    def stopped() -> Message | None:
        messages = slack.messages_in(CHANNEL, thread)
        return messages[0] if len(messages) == 1 and messages[0].get("streaming") is False else None

    return await slack.wait_for_async(stopped, timeout_s=10, what=f"the stopped stream in {thread}")


def chunks_of(calls: list[SlackCall], kind: str) -> list[dict[str, Any]]:
    return [chunk for call in calls for chunk in call.params.get("chunks") or [] if chunk.get("type") == kind]


def appended_text(call: SlackCall) -> str:
    texts = [str(call.params.get("markdown_text") or "")] + [c["text"] for c in chunks_of([call], "markdown_text")]
    return "".join(texts)


async def test_streamed_run_shows_status_and_tasks_then_only_the_checked_answer(db, streaming_slack, llm_server):
    slack = streaming_slack
    llm_server.respond_with(
        scripted({"tool": "calculator", "args": {"expression": "47 * 12"}}, {"final": DRAFT}, {"final": ANSWER})
    )
    body = app_mention(QUESTION)
    thread = body["event"]["ts"]
    async with running_bot(db, slack, llm_server.base_url, update_interval_s=EVERY_STATE) as bot:
        assert (await bot.post(body)).status_code == 200
        message = await streamed_reply(slack, thread)
        await slack.wait_for_async(lambda: slack.thread_status(CHANNEL, thread) is None, what="the status cleared")

    [run] = await runs(db)
    calls = [call for call in slack.calls() if call.method in STREAM_CALLS]
    [start] = slack.calls("chat.startStream")
    appends = slack.calls("chat.appendStream")
    [stop] = slack.calls("chat.stopStream")
    assert start.params["thread_ts"] == thread and start.params["task_display_mode"] == "timeline"
    assert (start.params["recipient_team_id"], start.params["recipient_user_id"]) == (TEAM_ID, ASKER)
    assert calls.index(start) < calls.index(appends[0]) < calls.index(appends[-1]) < calls.index(stop)
    assert not slack.calls("chat.postMessage") and not slack.calls("chat.update")  # one message: the stream

    # The thread's native status followed the run, and was ended with the answer.
    statuses = [call.params["status"] for call in slack.calls("assistant.threads.setStatus")]
    assert statuses[0] == "is working on it…" and "is checking calculator…" in statuses
    assert "is checking the answer…" in statuses and statuses[-1] == ""

    # The tool call is a task: pending → in progress → complete, in that order.
    [call_id] = {c["id"] for c in chunks_of(appends, "task_update") if c["title"].startswith("calculator(")}
    states = [c["status"] for c in chunks_of(appends, "task_update") if c["id"] == call_id]
    assert states == ["pending", "in_progress", "complete"]
    # The rejected draft shows as a check that did not pass — never its text.
    checks = [c for c in chunks_of(appends, "task_update") if c["id"].startswith("check-")]
    assert any(c["status"] == "error" for c in checks) and checks[-1]["status"] == "complete"

    # The answer was appended once, in the last append (after every task update), and never the draft.
    with_text = [call for call in appends if appended_text(call)]
    assert with_text == [appends[-1]]
    assert "47 * 12 = 564 [1]" in appended_text(appends[-1])
    assert all(DRAFT not in str(call.params) for call in calls)
    # Stopped with the answer's closing blocks and the end-of-run mark the survivors read.
    closing = shown({"blocks": stop.params["blocks"]})
    assert "*Sources*" in closing and f"run `{run.id[:12]}`" in closing
    assert stop.params["blocks"][-1] == feedback_block(run.id)  # 👍 / 👎 under a streamed answer too
    assert stop.params["metadata"]["event_type"] == ENDED
    assert stop.params["metadata"]["event_payload"]["run_id"] == run.id

    # What people see: one message with the tasks, the answer, its sources and status; recorded as the reply.
    assert "564 [1]" in message["text"] and DRAFT not in message["text"]
    assert [t["status"] for t in message["tasks"] if t["id"] == call_id] == ["complete"]
    assert message["metadata"]["event_payload"]["status"] == "solved"
    assert run.status == "solved" and run.reply_ts == message["ts"] == start.response["ts"]


async def test_a_failed_tool_call_shows_its_plain_meaning_on_its_task(db, streaming_slack, llm_server):
    slack = streaming_slack
    llm_server.respond_with(
        scripted(
            {"tool": "get_weather", "args": {"city": "Atlantis"}},
            {"tool": "calculator", "args": {"expression": "47 * 12"}},
            {"final": ANSWER.replace("[1]", "[2]")},
        )
    )
    body = app_mention(QUESTION)
    async with running_bot(db, slack, llm_server.base_url, update_interval_s=EVERY_STATE) as bot:
        assert (await bot.post(body)).status_code == 200
        message = await streamed_reply(slack, body["event"]["ts"])

    [failed] = [t for t in message["tasks"] if t["title"].startswith("get_weather(")]
    assert failed["status"] == "error"
    assert failed["output"] == "city not found"  # what it means, not CITY_NOT_FOUND
    assert "CITY_NOT_FOUND" not in str(chunks_of(slack.calls("chat.appendStream"), "task_update"))


async def test_stream_appends_are_throttled_to_one_per_interval(db, streaming_slack, llm_server):
    slack = streaming_slack
    interval = 0.3
    llm_server.respond_with(
        scripted(
            {"tool": "calculator", "args": {"expression": "47 * 12"}},
            {"tool": "calculator", "args": {"expression": "564 + 1"}},
            {"tool": "calculator", "args": {"expression": "565 - 1"}},
            {"final": ANSWER},
        )
    )
    body = app_mention(QUESTION)
    async with running_bot(db, slack, llm_server.base_url, update_interval_s=interval) as bot:
        assert (await bot.post(body)).status_code == 200
        message = await streamed_reply(slack, body["event"]["ts"])

    # The first append (the plan and the first call under way) goes at once; from there, one per interval.
    sent = slack.calls("chat.appendStream")
    assert len(sent) >= 2
    gaps = [later.received_at - earlier.received_at for earlier, later in itertools.pairwise(sent)]
    assert min(gaps) >= interval * 0.8, gaps  # no more than one append per interval (a generous lower bound)
    # Coalesced, not lost: every task ends at its latest state.
    assert [t["status"] for t in message["tasks"] if t["title"].startswith("calculator(")] == ["complete"] * 3


async def test_the_first_call_is_seen_in_progress_however_long_the_interval(db, streaming_slack, llm_server):
    """With a real model the first call is often over before the interval is: the first append does not wait for
    it, so the call's task is seen `in_progress` while it runs."""
    slack = streaming_slack
    archive = ScriptedTool("slow_archive", [Hang(1.0, {"note": "filed"})], timeout_s=10)
    llm_server.respond_with(scripted({"tool": "slow_archive", "args": {}}, {"final": "filed [1]"}))
    body = app_mention(QUESTION)
    async with running_bot(db, slack, llm_server.base_url, tools=(archive,), update_interval_s=5.0) as bot:
        assert (await bot.post(body)).status_code == 200
        await streamed_reply(slack, body["event"]["ts"])

    [first, *_] = slack.calls("chat.appendStream")
    [task] = [c for c in chunks_of([first], "task_update") if c["title"].startswith("slow_archive(")]
    assert task["status"] == "in_progress"
    assert len(archive.calls) == 1


@pytest.mark.parametrize("error", ["not_allowed", "unknown_method"])
async def test_refused_streaming_falls_back_to_updates_logged_once_per_workspace(db, llm_server, caplog, error):
    caplog.set_level(logging.WARNING)
    llm_server.respond_with(ByQuestion({"first": calculation("47 * 12", "564"), "second": calculation("6 * 7", "42")}))
    asks = [app_mention(f"{which}: how much?") for which in ("first", "second")]
    with FakeSlackApi(streaming=True, refuse={"chat.startStream": error}) as slack:
        async with running_bot(db, slack, llm_server.base_url, update_interval_s=EVERY_STATE) as bot:
            answers = []
            for body in asks:  # one after the other: the second run starts after the refusal was learnt
                assert (await bot.post(body)).status_code == 200
                answers.append(await answer_in(slack, CHANNEL, body["event"]["ts"]))

        assert len(slack.calls("chat.startStream")) == 1  # asked once; the workspace then uses chat.update
        assert not slack.calls("chat.appendStream") and not slack.calls("chat.stopStream")
        for [answer] in answers:
            placeholder, *_, final = versions_of(slack, CHANNEL, answer["ts"])
            assert placeholder.method == "chat.postMessage" and final.method == "chat.update"
            assert " · run `" in shown(answer) and answer["metadata"]["event_type"] == ENDED
    assert {run.status for run in await runs(db)} == {"solved"}
    refusals = [r for r in caplog.records if REFUSED_LOG in r.getMessage()]
    assert len(refusals) == 1 and error in refusals[0].getMessage() and TEAM_ID in refusals[0].getMessage()


async def test_a_refused_thread_status_never_fails_a_run_and_is_not_asked_again(
    db, streaming_slack, llm_server, caplog
):
    caplog.set_level(logging.WARNING)
    slack = streaming_slack
    slack.refuse("assistant.threads.setStatus", "missing_scope")
    llm_server.respond_with(ByQuestion({"first": calculation("47 * 12", "564"), "second": calculation("6 * 7", "42")}))
    async with running_bot(db, slack, llm_server.base_url, update_interval_s=EVERY_STATE) as bot:
        for which in ("first", "second"):
            body = app_mention(f"{which}: how much?")
            assert (await bot.post(body)).status_code == 200
            message = await streamed_reply(slack, body["event"]["ts"])
            assert " · run `" in shown(message)

    assert len(slack.calls("assistant.threads.setStatus")) == 1
    assert {run.status for run in await runs(db)} == {"solved"}
    assert len([r for r in caplog.records if "refused the thread status" in r.getMessage()]) == 1


async def test_shutdown_hands_an_unfinished_run_over_without_telling_its_stream_anything(
    db, streaming_slack, llm_server
):
    """Stopped (a deploy) with a run still going after the grace period: the run is released for another replica
    (or the next start) to resume in its message; nothing is said now, so its thread is never told twice."""
    slack = streaming_slack
    stopped = threading.Event()
    body = app_mention(QUESTION)
    thread = body["event"]["ts"]
    llm_server.respond_with(Gated(calculation("47 * 12", "564"), {1: stopped.is_set}))
    grace = OwnershipConfig(shutdown_grace_s=0.5)
    try:
        async with running_bot(db, slack, llm_server.base_url, update_interval_s=EVERY_STATE, ownership=grace) as bot:
            assert (await bot.post(body)).status_code == 200
            await slack.wait_for_async(lambda: slack.messages_in(CHANNEL, thread), what="the stream")
            pool = bot.bot.pool
    finally:
        stopped.set()

    [message] = slack.messages_in(CHANNEL, thread)
    assert "ask again" not in message["text"] and "metadata" not in message  # no end shown: it goes on elsewhere
    [run] = await runs(db)
    assert (run.status, run.owner, run.termination_reason) == ("running", None, None)
    assert pool is not None and pool.handed_over == 1


async def test_a_queued_run_keeps_its_queued_placeholder_and_the_running_one_streams(db, streaming_slack, llm_server):
    """One worker: the first question streams; the second is told it is queued behind it in a normal message,
    which then shows its progress and its answer (a placeholder already there is updated, not streamed)."""
    slack = streaming_slack
    release = threading.Event()
    first, second = app_mention("first: how much?"), app_mention("second: how much?")
    llm_server.respond_with(
        ByQuestion(
            {"first": Gated(calculation("47 * 12", "564"), {1: release.is_set}), "second": calculation("6 * 7", "42")}
        )
    )
    try:
        async with running_bot(db, slack, llm_server.base_url, workers=1, update_interval_s=EVERY_STATE) as bot:
            # bolt acks before the listener records a question: the second is asked once the first holds the
            # only worker, or the two could be recorded in either order.
            assert (await bot.post(first)).status_code == 200
            await slack.wait_for_async(lambda: slack.calls("chat.startStream"), what="the first run's stream")
            assert (await bot.post(second)).status_code == 200
            queued = await slack.wait_for_async(
                lambda: [m for m in slack.messages_in(CHANNEL, second["event"]["ts"]) if "Queued" in shown(m)],
                what="the queued notice",
            )
            release.set()
            streamed = await streamed_reply(slack, first["event"]["ts"])
            [answered] = await answer_in(slack, CHANNEL, second["event"]["ts"])
    finally:
        release.set()

    assert shown(queued[0]).startswith("🕒")
    assert "564" in streamed["text"] and " · run `" in shown(streamed)
    assert answered["ts"] == queued[0]["ts"] and "42" in shown(answered)  # the queued notice became the answer
    [start] = slack.calls("chat.startStream")
    assert start.params["thread_ts"] == first["event"]["ts"]


async def test_streaming_off_uses_updates_even_where_slack_streams(db, streaming_slack, llm_server):
    slack = streaming_slack
    llm_server.respond_with(calculation("47 * 12", "564"))
    body = app_mention(QUESTION)
    async with running_bot(db, slack, llm_server.base_url, update_interval_s=EVERY_STATE, streaming="off") as bot:
        assert (await bot.post(body)).status_code == 200
        [answer] = await answer_in(slack, CHANNEL, body["event"]["ts"])

    assert not slack.calls("chat.startStream")
    assert versions_of(slack, CHANNEL, answer["ts"])[0].method == "chat.postMessage"
    assert "564" in shown(answer)


@pytest.mark.parametrize(
    "result", [make_result(), degraded_result(), refused_result()], ids=["solved", "partial", "refused"]
)
def test_both_media_close_an_answer_with_the_same_closing_blocks(result: RunResult) -> None:
    """The chat.update answer ends with `closing_blocks`; a stream is stopped with exactly those, and its text
    is the rest of the answer (what a streamed reply appends)."""
    [message] = answer_messages(result, feedback=True)
    closing = closing_blocks(result, feedback=True)
    assert message.closing == len(closing) and message.closing_part == closing
    assert message.blocks == [*message.body, *closing]
    text = markdown_of(message)
    assert " · run `" not in text and text.strip()
    assert all(piece in text for block in message.body for piece in [block.get("text", {}).get("text", "")])


def test_every_error_code_has_a_plain_meaning() -> None:
    assert set(ErrorCode) <= set(InThread.TOOL_PROBLEMS)
    assert all(code not in meaning for code, meaning in InThread.TOOL_PROBLEMS.items())


def test_the_streaming_setting_reads_auto_or_off_and_refuses_anything_else(monkeypatch) -> None:
    monkeypatch.setenv("PARLEY_SLACK_STREAMING", "off")
    assert Settings().slack_streaming == "off"
    monkeypatch.delenv("PARLEY_SLACK_STREAMING")
    assert Settings().slack_streaming == "auto"
    monkeypatch.setenv("PARLEY_SLACK_STREAMING", "sometimes")
    with pytest.raises(ValidationError, match="slack_streaming"):
        Settings()


async def test_a_refused_append_moves_the_run_to_an_updated_message_and_the_workspace_with_it(db, llm_server, caplog):
    caplog.set_level(logging.WARNING)
    llm_server.respond_with(ByQuestion({"first": calculation("47 * 12", "564"), "second": calculation("6 * 7", "42")}))
    with FakeSlackApi(streaming=True, refuse={"chat.appendStream": "missing_scope"}) as slack:
        async with running_bot(db, slack, llm_server.base_url, update_interval_s=EVERY_STATE) as bot:
            for which, result in (("first", "564"), ("second", "42")):
                body = app_mention(f"{which}: how much?")
                assert (await bot.post(body)).status_code == 200
                answered = await slack.wait_for_async(
                    lambda body=body: [
                        m for m in slack.messages_in(CHANNEL, body["event"]["ts"]) if " · run `" in shown(m)
                    ],
                    what="the answer",
                )
                assert result in shown(answered[0]) and answered[0]["metadata"]["event_type"] == ENDED

        assert len(slack.calls("chat.startStream")) == 1 and len(slack.calls("chat.appendStream")) == 1
    assert {run.status for run in await runs(db)} == {"solved"}
    assert len([r for r in caplog.records if REFUSED_LOG in r.getMessage()]) == 1


async def test_a_refused_stop_still_brings_the_sources_buttons_and_end_mark_to_the_thread(db, llm_server, caplog):
    caplog.set_level(logging.WARNING)
    llm_server.respond_with(calculation("47 * 12", "564"))
    with FakeSlackApi(streaming=True, refuse={"chat.stopStream": "internal_error"}) as slack:
        async with running_bot(db, slack, llm_server.base_url, update_interval_s=EVERY_STATE) as bot:
            body = app_mention(QUESTION)
            assert (await bot.post(body)).status_code == 200
            thread = body["event"]["ts"]
            [streamed, closing] = await slack.wait_for_async(
                lambda: len(found := slack.messages_in(CHANNEL, thread)) == 2 and found, what="the closing post"
            )

    [run] = await runs(db)
    assert "564" in streamed["text"]  # the checked answer was appended before the stop was refused
    assert " · run `" in shown(closing) and "*Sources*" in shown(closing)
    assert closing["blocks"][-1] == feedback_block(run.id)
    assert closing["metadata"]["event_type"] == ENDED and closing["metadata"]["event_payload"]["run_id"] == run.id
    assert any("its closing part follows as a post" in r.getMessage() for r in caplog.records)


def test_manifest_asks_for_the_scope_the_thread_status_needs():
    manifest = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    assert {"assistant:write", "chat:write"} <= set(manifest["oauth_config"]["scopes"]["bot"])


async def test_a_retried_call_shows_its_retry_on_its_task(db, streaming_slack, llm_server):
    slack = streaming_slack
    llm_server.respond_with(
        scripted(
            {"tool": "exchange_rate", "args": {"currency": "EUR"}},
            {"final": "One euro costs 7 [1]."},
        )
    )
    body = app_mention("How much is one euro?")
    async with running_bot(
        db, slack, llm_server.base_url, tools=(flaky_rates(),), update_interval_s=EVERY_STATE
    ) as bot:
        assert (await bot.post(body)).status_code == 200
        message = await streamed_reply(slack, body["event"]["ts"])

    [task] = [t for t in message["tasks"] if t["title"].startswith("exchange_rate(")]
    assert task["status"] == "complete" and task["details"] == "retry 1: the service timed out"
