"""Living within Slack's limits: updates throttled per message, 429s waited out as Retry-After says."""

from __future__ import annotations

import itertools

from agent import BuiltinToolEntry
from tests.bot.slack.harness import Gated, calculation, running_bot, scripted
from tests.bot.slack.seen import answer_in, runs, shown, versions_of
from tests.fakes.slack_events import CHANNEL, app_mention

INTERVAL_S = 0.5  # larger than the harness's, so that a missed throttle cannot hide in network noise
SLACK_JITTER_S = 0.02  # received_at is taken on the fake's side; allow a little clock slack
CITIES = ("Shanghai", "Beijing")
QUESTION = "What is the weather in Shanghai and Beijing?"
FINAL = "Shanghai is 28°C [1] and Beijing is 22°C [2]."
# Progress events of that run: each step's decision and its call's end, and the final decision ("checking").
PROGRESS_EVENTS = 2 * len(CITIES) + 1


def weather_run(slack_api, thread: str) -> Gated:
    """One weather call per step; each next decision waits until the thread shows the previous call's ✓, so
    the run has progress to show at every step and then ends right after an update."""
    script = scripted(*({"tool": "get_weather", "args": {"city": city}} for city in CITIES), {"final": FINAL})

    def shows_done(city: str):
        return lambda: (m := slack_api.messages_in(CHANNEL, thread)) and f'✓ get_weather(city="{city}")' in shown(m[0])

    return Gated(script, {n + 2: shows_done(city) for n, city in enumerate(CITIES)})


def slow_weather(latency_s: float) -> BuiltinToolEntry:
    return BuiltinToolEntry(builtin="get_weather", options={"latency_s": latency_s})


def gaps(calls) -> list[float]:
    return [later.received_at - earlier.received_at for earlier, later in itertools.pairwise(calls)]


async def throttled_run(db, slack_api, llm_server):
    body = app_mention(QUESTION)
    thread = body["event"]["ts"]
    llm_server.respond_with(weather_run(slack_api, thread))
    tools = ("calculator", slow_weather(0.1))  # each ✓ comes well after the update before it has returned
    async with running_bot(db, slack_api, llm_server.base_url, tools=tools, update_interval_s=INTERVAL_S) as bot:
        assert (await bot.post(body)).status_code == 200
        [answer] = await answer_in(slack_api, CHANNEL, thread)
    [run] = await runs(db)
    assert run.status == "solved", run.answer
    return versions_of(slack_api, CHANNEL, answer["ts"])


async def test_updates_of_one_message_never_come_faster_than_the_interval(db, slack_api, llm_server):
    placeholder, *progress, final = await throttled_run(db, slack_api, llm_server)
    assert placeholder.method == "chat.postMessage" and "28°C" in shown(final.params)
    assert 1 <= len(progress) < PROGRESS_EVENTS  # several states were folded into one update
    every_gap = gaps([placeholder, *progress, final])  # the answer replacing the progress counts too
    assert min(every_gap) >= INTERVAL_S - SLACK_JITTER_S, every_gap


async def test_rate_limited_slack_is_waited_out_and_the_answer_still_arrives(db, slack_api, llm_server):
    """429 with Retry-After on the placeholder's chat.postMessage and on chat.update: slack_sdk's handler waits
    as told. chat.update allows one call a second here, so a retry that did not wait would be refused again
    (three times, then the bot would post its answer as a second message). One progress update (the model
    waits for it) is followed by the answer half a second later: refused once, then let through."""
    body = app_mention("What is 47 times 12?")
    thread = body["event"]["ts"]

    def shows_done():
        return (found := slack_api.messages_in(CHANNEL, thread)) and "✓ calculator(" in shown(found[0])

    llm_server.respond_with(Gated(calculation("47 * 12", "564"), {2: shows_done}))
    slack_api.fail_next("chat.postMessage", retry_after=1)
    slack_api.limit_rate("chat.update", max_calls=1, per_s=1.0, retry_after=1)
    async with running_bot(db, slack_api, llm_server.base_url, update_interval_s=INTERVAL_S) as bot:
        assert (await bot.post(body)).status_code == 200
        [answer] = await answer_in(slack_api, CHANNEL, thread, timeout_s=20)

    assert "564 [1]" in shown(answer)  # the one message in the thread: the placeholder, replaced
    assert [c.ok for c in slack_api.calls("chat.postMessage")] == [False, True], slack_api.describe_calls()
    assert slack_api.rate_limited("chat.update") >= 1, slack_api.describe_calls()
    final = slack_api.calls("chat.update")[-1]
    assert final.ok and final.params["ts"] == answer["ts"]


async def test_progress_that_arrives_while_an_update_is_in_flight_is_shown_next(db, slack_api, llm_server):
    body = app_mention("What is the weather in Shanghai?")
    thread = body["event"]["ts"]

    def shows_done():
        return (found := slack_api.messages_in(CHANNEL, thread)) and "✓ get_weather(" in shown(found[0])

    # The model is slow to take its next decision: until the thread shows the call done (or 6 s).
    script = scripted({"tool": "get_weather", "args": {"city": "Shanghai"}}, {"final": "Shanghai is 28°C [1]."})
    llm_server.respond_with(Gated(script, {2: shows_done}, timeout_s=6.0))
    # Timeline: placeholder at 0; "… get_weather" scheduled for INTERVAL_S, whose chat.update gets a 429 and
    # waits ≥ 1 s; the call (0.8 s slow) ends during that wait, and is shown once that update is through.
    slack_api.fail_next("chat.update", retry_after=1)
    async with running_bot(
        db, slack_api, llm_server.base_url, tools=("calculator", slow_weather(0.8)), update_interval_s=INTERVAL_S
    ) as bot:
        assert (await bot.post(body)).status_code == 200
        await slack_api.wait_for_async(
            lambda: (found := slack_api.messages_in(CHANNEL, thread)) and shown(found[0]).startswith("⏳ Working"),
            what="the placeholder",
        )
        await slack_api.wait_for_async(shows_done, timeout_s=5.0, what="the finished call in the progress")
        [answer] = await answer_in(slack_api, CHANNEL, thread)
    assert "28°C [1]" in shown(answer)
