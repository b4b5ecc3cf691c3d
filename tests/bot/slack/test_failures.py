"""When something breaks — the LLM, the database, a tool — the thread is told, and the bot keeps serving."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator

from bot.core import OwnershipConfig
from bot.store import Database, connect
from tests.agent.toolbox import ScriptedTool
from tests.bot.slack.harness import (
    EVERY_STATE,
    ByQuestion,
    Gated,
    calculation,
    mentioned_and_answered,
    running_bot,
    scripted,
)
from tests.bot.slack.seen import FAILURE_MARK, answer_in, runs, shown, versions_of
from tests.bot.store.postgres import PG_HOST, PG_PORT
from tests.fakes.llm_server import FakeReply
from tests.fakes.slack_events import CHANNEL, app_mention, thread_reply
from tests.fakes.tcp_proxy import TcpProxy

QUESTION = "What is 47 times 12?"
LATER = "What is 6 times 7?"


@contextlib.asynccontextmanager
async def database_behind(proxy: TcpProxy, pg_url: str) -> AsyncIterator[Database]:
    name = pg_url.rsplit("/", 1)[1]
    db = connect(f"postgresql://postgres@127.0.0.1:{proxy.port}/{name}")
    try:
        yield db
    finally:
        await db.aclose()


async def test_llm_down_is_a_degraded_answer_in_the_thread_then_service_goes_on(db, slack_api, llm_server):
    llm_server.respond_with(lambda body: FakeReply.with_status(503, "the model server is overloaded"))
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        [down] = await mentioned_and_answered(bot, QUESTION)
        llm_server.respond_with(calculation("6 * 7", "42"))
        [later] = await mentioned_and_answered(bot, LATER)

    text = shown(down)
    assert text.startswith("⚠️ Partial answer")
    assert "⏸️ awaiting_review · llm_unavailable · " in text  # recovery ran out: a person will look at it
    assert "A person will look at this" in text
    assert "could not be reached" in text  # why, in words
    assert "42 [1]" in shown(later)
    assert [(run.question, run.status) for run in await runs(db)] == [
        (QUESTION, "awaiting_review"),
        (LATER, "solved"),
    ]


async def test_database_down_at_intake_is_told_in_the_thread_and_service_resumes(
    db, slack_api, llm_server, slack_pg_url
):
    llm_server.respond_with(ByQuestion({QUESTION: calculation("47 * 12", "564"), LATER: calculation("6 * 7", "42")}))
    proxy = await TcpProxy(PG_PORT, PG_HOST).start()
    try:
        async with (
            database_behind(proxy, slack_pg_url) as proxied,
            running_bot(proxied, slack_api, llm_server.base_url) as bot,
        ):
            await proxy.close()  # the database is gone: open connections drop, new ones are refused
            body = app_mention("What is 2 plus 2?")
            assert (await bot.post(body)).status_code == 200
            [told] = await answer_in(slack_api, CHANNEL, body["event"]["ts"])
            health = await bot.get("/healthz")
            second = app_mention("Are you there?")
            again = await bot.post(second)  # still acknowledged, within Slack's 3 s
            # acknowledged before it is taken: told too, before the database comes back
            [told_again] = await answer_in(slack_api, CHANNEL, second["event"]["ts"])

            await proxy.restore()  # the database is back
            [answered] = await mentioned_and_answered(bot, LATER)
            health_after = await bot.get("/healthz")
    finally:
        await proxy.close()

    assert "database is unavailable" in shown(told)
    assert "Traceback" not in shown(told) and "asyncpg" not in shown(told)
    assert health.status_code == 503 and health.json()["database"].startswith("unreachable")
    assert again.status_code == 200 and "database is unavailable" in shown(told_again)
    assert "42 [1]" in shown(answered)
    assert health_after.status_code == 200 and health_after.json()["database"] == "ok"
    assert [run.question for run in await runs(db)] == [LATER]  # nothing half-recorded while it was down


async def test_a_tool_that_raises_is_a_handled_answer_and_service_goes_on(db, slack_api, llm_server):
    crashing = ScriptedTool("inventory", [RuntimeError("segfault in the inventory client")])
    llm_server.respond_with(
        ByQuestion(
            {
                "How many widgets": scripted(
                    {"tool": "inventory", "args": {"item": "widget"}},
                    {"give_up": "The inventory service crashed, so I cannot count the widgets."},
                ),
                LATER: calculation("6 * 7", "42"),
            }
        )
    )
    async with running_bot(
        db, slack_api, llm_server.base_url, tools=("calculator", crashing), update_interval_s=EVERY_STATE
    ) as bot:
        crashed = await mentioned_and_answered(bot, "How many widgets are in stock?")
        [later] = await mentioned_and_answered(bot, LATER)

    text = shown(crashed[0])
    assert text.startswith("⚠️ Partial answer") and "inventory" in text
    assert "Traceback" not in text
    progress = "\n".join(shown(c.params) for c in versions_of(slack_api, CHANNEL, crashed[0]["ts"]))
    assert "✗ inventory(" in progress and "TOOL_CRASHED" in progress
    assert "42 [1]" in shown(later)
    assert [run.status for run in await runs(db)] == ["degraded", "solved"]


async def test_with_one_worker_the_second_question_is_queued_and_both_are_answered(db, slack_api, llm_server):
    first, second = app_mention(QUESTION), app_mention(LATER)
    first_thread, second_thread = first["event"]["ts"], second["event"]["ts"]

    def second_is_announced():
        return (found := slack_api.messages_in(CHANNEL, second_thread)) and found

    llm_server.respond_with(
        ByQuestion(
            {  # the first run holds its first decision until the second question has been announced
                QUESTION: Gated(calculation("47 * 12", "564"), {1: second_is_announced}),
                LATER: calculation("6 * 7", "42"),
            }
        )
    )
    async with running_bot(db, slack_api, llm_server.base_url, workers=1) as bot:
        assert (await bot.post(first)).status_code == 200
        await slack_api.wait_for_async(
            lambda: slack_api.messages_in(CHANNEL, first_thread), what="the first question's placeholder"
        )
        assert (await bot.post(second)).status_code == 200
        [first_answer] = await answer_in(slack_api, CHANNEL, first_thread)
        [second_answer] = await answer_in(slack_api, CHANNEL, second_thread)

    first_versions = versions_of(slack_api, CHANNEL, first_answer["ts"])
    second_versions = versions_of(slack_api, CHANNEL, second_answer["ts"])
    assert shown(first_versions[0].params).startswith("⏳ Working on it")
    assert shown(second_versions[0].params).startswith("🕒 Queued — you're next")
    assert "564 [1]" in shown(first_answer) and "42 [1]" in shown(second_answer)
    assert [run.status for run in await runs(db)] == ["solved", "solved"]


async def test_database_down_does_not_speak_in_threads_parley_is_not_in(db, slack_api, llm_server, slack_pg_url):
    strangers_thread = slack_api.add_message(CHANNEL, "lunch at noon?", user="U0SOMEONE")
    proxy = await TcpProxy(PG_PORT, PG_HOST).start()
    try:
        async with (
            database_behind(proxy, slack_pg_url) as proxied,
            running_bot(proxied, slack_api, llm_server.base_url) as bot,
        ):
            await proxy.close()
            chat = thread_reply("sure, see you there", thread_ts=strangers_thread, parent_user_id="U0SOMEONE")
            assert (await bot.post(chat)).status_code == 200
            mention = app_mention(QUESTION)  # asked last: once told, the reply before it has been handled
            assert (await bot.post(mention)).status_code == 200
            [told] = await answer_in(slack_api, CHANNEL, mention["event"]["ts"])
    finally:
        await proxy.close()

    assert "database is unavailable" in shown(told)
    assert slack_api.messages_in(CHANNEL, strangers_thread) == []


async def shut_down_mid_run(db, slack_api, llm_server) -> tuple[str, str]:
    """One worker: a question mid-way (its model call held) and one queued behind it when the bot stops.
    Returns the two threads."""
    stopped = threading.Event()
    running, waiting = app_mention(QUESTION), app_mention(LATER)
    llm_server.respond_with(
        ByQuestion(
            {
                QUESTION: Gated(calculation("47 * 12", "564"), {1: stopped.is_set}),
                LATER: calculation("6 * 7", "42"),
            }
        )
    )
    try:
        grace = OwnershipConfig(shutdown_grace_s=0.5)
        async with running_bot(db, slack_api, llm_server.base_url, workers=1, ownership=grace) as bot:
            for body in (running, waiting):
                assert (await bot.post(body)).status_code == 200
                await slack_api.wait_for_async(
                    lambda body=body: slack_api.messages_in(CHANNEL, body["event"]["ts"]), what="a placeholder"
                )
    finally:
        stopped.set()
    return running["event"]["ts"], waiting["event"]["ts"]


async def test_shutdown_hands_unfinished_questions_over_and_tells_their_threads_nothing(db, slack_api, llm_server):
    """Stopping (SIGTERM, a deploy) hands over instead of cancelling: each thread keeps its placeholder, where
    another replica (or this one's next start) answers; nobody is told to ask again."""
    threads = await shut_down_mid_run(db, slack_api, llm_server)

    for thread in threads:
        [message] = slack_api.messages_in(CHANNEL, thread)  # the placeholder, still there
        text = shown(message)
        assert text.startswith(("⏳", "🕒")), text
        assert FAILURE_MARK not in text and "ask again" not in text, text


async def test_shutdown_releases_unfinished_runs_in_the_store_and_ends_none(db, slack_api, llm_server):
    await shut_down_mid_run(db, slack_api, llm_server)

    left = {run.question: (run.status, run.owner) for run in await runs(db)}
    assert left[QUESTION] == ("running", None)  # the run under way after the grace period: released as it stands
    assert left[LATER] == ("queued", None)  # the question waiting behind it: released at once


async def test_a_busy_connection_pool_at_intake_is_waited_for_not_reported_as_an_outage(
    db, slack_api, llm_server, slack_pg_url
):
    """Every pooled connection held (a burst): intake waits past several pool timeouts, then answers."""
    llm_server.respond_with(calculation("6 * 7", "42"))
    small = connect(slack_pg_url, pool_size=1, pool_timeout_s=0.1)  # 2 connections at most
    try:
        async with running_bot(small, slack_api, llm_server.base_url) as bot:
            async with small.engine.connect() as first, small.engine.connect() as second:
                await first.exec_driver_sql("SELECT 1")
                await second.exec_driver_sql("SELECT 1")
                body = app_mention(LATER)
                assert (await bot.post(body)).status_code == 200  # acknowledged while intake waits
                await asyncio.sleep(0.5)  # five pool timeouts go by
                assert not slack_api.messages_in(CHANNEL, body["event"]["ts"])  # nothing said yet
            [answered] = await answer_in(slack_api, CHANNEL, body["event"]["ts"])
    finally:
        await small.aclose()

    assert "42 [1]" in shown(answered)
    assert "database is unavailable" not in shown(answered)
    assert [(run.question, run.status) for run in await runs(db)] == [(LATER, "solved")]


async def test_posting_an_answer_does_not_hold_a_worker_while_the_update_interval_runs(db, slack_api, llm_server):
    """One worker, a 1.5 s update interval: the first answer waits out its interval in the background, while
    the worker already runs the question queued behind it."""
    second_started: list[float] = []

    def second(body):
        second_started.append(time.monotonic())
        return calculation("6 * 7", "42")(body)

    llm_server.respond_with(ByQuestion({QUESTION: calculation("47 * 12", "564"), LATER: second}))
    async with running_bot(db, slack_api, llm_server.base_url, workers=1, update_interval_s=1.5) as bot:
        first, then = app_mention(QUESTION), app_mention(LATER)
        assert (await bot.post(first)).status_code == 200
        assert (await bot.post(then)).status_code == 200
        await answer_in(slack_api, CHANNEL, first["event"]["ts"])
        await answer_in(slack_api, CHANNEL, then["event"]["ts"])

    [placeholder] = slack_api.messages_in(CHANNEL, first["event"]["ts"])
    answered_at = max(c.received_at for c in slack_api.calls("chat.update") if c.params.get("ts") == placeholder["ts"])
    assert second_started and second_started[0] < answered_at
