"""What people see in the thread: a placeholder at once, live progress (✓ ✗ ↻ per tool call), then the
answer in its place — cited when solved, plainly partial when degraded, a plain reason when refused."""

from __future__ import annotations

import re

from tests.agent.llm_agent import demo
from tests.agent.toolbox import Hang, ScriptedTool
from tests.bot.slack.harness import EVERY_STATE, Gated, running_bot, scripted
from tests.bot.slack.seen import answer_in, runs, shown, versions_of
from tests.fakes.scripted_llm import ScriptedLLM, Unrecorded
from tests.fakes.slack_events import CHANNEL, app_mention

QUESTION = "What do 3 euros cost at the exchange rate?"
RATES_SCHEMA = {"type": "object", "properties": {"currency": {"type": "string"}}, "required": ["currency"]}


def flaky_rates() -> ScriptedTool:
    """Times out on its first try (an L0 failure, retried at once), answers on the second."""
    return ScriptedTool(
        "exchange_rate", [Hang(5.0), {"currency": "EUR", "rate": 7}], timeout_s=0.2, parameters=RATES_SCHEMA
    )


def progress_shown(slack_api, channel: str, thread: str, *marks: str) -> bool:
    """Does the bot's message in the thread show every one of `marks` right now?"""
    messages = slack_api.messages_in(channel, thread)
    return bool(messages) and all(mark in shown(messages[0]) for mark in marks)


async def test_placeholder_then_progress_per_tool_then_the_cited_answer_in_its_place(db, slack_api, llm_server):
    body = app_mention(QUESTION)
    thread = body["event"]["ts"]
    retried, rate_ok, weather_failed = "↻ retrying exchange_rate (TIMEOUT)", "✓ exchange_rate(", "✗ get_weather("
    script = scripted(
        {
            "calls": [
                {"tool": "exchange_rate", "args": {"currency": "EUR"}},
                {"tool": "get_weather", "args": {"city": "Atlantis"}},
            ]
        },
        {"tool": "calculator", "args": {"expression": "3 * 7"}},
        {"final": "One euro costs 7 [1], so 3 euros cost 21 [2]."},
    )
    llm_server.respond_with(
        Gated(
            script,
            {  # each decision waits until the thread shows what the steps before it did
                1: lambda: progress_shown(slack_api, CHANNEL, thread, "⏳"),
                2: lambda: progress_shown(slack_api, CHANNEL, thread, retried, rate_ok, weather_failed),
                3: lambda: progress_shown(slack_api, CHANNEL, thread, "✓ calculator("),
            },
        )
    )
    tools = ("calculator", "get_weather", flaky_rates())
    async with running_bot(db, slack_api, llm_server.base_url, tools=tools, update_interval_s=EVERY_STATE) as bot:
        assert (await bot.post(body)).status_code == 200
        [answer] = await answer_in(slack_api, CHANNEL, thread)

    [run] = await runs(db)
    placeholder, *progress, final = versions_of(slack_api, CHANNEL, answer["ts"])
    assert placeholder.method == "chat.postMessage"
    assert placeholder.params["thread_ts"] == thread
    assert shown(placeholder.params).startswith("⏳") and QUESTION in shown(placeholder.params)

    lines = "\n".join(shown(call.params) for call in progress)
    assert retried in lines and rate_ok in lines and weather_failed in lines and "✓ calculator(" in lines
    assert "CITY_NOT_FOUND" in lines  # a failed call says how it failed
    assert all(call.method == "chat.update" for call in [*progress, final])

    text = shown(final.params)
    assert text == shown(answer)  # the answer replaced the progress message: no second message
    assert "⏳" not in text and "↻" not in text
    assert "3 euros cost 21 [2]" in text
    sources = text[text.index("*Sources*") :]
    assert re.search(r"\[1\] exchange_rate\(currency=EUR\) · step 1", sources), sources
    assert re.search(r"\[2\] calculator\(expression=3 \* 7\) · step 2", sources), sources
    assert re.search(rf"✅ solved · {run.steps} steps? · run `{run.id[:12]}`", text), text
    assert run.status == "solved" and run.reply_ts == answer["ts"]


async def test_degraded_answer_is_marked_partial_with_what_is_missing_and_why(db, slack_api, llm_server):
    """Seed 003's demo B: the search back-end answers 503 every time; the thread gets an honest partial answer."""
    demo_b = demo("demo_b")
    llm_server.respond_with(ScriptedLLM(demo_b.script, unrecorded=Unrecorded.PROSE))
    async with running_bot(
        db, slack_api, llm_server.base_url, tools=demo_b.tools, update_interval_s=EVERY_STATE
    ) as bot:
        body = app_mention(demo_b.question)
        assert (await bot.post(body)).status_code == 200
        messages = await answer_in(slack_api, CHANNEL, body["event"]["ts"])

    [run] = await runs(db)
    text = "\n".join(shown(message) for message in messages)
    assert run.status == "degraded"
    assert text.startswith("⚠️ Partial answer")
    assert "*Why*" in text and "*Missing*" in text
    assert "503" in text or "UPSTREAM_DOWN" in text  # why: the outage, named
    assert f"⚠️ degraded · {run.termination_reason} · " in text and f"run `{run.id[:12]}`" in text
    assert "✅" not in text and "solved" not in text  # never dressed up as an answer
    assert "%" not in text  # no invented market share
    progress = "\n".join(shown(c.params) for c in versions_of(slack_api, CHANNEL, messages[0]["ts"])[1:-1])
    assert "✗ web_search(" in progress


async def test_refusal_shows_the_reason_plainly(db, slack_api, llm_server):
    """A tool error graded L4 (here: an unknown city, by configuration) is a policy violation: refused, and
    escalated to people (the run waits for a reviewer)."""
    llm_server.respond_with(
        scripted(
            {"tool": "get_weather", "args": {"city": "Atlantis"}},
            {"final": "It is sunny in Atlantis."},  # must never be reached
        )
    )
    errors = {"CITY_NOT_FOUND": {"level": "L4", "retryable": False}}
    async with running_bot(db, slack_api, llm_server.base_url, errors=errors) as bot:
        body = app_mention("What is the weather in Atlantis?")
        assert (await bot.post(body)).status_code == 200
        [answer] = await answer_in(slack_api, CHANNEL, body["event"]["ts"])

    [run] = await runs(db)
    text = shown(answer)
    assert (run.status, run.termination_reason) == ("awaiting_review", "policy_violation")
    assert text.startswith("⛔ I can't do this")
    assert "Atlantis" in text.split("\n")[1]  # the reason, right under the header: what was refused
    assert "A person will review this request." in text
    assert f"⏸️ awaiting_review · policy_violation · {run.steps} step" in text and f"run `{run.id[:12]}`" in text
    assert "sunny" not in text
