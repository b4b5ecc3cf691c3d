"""The bot's real endpoint as Slack calls it: signatures, retries, broken bodies, events Parley does not use."""

from __future__ import annotations

import json
import logging
import threading
import time

import httpx

from tests.bot.slack.harness import ByQuestion, calculation, mentioned_and_answered, running_bot
from tests.bot.slack.seen import answer_in, runs, writes
from tests.fakes.slack_events import (
    CHANNEL,
    SIGNING_SECRET,
    app_mention,
    event_callback,
    post_event,
    sign,
    slash_command,
    url_verification,
)
from tests.fakes.slack_workspace import TEAM_ID, next_ts

QUESTION = "What is 47 times 12?"
SENTINEL = "What is 6 times 7?"  # asked last: once it is answered, every earlier event has been handled
STALE_S = 6 * 60  # Slack's verification rejects requests older than five minutes

# Events Parley is subscribed to or may receive, in the shapes of Slack's Events API reference.
REACTION_ADDED = {
    "type": "reaction_added",
    "user": "U0ASKER",
    "reaction": "thumbsup",
    "item_user": "UBOT",
    "item": {"type": "message", "channel": CHANNEL, "ts": "1360782400.498405"},
    "event_ts": "1360782804.083113",
}
TEAM_JOIN = {
    "type": "team_join",
    "user": {
        "id": "U0NEWBIE",
        "team_id": TEAM_ID,
        "name": "newbie",
        "deleted": False,
        "real_name": "New Person",
        "tz": "Europe/Paris",
        "profile": {"display_name": "newbie", "real_name": "New Person"},
        "is_bot": False,
    },
    "cache_ts": 1700000000,
    "event_ts": "1700000000.000100",
}


def standard() -> ByQuestion:
    """A fresh LLM script for the two questions of these tests (scripts are used up as runs go)."""
    return ByQuestion({QUESTION: calculation("47 * 12", "564"), SENTINEL: calculation("6 * 7", "42")})


async def test_signed_request_is_acknowledged_with_200(db, slack_api, llm_server):
    llm_server.respond_with(standard())
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        body = app_mention(QUESTION)
        response = await bot.post(body)
        assert response.status_code == 200
        [answer] = await answer_in(slack_api, CHANNEL, body["event"]["ts"])
    assert "564" in answer["text"]


FORGERIES = ("garbage signature", "another secret", "stale timestamp")


def forged(body: bytes, forgery: str) -> dict[str, object]:
    """post_event options that sign `body` wrongly in one way."""
    now = int(time.time())
    if forgery == "garbage signature":
        return {"signature": "v0=" + "0" * 64}
    if forgery == "another secret":
        return {"timestamp": now, "signature": sign(body, "not-the-secret", now)["X-Slack-Signature"]}
    if forgery == "stale timestamp":  # correctly signed, but six minutes old (a replay)
        return {"timestamp": now - STALE_S}
    raise ValueError(forgery)


async def test_badly_signed_requests_are_refused_with_401(db, slack_api, llm_server):
    llm_server.respond_with(standard())
    body = json.dumps(app_mention(QUESTION)).encode()
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        for forgery in FORGERIES:
            response = await bot.post(body, **forged(body, forgery))
            assert response.status_code == 401, forgery
        await mentioned_and_answered(bot, SENTINEL)  # the refused events left nothing behind them
    assert [run.question for run in await runs(db)] == [SENTINEL]


async def test_unsigned_request_is_refused_with_401(db, slack_api, llm_server):
    async with running_bot(db, slack_api, llm_server.base_url) as bot, httpx.AsyncClient(trust_env=False) as http:
        response = await http.post(f"{bot.url}/slack/events", json=app_mention(QUESTION))
    assert response.status_code == 401
    assert await runs(db) == []
    assert writes(slack_api) == []


async def test_retried_delivery_of_one_event_is_one_run_and_one_answer(db, slack_api, llm_server):
    llm_server.respond_with(standard())
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        body = app_mention(QUESTION)
        first = await bot.post(body)
        retry = await bot.post(body, retry_num=1, retry_reason="http_timeout")
        assert (first.status_code, retry.status_code) == (200, 200)
        thread = body["event"]["ts"]
        await answer_in(slack_api, CHANNEL, thread)
        await mentioned_and_answered(bot, SENTINEL)

    assert [run.trigger_ts for run in await runs(db) if run.question == QUESTION] == [thread]
    posted_in_thread = [c for c in slack_api.calls("chat.postMessage") if c.params.get("thread_ts") == thread]
    assert len(posted_in_thread) == 1, slack_api.describe_calls()
    assert len(slack_api.messages_in(CHANNEL, thread)) == 1


BROKEN_JSON = b'{"type": "event_callback", "team_id": "T0PARLEY", "event": {"type": "app_mention", "text": '


async def test_malformed_json_gets_a_4xx_without_a_traceback_and_serving_goes_on(db, slack_api, llm_server, caplog):
    """A correctly signed body that is not JSON (Slack never sends one; a proxy or a bug might)."""
    caplog.set_level(logging.INFO)
    llm_server.respond_with(standard())
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        broken = await bot.post(BROKEN_JSON)
        [answer] = await mentioned_and_answered(bot, SENTINEL)
        health = await bot.get("/healthz")

    assert 400 <= broken.status_code < 500, broken.status_code
    assert [record.getMessage() for record in caplog.records if record.exc_info] == []  # no traceback logged
    assert "42" in answer["text"]
    assert health.status_code == 200
    assert [run.question for run in await runs(db)] == [SENTINEL]


async def test_events_parley_does_not_use_are_acknowledged_and_do_nothing(db, slack_api, llm_server):
    llm_server.respond_with(standard())
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        for event in (REACTION_ADDED, TEAM_JOIN):
            response = await bot.post(event_callback(event))
            assert response.status_code == 200, event["type"]
        answer = await mentioned_and_answered(bot, SENTINEL)

    assert [run.question for run in await runs(db)] == [SENTINEL]
    [posted] = slack_api.calls("chat.postMessage")  # the sentinel's answer, and nothing else
    assert posted.params["thread_ts"] == answer[0]["thread_ts"]


async def test_url_verification_echoes_the_challenge(db, slack_api, llm_server):
    challenge = f"challenge-{next_ts()}"
    async with running_bot(db, slack_api, llm_server.base_url) as bot:
        response = await bot.post(url_verification(challenge))
    assert response.status_code == 200
    echoed = response.json()["challenge"] if response.text.startswith("{") else response.text
    assert echoed == challenge
    assert await runs(db) == []
    assert writes(slack_api) == []


HOLD_S = 30.0  # a hang guard: the acknowledgement comes at once, or the test fails after this


async def test_a_mention_is_acknowledged_while_the_application_loop_is_held(db, slack_api, llm_server):
    """The ack never waits behind a run: the web front answers Slack (a process of its own in `parley serve`, a
    thread of its own here). Here the application's loop is held outright (as a long step of a run would hold
    it) until Slack's POST is answered; the question is taken and answered once the loop is free again. An
    interactive request, whose answer is bolt's, waits for the loop instead, and is answered too."""
    llm_server.respond_with(standard())
    body = app_mention(QUESTION)
    statuses: dict[str, int] = {}
    acknowledged = threading.Event()
    async with running_bot(db, slack_api, llm_server.base_url) as bot:

        def slack_posts() -> None:  # Slack's side, from a thread of its own
            statuses["mention"] = post_event(f"{bot.url}/slack/events", body, SIGNING_SECRET).status_code
            acknowledged.set()

        poster = threading.Thread(target=slack_posts)
        poster.start()
        held = acknowledged.wait(HOLD_S)  # holds this loop, the application's, without yielding it
        poster.join()
        assert held, "the acknowledgement waited for the application's loop"
        assert statuses == {"mention": 200}
        [answer] = await answer_in(slack_api, CHANNEL, body["event"]["ts"])
        assert "564" in answer["text"]
        command = await bot.post(slash_command("/parley", "help"))  # bolt's answer, from the application's loop
    assert command.status_code == 200, command.text
    assert command.json()["response_type"] == "ephemeral" and "/parley help" in command.text, command.text
    assert [run.question for run in await runs(db)] == [QUESTION]
