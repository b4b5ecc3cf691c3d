"""Slack's assistant pane, through signed events to the running bot: a new thread is offered suggested prompts
(drawn from the tools, or configured); a question there is answered in that thread like a DM, the first one
titles the thread, a follow-up is a follow-up; what Slack refuses is logged and costs no answer."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import yaml

from bot.suggested_prompts import AssistantConfig, SuggestedPrompt
from tests.bot.slack.harness import ByQuestion, calculation, running_bot
from tests.bot.slack.seen import STATUS_MARK, answer_in, runs, shown
from tests.bot.slack.test_conversations import decisions_about
from tests.bot.slack.test_serve_process import PARLEY, serve_environment, wait_until_healthy
from tests.fakes.slack_events import (
    DM_CHANNEL,
    SIGNING_SECRET,
    assistant_message,
    assistant_thread_started,
    direct_message,
    event_callback,
    post_event,
)
from tests.fakes.slack_workspace import next_ts
from tests.serving import free_port, server_process, terminate

QUESTION = "What is 47 times 12, and please show me how you worked it out step by step?"
FOLLOW_UP = "And what is that times 2?"
SENTINEL = "What is 6 times 7?"
MANIFEST = Path(__file__).resolve().parents[3] / "config" / "slack-manifest-assistant-view.yaml"
TITLE = "What is 47 times 12, and please show me how you worked it o…"  # 60 characters, cut with "…"


def llm() -> ByQuestion:
    return ByQuestion(
        {
            QUESTION: calculation("47 * 12", "564"),
            FOLLOW_UP: calculation("564 * 2", "1128"),
            SENTINEL: calculation("6 * 7", "42"),
        }
    )


async def answers_in(slack_api, thread: str, count: int) -> list[dict[str, Any]]:
    """The bot's messages in the assistant thread once `count` answers there are finished."""
    return await slack_api.wait_for_async(
        lambda: (
            (found := slack_api.messages_in(DM_CHANNEL, thread))
            and len(found) == count
            and all(STATUS_MARK in shown(message) for message in found)
            and found
        ),
        what=f"{count} finished answer(s) in the assistant thread",
    )


async def test_thread_started_offers_prompts_drawn_from_the_tools(db, slack_api, llm_server):
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        started = assistant_thread_started()
        thread = started["event"]["assistant_thread"]["thread_ts"]
        assert (await bot.post(started)).status_code == 200
        offered = await slack_api.wait_for_async(
            lambda: slack_api.suggested_prompts(DM_CHANNEL, thread), what="the suggested prompts"
        )

    # One per tool the bot runs (calculator, knowledge_lookup, get_weather), from the examples the tools give.
    assert offered == {
        "title": "Try asking",
        "prompts": [
            {"title": "Calculate 47 * 12", "message": "What is 47 * 12?"},
            {"title": "Look up a fact", "message": "Look up satellites launched in the knowledge base."},
            {"title": "Weather in 上海", "message": "What's the weather in 上海 right now?"},
        ],
    }
    [call] = slack_api.calls("assistant.threads.setSuggestedPrompts")
    assert (call.params["channel_id"], call.params["thread_ts"]) == (DM_CHANNEL, thread)
    assert await runs(db) == []  # opening the pane asks nothing


async def test_thread_started_offers_the_configured_prompts(db, slack_api, llm_server):
    configured = AssistantConfig(
        title="Ask Parley about",
        prompts=(SuggestedPrompt(title="Launch costs", message="What did Zephyr Labs spend on satellites?"),),
    )
    async with running_bot(db, slack_api, llm_server.base_url, assistant=configured) as bot:
        started = assistant_thread_started()
        thread = started["event"]["assistant_thread"]["thread_ts"]
        assert (await bot.post(started)).status_code == 200
        offered = await slack_api.wait_for_async(
            lambda: slack_api.suggested_prompts(DM_CHANNEL, thread), what="the suggested prompts"
        )

    assert offered == {
        "title": "Ask Parley about",
        "prompts": [{"title": "Launch costs", "message": "What did Zephyr Labs spend on satellites?"}],
    }


async def test_no_prompts_configured_sets_none_and_questions_still_work(db, slack_api, llm_server):
    llm_server.respond_with(llm())
    async with running_bot(db, slack_api, llm_server.base_url, assistant=AssistantConfig(prompts=())) as bot:
        started = assistant_thread_started()
        thread = started["event"]["assistant_thread"]["thread_ts"]
        assert (await bot.post(started)).status_code == 200
        assert (await bot.post(assistant_message(SENTINEL, thread_ts=thread))).status_code == 200
        await answers_in(slack_api, thread, 1)

    assert slack_api.calls("assistant.threads.setSuggestedPrompts") == []


async def test_question_in_the_pane_is_answered_in_its_thread_like_a_dm_and_titles_it(db, slack_api, llm_server):
    llm_server.respond_with(llm())
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        started = assistant_thread_started()
        thread = started["event"]["assistant_thread"]["thread_ts"]
        assert (await bot.post(started)).status_code == 200
        asked = assistant_message(QUESTION, thread_ts=thread)
        assert (await bot.post(asked)).status_code == 200
        [answer] = await answers_in(slack_api, thread, 1)
        await slack_api.wait_for_async(lambda: slack_api.thread_title(DM_CHANNEL, thread), what="the title")

        assert (await bot.post(asked, retry_num=1)).status_code == 200  # Slack's redelivery: no second run
        assert (await bot.post(assistant_message(FOLLOW_UP, thread_ts=thread))).status_code == 200
        _, follow_up_answer = await answers_in(slack_api, thread, 2)

    assert "564" in shown(answer) and "1128" in shown(follow_up_answer)
    first, follow_up = await runs(db)
    assert (first.channel_id, first.thread_ts, first.trigger_ts, first.question, first.status) == (
        DM_CHANNEL,
        thread,
        asked["event"]["ts"],
        QUESTION,
        "solved",
    )
    assert (follow_up.thread_ts, follow_up.question, follow_up.status) == (thread, FOLLOW_UP, "solved")
    assert first.source == follow_up.source == "slack"
    # One thread, one conversation: the follow-up carries the first exchange.
    [decision, *_] = decisions_about(llm_server, FOLLOW_UP)
    conversation = [(m["role"], m.get("content")) for m in decision["messages"] if m["role"] != "system"]
    assert conversation == [("user", QUESTION), ("assistant", first.answer), ("user", FOLLOW_UP)]
    # The first question titled the thread, shortened; neither the redelivery nor the follow-up retitled it.
    [titled] = slack_api.calls("assistant.threads.setTitle")
    assert (titled.params["channel_id"], titled.params["thread_ts"]) == (DM_CHANNEL, thread)
    assert slack_api.thread_title(DM_CHANNEL, thread) == TITLE and len(TITLE) == 60


async def test_refused_title_still_gets_the_question_answered(db, slack_api, llm_server, caplog):
    llm_server.respond_with(llm())
    slack_api.fail_next("assistant.threads.setTitle", error="not_allowed")
    caplog.set_level(logging.WARNING)
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        thread = next_ts()
        assert (await bot.post(assistant_message(SENTINEL, thread_ts=thread))).status_code == 200
        [answer] = await answers_in(slack_api, thread, 1)
        await slack_api.wait_for_async(
            lambda: "could not title the assistant thread" in caplog.text, what="the refusal in the log"
        )

    assert "42" in shown(answer)
    [refused] = slack_api.calls("assistant.threads.setTitle")
    assert not refused.ok and slack_api.thread_title(DM_CHANNEL, thread) is None
    assert "not_allowed" in caplog.text
    [run] = await runs(db)
    assert run.status == "solved"


async def test_refused_prompts_and_a_broken_thread_started_event_lose_nothing(db, slack_api, llm_server, caplog):
    llm_server.respond_with(llm())
    slack_api.fail_next("assistant.threads.setSuggestedPrompts", error="missing_scope")
    caplog.set_level(logging.WARNING)
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        started = assistant_thread_started()
        thread = started["event"]["assistant_thread"]["thread_ts"]
        broken = event_callback({"type": "assistant_thread_started", "event_ts": next_ts()})  # no assistant_thread
        assert (await bot.post(started)).status_code == 200
        assert (await bot.post(broken)).status_code == 200
        await slack_api.wait_for_async(
            lambda: "without its thread" in caplog.text and "missing_scope" in caplog.text,
            what="both problems in the log",
        )
        assert (await bot.post(assistant_message(SENTINEL, thread_ts=thread))).status_code == 200
        [answer] = await answers_in(slack_api, thread, 1)

    # Slack refused the prompts (logged); the broken event was acknowledged and made no call; the thread works.
    [refused] = slack_api.calls("assistant.threads.setSuggestedPrompts")
    assert not refused.ok and slack_api.suggested_prompts(DM_CHANNEL, thread) is None
    assert "42" in shown(answer)


async def test_reply_in_an_ordinary_dm_thread_stays_a_follow_up_without_a_title(db, slack_api, llm_server):
    llm_server.respond_with(llm())
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        asked = direct_message(QUESTION)
        thread = asked["event"]["ts"]
        assert (await bot.post(asked)).status_code == 200
        await answer_in(slack_api, DM_CHANNEL, thread)
        # A threaded DM reply goes through bolt's assistant middleware now: the same intake as before.
        assert (await bot.post(direct_message(FOLLOW_UP, thread_ts=thread))).status_code == 200
        await answers_in(slack_api, thread, 2)

    first, follow_up = await runs(db)
    assert (first.thread_ts, follow_up.thread_ts, follow_up.question) == (thread, thread, FOLLOW_UP)
    assert follow_up.status == "solved"
    assert slack_api.calls("assistant.threads.setTitle") == []  # the thread was Parley's already


def test_manifest_turns_the_assistant_view_on_with_its_scope_and_events():
    manifest = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))

    assert manifest["features"]["assistant_view"]["assistant_description"]
    assert {"assistant:write", "im:history"} <= set(manifest["oauth_config"]["scopes"]["bot"])
    events = set(manifest["settings"]["event_subscriptions"]["bot_events"])
    assert {"assistant_thread_started", "assistant_thread_context_changed", "message.im"} <= events


def test_parley_serve_offers_the_prompts_of_its_yaml_and_answers_in_the_pane(
    tmp_path: Path, serve_db: str, slack_api, llm_server
):
    llm_server.respond_with(calculation("6 * 7", "42"))
    config = tmp_path / "parley.yaml"
    config.write_text(
        "limits: {retry_backoff_base_s: 0.01, retry_backoff_max_s: 0.05, llm_max_retries: 1}\n"
        "tools: [{builtin: calculator}]\n"
        "assistant:\n"
        "  title: Ask Parley\n"
        f"  prompts: [{{title: Six sevens, message: '{SENTINEL}'}}]\n",
        encoding="utf-8",
    )
    env = serve_environment(tmp_path, serve_db, slack_api, llm_server, workers=1)
    port = free_port()
    stdout, stderr = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    command = [str(PARLEY), "serve", "--port", str(port), "--host", "127.0.0.1", "--config", str(config)]
    events = f"http://127.0.0.1:{port}/slack/events"
    with server_process(command, env=env, cwd=tmp_path, stderr=stderr, stdout=stdout) as server:
        wait_until_healthy(f"http://127.0.0.1:{port}/healthz", server, stderr)
        started = assistant_thread_started()
        thread = started["event"]["assistant_thread"]["thread_ts"]
        assert post_event(events, started, SIGNING_SECRET).status_code == 200
        offered = slack_api.wait_for(lambda: slack_api.suggested_prompts(DM_CHANNEL, thread), what="the prompts")
        # The person clicks the prompt: Slack posts its message in the thread.
        [prompt] = offered["prompts"]
        assert (
            post_event(events, assistant_message(prompt["message"], thread_ts=thread), SIGNING_SECRET).status_code
            == 200
        )
        [answer] = slack_api.wait_for(
            lambda: (found := slack_api.messages_in(DM_CHANNEL, thread)) and STATUS_MARK in shown(found[-1]) and found,
            timeout_s=20,
            what="the answer in the assistant thread",
        )
        slack_api.wait_for(lambda: slack_api.thread_title(DM_CHANNEL, thread), what="the thread's title")
        terminate(server, 15)

    assert offered == {"title": "Ask Parley", "prompts": [{"title": "Six sevens", "message": SENTINEL}]}
    assert "42" in shown(answer)
    assert slack_api.thread_title(DM_CHANNEL, thread) == SENTINEL
