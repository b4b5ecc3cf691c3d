"""Slack's agent messaging experience (`agent_view`), through signed events to the running bot: opening the
Messages tab offers the suggested prompts there (no thread), a prompt clicked there is a direct message asked
and answered in its own thread exactly once, and an app still on the assistant pane keeps working — the bot
reads which experience a workspace has from the events Slack sends. Both manifests declare what they need."""

from __future__ import annotations

import logging
from pathlib import Path

import yaml

from tests.bot.slack.harness import ByQuestion, calculation, running_bot
from tests.bot.slack.seen import answer_in, runs, shown
from tests.fakes.slack_events import DM_CHANNEL, app_home_opened, assistant_thread_started, direct_message

CONFIG = Path(__file__).resolve().parents[3] / "config"
AGENT_VIEW = CONFIG / "slack-manifest.yaml"
ASSISTANT_VIEW = CONFIG / "slack-manifest-assistant-view.yaml"
DRAWN = {
    "title": "Try asking",
    "prompts": [
        {"title": "Calculate 47 * 12", "message": "What is 47 * 12?"},
        {"title": "Look up a fact", "message": "Look up satellites launched in the knowledge base."},
        {"title": "Weather in 上海", "message": "What's the weather in 上海 right now?"},
    ],
}


async def test_opening_the_messages_tab_offers_the_prompts_without_a_thread(db, slack_api, llm_server):
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        assert (await bot.post(app_home_opened(tab="messages"))).status_code == 200
        offered = await slack_api.wait_for_async(
            lambda: slack_api.suggested_prompts(DM_CHANNEL, None), what="the Messages tab's prompts"
        )

    assert offered == DRAWN
    [call] = slack_api.calls("assistant.threads.setSuggestedPrompts")
    assert call.params["channel_id"] == DM_CHANNEL and "thread_ts" not in call.params
    assert slack_api.calls("views.publish") == []  # the Messages tab is not the Home tab
    assert await runs(db) == []  # opening the tab asks nothing


async def test_a_prompt_clicked_in_the_messages_tab_is_answered_in_its_own_thread_once(db, slack_api, llm_server):
    llm_server.respond_with(ByQuestion({"What is 47 * 12?": calculation("47 * 12", "564")}))
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        assert (await bot.post(app_home_opened(tab="messages"))).status_code == 200
        offered = await slack_api.wait_for_async(
            lambda: slack_api.suggested_prompts(DM_CHANNEL, None), what="the Messages tab's prompts"
        )
        # The person clicks the first prompt: Slack posts its message as theirs, at the top of the DM.
        clicked = direct_message(offered["prompts"][0]["message"])
        assert (await bot.post(clicked)).status_code == 200
        assert (await bot.post(clicked, retry_num=1)).status_code == 200  # Slack's redelivery
        [*_, answer] = await answer_in(slack_api, DM_CHANNEL, clicked["event"]["ts"])

    assert "564" in shown(answer)
    [run] = await runs(db)
    assert (run.channel_id, run.thread_ts, run.trigger_ts) == (DM_CHANNEL, clicked["event"]["ts"], run.thread_ts)
    assert (run.question, run.status) == ("What is 47 * 12?", "solved")


async def test_refused_messages_tab_prompts_are_logged_and_the_home_tab_still_works(db, slack_api, llm_server, caplog):
    slack_api.fail_next("assistant.threads.setSuggestedPrompts", error="missing_scope")
    caplog.set_level(logging.WARNING)
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        assert (await bot.post(app_home_opened(tab="messages"))).status_code == 200
        await slack_api.wait_for_async(
            lambda: "suggested prompts of the Messages tab" in caplog.text, what="the refusal in the log"
        )
        assert (await bot.post(app_home_opened(tab="home"))).status_code == 200
        await slack_api.wait_for_async(lambda: slack_api.calls("views.publish"), what="the Home tab")

    assert "missing_scope" in caplog.text
    assert slack_api.suggested_prompts(DM_CHANNEL, None) is None


async def test_one_bot_serves_both_experiences_as_slack_shows_them(db, slack_api, llm_server):
    """No setting says which experience the workspace has: the Messages tab and the assistant pane both work."""
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        started = assistant_thread_started()
        thread = started["event"]["assistant_thread"]["thread_ts"]
        assert (await bot.post(started)).status_code == 200
        assert (await bot.post(app_home_opened(tab="messages"))).status_code == 200
        await slack_api.wait_for_async(
            lambda: slack_api.suggested_prompts(DM_CHANNEL, thread) and slack_api.suggested_prompts(DM_CHANNEL, None),
            what="the prompts in both places",
        )

    assert slack_api.suggested_prompts(DM_CHANNEL, thread) == slack_api.suggested_prompts(DM_CHANNEL, None) == DRAWN


def test_the_shipped_manifest_uses_the_agent_view_with_least_privilege():
    manifest = yaml.safe_load(AGENT_VIEW.read_text(encoding="utf-8"))
    features = manifest["features"]
    events = set(manifest["settings"]["event_subscriptions"]["bot_events"])
    scopes = manifest["oauth_config"]["scopes"]["bot"]

    assert features["agent_view"]["agent_description"] and "assistant_view" not in features
    assert features["app_home"]["messages_tab_enabled"] is True
    assert features["app_home"]["messages_tab_read_only_enabled"] is False  # people type their questions there
    assert {"app_home_opened", "agent_session_stopped", "message.im"} <= events
    # The assistant pane's events are not subscribed: an agent_view app is never sent them.
    assert not events & {"assistant_thread_started", "assistant_thread_context_changed"}
    assert len(scopes) == len(set(scopes))
    assert set(scopes) == {
        "app_mentions:read",
        "chat:write",
        "im:history",
        "channels:history",
        "groups:history",
        "commands",
        "usergroups:read",
        "assistant:write",
    }


def test_the_assistant_view_manifest_keeps_the_older_experience():
    manifest = yaml.safe_load(ASSISTANT_VIEW.read_text(encoding="utf-8"))
    shipped = yaml.safe_load(AGENT_VIEW.read_text(encoding="utf-8"))
    events = set(manifest["settings"]["event_subscriptions"]["bot_events"])

    assert manifest["features"]["assistant_view"]["assistant_description"] and "agent_view" not in manifest["features"]
    assert {"assistant_thread_started", "assistant_thread_context_changed", "message.im", "app_home_opened"} <= events
    # Apart from the experience, the two manifests ask for the same things.
    assert manifest["oauth_config"] == shipped["oauth_config"]
    assert manifest["features"]["slash_commands"] == shipped["features"]["slash_commands"]
