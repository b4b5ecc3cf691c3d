"""The Slack fakes behave like Slack for the real clients: slack_sdk's AsyncWebClient and a slack_bolt AsyncApp."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from aiohttp import web
from slack_bolt.async_app import AsyncApp
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.models.messages.chunk import MarkdownTextChunk, PlanUpdateChunk, TaskUpdateChunk
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes import slack_events
from tests.fakes.http_api import ApiReply, FakeHttpApi
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_events import SIGNING_SECRET, post_event, post_event_async, sign
from tests.fakes.slack_workspace import BOT_ID, BOT_TOKEN, BOT_USER_ID, TEAM_ID, ts_order

CHANNEL = "C0TEST"
BLOCKS = [{"type": "section", "text": {"type": "mrkdwn", "text": "*Thinking…*"}}]


@pytest.fixture
def slack() -> Iterator[FakeSlackApi]:
    with FakeSlackApi() as fake:
        yield fake


@pytest.fixture
def client(slack: FakeSlackApi) -> AsyncWebClient:
    return AsyncWebClient(token=BOT_TOKEN, base_url=f"{slack.base_url}/")


async def test_slack_api_auth_test_names_the_bot(slack: FakeSlackApi, client: AsyncWebClient) -> None:
    response = await client.auth_test()

    assert (response["user_id"], response["bot_id"], response["team_id"]) == (BOT_USER_ID, BOT_ID, TEAM_ID)
    [call] = slack.calls("auth.test")
    assert call.headers["authorization"] == f"Bearer {BOT_TOKEN}"
    assert call.http_method == "POST"


async def test_slack_api_post_message_records_blocks_and_issues_fresh_ts(
    slack: FakeSlackApi, client: AsyncWebClient
) -> None:
    first = await client.chat_postMessage(channel=CHANNEL, text="Thinking…", blocks=BLOCKS, thread_ts="1.000001")
    second = await client.chat_postMessage(channel=CHANNEL, text="again", thread_ts="1.000001")

    assert first["channel"] == CHANNEL
    assert first["message"]["blocks"] == BLOCKS
    assert first["message"]["user"] == BOT_USER_ID
    assert ts_order(first["ts"]) < ts_order(second["ts"])
    assert slack.calls("chat.postMessage")[0].params["blocks"] == BLOCKS  # decoded, not JSON text


async def test_slack_api_form_encoded_call_decodes_blocks(slack: FakeSlackApi, client: AsyncWebClient) -> None:
    await client.api_call("chat.postMessage", data={"channel": CHANNEL, "text": "hi", "blocks": json.dumps(BLOCKS)})

    [call] = slack.calls("chat.postMessage")
    assert call.headers["content-type"] == "application/x-www-form-urlencoded"
    assert call.params["blocks"] == BLOCKS
    assert [message["text"] for message in slack.messages_in(CHANNEL)] == ["hi"]


async def test_slack_api_update_replaces_text_and_keeps_blocks(slack: FakeSlackApi, client: AsyncWebClient) -> None:
    thread = slack.add_message(CHANNEL, "<@UBOT> what's the weather?", user="U0ASKER")
    posted = await client.chat_postMessage(channel=CHANNEL, text="Thinking…", blocks=BLOCKS, thread_ts=thread)

    await client.chat_update(channel=CHANNEL, ts=posted["ts"], text="Sunny, 21 °C")
    [message] = slack.messages_in(CHANNEL, thread)
    assert (message["text"], message["blocks"], message["ts"]) == ("Sunny, 21 °C", BLOCKS, posted["ts"])
    assert message["edited"]["user"] == BOT_USER_ID

    await client.chat_update(channel=CHANNEL, ts=posted["ts"], text="Sunny", blocks=[])
    [message] = slack.messages_in(CHANNEL, thread)
    assert (message["text"], message["blocks"]) == ("Sunny", [])


async def test_slack_api_update_refuses_unknown_and_foreign_messages(
    slack: FakeSlackApi, client: AsyncWebClient
) -> None:
    question = slack.add_message(CHANNEL, "hello", user="U0ASKER")

    with pytest.raises(SlackApiError) as unknown:
        await client.chat_update(channel=CHANNEL, ts="1.000001", text="x")
    with pytest.raises(SlackApiError) as foreign:
        await client.chat_update(channel=CHANNEL, ts=question, text="x")

    assert unknown.value.response["error"] == "message_not_found"
    assert foreign.value.response["error"] == "cant_update_message"


async def test_slack_api_conversations_replies_returns_thread_from_its_record(
    slack: FakeSlackApi, client: AsyncWebClient
) -> None:
    thread = slack.add_message(CHANNEL, "<@UBOT> question", user="U0ASKER")
    slack.add_message(CHANNEL, "more detail", user="U0ASKER", thread_ts=thread)
    reply = await client.chat_postMessage(channel=CHANNEL, text="draft", thread_ts=thread)
    await client.chat_update(channel=CHANNEL, ts=reply["ts"], text="answer")
    await client.chat_postMessage(channel=CHANNEL, text="elsewhere", thread_ts="1.000001")

    response = await client.conversations_replies(channel=CHANNEL, ts=thread)
    page = await client.conversations_replies(channel=CHANNEL, ts=thread, limit=2)
    rest = await client.conversations_replies(
        channel=CHANNEL, ts=thread, cursor=page["response_metadata"]["next_cursor"]
    )

    assert [m["text"] for m in response["messages"]] == ["<@UBOT> question", "more detail", "answer"]
    assert response["messages"][0]["reply_count"] == 2
    assert [m["text"] for m in page["messages"] + rest["messages"]] == [m["text"] for m in response["messages"]]
    assert page["has_more"] and not rest["has_more"]
    assert slack.calls("conversations.replies")[0].http_method == "GET"
    with pytest.raises(SlackApiError, match="thread_not_found"):
        await client.conversations_replies(channel=CHANNEL, ts="2.000002")


async def test_slack_api_thread_status_ends_with_a_reply(slack: FakeSlackApi, client: AsyncWebClient) -> None:
    await client.assistant_threads_setStatus(channel_id=CHANNEL, thread_ts="1.000001", status="is thinking…")
    assert slack.thread_status(CHANNEL, "1.000001") == "is thinking…"

    await client.chat_postMessage(channel=CHANNEL, text="done", thread_ts="1.000001")
    assert slack.thread_status(CHANNEL, "1.000001") is None


async def test_slack_api_assistant_prompts_and_title_are_kept_per_thread(
    slack: FakeSlackApi, client: AsyncWebClient
) -> None:
    prompts = [{"title": "Weather", "message": "What's the weather in Paris?"}]
    await client.assistant_threads_setSuggestedPrompts(
        channel_id="D0ASKER", thread_ts="1.000001", prompts=prompts, title="Try asking"
    )
    await client.assistant_threads_setTitle(channel_id="D0ASKER", thread_ts="1.000001", title="Weather in Paris")

    assert slack.suggested_prompts("D0ASKER", "1.000001") == {"title": "Try asking", "prompts": prompts}
    assert slack.thread_title("D0ASKER", "1.000001") == "Weather in Paris"
    assert slack.suggested_prompts("D0ASKER", "2.000001") is None and slack.thread_title("D0ASKER", "2.000001") is None


async def test_slack_api_assistant_methods_refuse_what_slack_refuses(
    slack: FakeSlackApi, client: AsyncWebClient
) -> None:
    five = [{"title": f"t{n}", "message": f"m{n}"} for n in range(5)]
    refusals = [
        client.assistant_threads_setSuggestedPrompts(channel_id="D0ASKER", thread_ts="1.000001", prompts=five),
        client.assistant_threads_setSuggestedPrompts(
            channel_id="D0ASKER", thread_ts="1.000001", prompts=[{"title": "no message"}]
        ),
        client.assistant_threads_setTitle(channel_id="D0ASKER", thread_ts="1.000001", title=""),
    ]
    errors = []
    for call in refusals:
        with pytest.raises(SlackApiError) as refused:
            await call
        errors.append(refused.value.response["error"])

    assert errors == ["invalid_arguments", "invalid_arguments", "invalid_arguments"]
    assert slack.suggested_prompts("D0ASKER", "1.000001") is None and slack.thread_title("D0ASKER", "1.000001") is None


async def test_slack_api_messages_tab_prompts_need_no_thread(slack: FakeSlackApi, client: AsyncWebClient) -> None:
    prompts = [{"title": "Weather", "message": "What's the weather in Paris?"}]
    await client.assistant_threads_setSuggestedPrompts(channel_id="D0ASKER", prompts=prompts, title="Try asking")

    assert slack.suggested_prompts("D0ASKER", None) == {"title": "Try asking", "prompts": prompts}
    assert slack.suggested_prompts("D0ASKER", "1.000001") is None  # above the composer, not in a thread


async def test_slack_api_agent_sessions_move_through_their_statuses(slack: FakeSlackApi) -> None:
    with FakeSlackApi(streaming=True) as streaming:
        client = AsyncWebClient(token=BOT_TOKEN, base_url=f"{streaming.base_url}/")
        await client.agents_sessions_setStatus(
            channel_id="D0ASKER", thread_ts="1.000001", status="processing", title="Weather", initiator_user_id="U1"
        )
        await client.agents_sessions_rename(channel_id="D0ASKER", thread_ts="1.000001", title="Weather in Paris")
        started = await client.chat_startStream(channel="D0ASKER", thread_ts="1.000001")
        await client.chat_stopStream(channel="D0ASKER", ts=started["ts"], session_status="active")
        refusals = [
            client.agents_sessions_setStatus(channel_id="D0ASKER", thread_ts="1.000001", status="thinking"),
            client.agents_sessions_setStatus(channel_id="D0ASKER", status="closed"),
            client.agents_sessions_rename(channel_id="D0ASKER", thread_ts="2.000001", title="never opened"),
        ]
        errors = []
        for call in refusals:
            with pytest.raises(SlackApiError) as refused:
                await call
            errors.append(refused.value.response["error"])

        assert streaming.session("D0ASKER", "1.000001") == {
            "status": "active",
            "title": "Weather in Paris",
            "initiator_user_id": "U1",
            "statuses": ["processing", "active"],
        }
        assert errors == ["invalid_status", "invalid_thread_ts", "session_not_found"]
        assert streaming.session("D0ASKER", "2.000001") is None
    slack.refuse("agents.sessions.setStatus", "unknown_method")  # a workspace without agent sessions
    with pytest.raises(SlackApiError, match="unknown_method"):
        await AsyncWebClient(token=BOT_TOKEN, base_url=f"{slack.base_url}/").agents_sessions_setStatus(
            channel_id="D0ASKER", thread_ts="1.000001", status="processing"
        )


async def test_slack_api_streams_a_message_with_tasks_then_stops_it(slack: FakeSlackApi) -> None:
    with FakeSlackApi(streaming=True) as streaming:
        client = AsyncWebClient(token=BOT_TOKEN, base_url=f"{streaming.base_url}/")
        with pytest.raises(SlackApiError, match="missing_recipient_user_id"):  # outside DMs: who it is for
            await client.chat_startStream(channel=CHANNEL, thread_ts="1.000001", recipient_team_id=TEAM_ID)
        started = await client.chat_startStream(
            channel=CHANNEL,
            thread_ts="1.000001",
            recipient_team_id=TEAM_ID,
            recipient_user_id="U0ASKER",
            task_display_mode="timeline",
            chunks=[TaskUpdateChunk(id="t1", title="get_weather(city=Paris)", status="pending")],
        )
        ts = started["ts"]
        await client.chat_appendStream(
            channel=CHANNEL,
            ts=ts,
            chunks=[
                PlanUpdateChunk(title="Definition of Done"),
                TaskUpdateChunk(id="t1", title="get_weather(city=Paris)", status="error", output="city not found"),
            ],
        )
        with pytest.raises(SlackApiError, match="invalid_chunks"):
            await client.chat_appendStream(channel=CHANNEL, ts=ts, chunks=[{"type": "task_update", "id": "t1"}])
        await client.chat_appendStream(
            channel=CHANNEL, ts=ts, markdown_text="Paris: ", chunks=[MarkdownTextChunk(text="21°C [1]")]
        )
        metadata = {"event_type": "done", "event_payload": {"run_id": "r1"}}
        await client.chat_stopStream(channel=CHANNEL, ts=ts, blocks=BLOCKS, metadata=metadata)
        with pytest.raises(SlackApiError, match="message_not_in_streaming_state"):
            await client.chat_appendStream(channel=CHANNEL, ts=ts, markdown_text="more")

        [message] = streaming.messages_in(CHANNEL, "1.000001")
        assert message["text"] == "Paris: 21°C [1]" and message["plan_title"] == "Definition of Done"
        assert message["tasks"] == [
            {
                "type": "task_update",
                "id": "t1",
                "title": "get_weather(city=Paris)",
                "status": "error",
                "output": "city not found",
            }
        ]
        assert (message["blocks"], message["metadata"], message["streaming"]) == (BLOCKS, metadata, False)
        [replied] = (await client.conversations_replies(channel=CHANNEL, ts="1.000001"))["messages"]
        assert replied["metadata"] == metadata  # survivors read the end-of-run mark back


async def test_slack_api_refuses_streaming_unless_asked_and_refuses_methods_for_good(
    slack: FakeSlackApi, client: AsyncWebClient
) -> None:
    with pytest.raises(SlackApiError, match="unknown_method"):  # by default, a workspace without streaming
        await client.chat_startStream(
            channel=CHANNEL, thread_ts="1.000001", recipient_team_id=TEAM_ID, recipient_user_id="U1"
        )
    slack.refuse("assistant.threads.setStatus", "missing_scope")
    for _ in range(2):
        with pytest.raises(SlackApiError, match="missing_scope"):
            await client.assistant_threads_setStatus(channel_id=CHANNEL, thread_ts="1.000001", status="…")
    with FakeSlackApi(streaming=True, refuse={"chat.startStream": "not_allowed"}) as refusing:
        other = AsyncWebClient(token=BOT_TOKEN, base_url=f"{refusing.base_url}/")
        with pytest.raises(SlackApiError, match="not_allowed"):
            await other.chat_startStream(
                channel=CHANNEL, thread_ts="1.000001", recipient_team_id=TEAM_ID, recipient_user_id="U1"
            )


async def test_slack_api_small_methods_answer_like_slack(slack: FakeSlackApi, client: AsyncWebClient) -> None:
    slack.add_user("U0ASKER", name="ada", real_name="Ada Lovelace", tz="Europe/London")
    posted = await client.chat_postMessage(channel=CHANNEL, text="hi", thread_ts="1.000001")

    ephemeral = await client.chat_postEphemeral(channel=CHANNEL, user="U0ASKER", text="only you")
    link = await client.chat_getPermalink(channel=CHANNEL, message_ts=posted["ts"])
    asker = await client.users_info(user="U0ASKER")
    stranger = await client.users_info(user="U0STRANGER")

    assert ephemeral["message_ts"] and not slack.messages_in(CHANNEL)  # ephemeral messages are nobody's history
    assert link["permalink"].endswith(
        f"/archives/{CHANNEL}/p{posted['ts'].replace('.', '')}?thread_ts=1.000001&cid={CHANNEL}"
    )
    assert (asker["user"]["real_name"], asker["user"]["tz"]) == ("Ada Lovelace", "Europe/London")
    assert stranger["user"]["id"] == "U0STRANGER"


async def test_slack_api_views_open_update_publish(slack: FakeSlackApi, client: AsyncWebClient) -> None:
    modal = {"type": "modal", "title": {"type": "plain_text", "text": "Ask"}, "blocks": BLOCKS}

    opened = await client.views_open(trigger_id="1.1.fake", view=modal)
    updated = await client.views_update(view_id=opened["view"]["id"], view={**modal, "blocks": []})
    home = await client.views_publish(user_id="U0ASKER", view={"type": "home", "blocks": BLOCKS})

    assert updated["view"]["id"] == opened["view"]["id"]
    assert slack.view(opened["view"]["id"])["blocks"] == []
    assert home["view"]["type"] == "home"
    with pytest.raises(SlackApiError, match="not_found"):
        await client.views_update(view_id="V404", view=modal)


async def test_slack_api_429_is_honoured_by_rate_limit_retry_handler(slack: FakeSlackApi) -> None:
    client = AsyncWebClient(
        token=BOT_TOKEN,
        base_url=f"{slack.base_url}/",
        retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=1)],
    )
    slack.fail_next("chat.postMessage", status=429, retry_after=1)

    response = await client.chat_postMessage(channel=CHANNEL, text="hello")

    assert response["ok"]
    first, second = slack.calls("chat.postMessage")
    assert (first.status, second.status) == (429, 200)
    assert second.received_at - first.received_at >= 1.0
    assert slack.rate_limited("chat.postMessage") == 1
    assert len(slack.messages_in(CHANNEL)) == 1


async def test_slack_api_429_without_retry_handler_raises_ratelimited(
    slack: FakeSlackApi, client: AsyncWebClient
) -> None:
    slack.fail_next("chat.update", retry_after=7)

    with pytest.raises(SlackApiError) as raised:
        await client.chat_update(channel=CHANNEL, ts="1.000001", text="x")

    assert raised.value.response.status_code == 429
    assert raised.value.response.headers["Retry-After"] == "7"
    assert raised.value.response["error"] == "ratelimited"


async def test_slack_api_ok_false_raises_then_recovers(slack: FakeSlackApi, client: AsyncWebClient) -> None:
    slack.fail_next("chat.postMessage", error="channel_not_found", times=2)

    for _ in range(2):
        with pytest.raises(SlackApiError) as raised:
            await client.chat_postMessage(channel=CHANNEL, text="hello")
        assert (raised.value.response.status_code, raised.value.response["error"]) == (200, "channel_not_found")
    await client.chat_postMessage(channel=CHANNEL, text="hello")

    assert [call.ok for call in slack.calls("chat.postMessage")] == [False, False, True]


async def test_slack_api_server_error_raises_with_its_status(slack: FakeSlackApi, client: AsyncWebClient) -> None:
    slack.fail_next("assistant.threads.setStatus", status=500)

    with pytest.raises(SlackApiError) as raised:
        await client.assistant_threads_setStatus(channel_id=CHANNEL, thread_ts="1.000001", status="…")

    assert raised.value.response.status_code == 500
    assert slack.thread_status(CHANNEL, "1.000001") is None


async def test_slack_api_limit_rate_answers_429_past_its_budget(slack: FakeSlackApi, client: AsyncWebClient) -> None:
    posted = await client.chat_postMessage(channel=CHANNEL, text="v0")
    slack.limit_rate("chat.update", max_calls=2, per_s=60, retry_after=3)

    for version in ("v1", "v2"):
        await client.chat_update(channel=CHANNEL, ts=posted["ts"], text=version)
    with pytest.raises(SlackApiError) as raised:
        await client.chat_update(channel=CHANNEL, ts=posted["ts"], text="v3")

    assert raised.value.response.headers["Retry-After"] == "3"
    assert slack.rate_limited("chat.update") == 1 and slack.rate_limited() == 1
    assert slack.messages_in(CHANNEL)[0]["text"] == "v2"


async def test_slack_api_wrong_token_gets_invalid_auth(slack: FakeSlackApi) -> None:
    intruder = AsyncWebClient(token="xoxb-wrong", base_url=f"{slack.base_url}/")

    with pytest.raises(SlackApiError, match="invalid_auth"):
        await intruder.chat_postMessage(channel=CHANNEL, text="hello")

    assert not slack.messages_in(CHANNEL)


async def test_slack_api_unknown_method_fails_loudly(slack: FakeSlackApi, client: AsyncWebClient) -> None:
    with pytest.raises(SlackApiError) as raised:
        await client.reactions_add(channel=CHANNEL, timestamp="1.000001", name="eyes")

    assert raised.value.response["error"] == "unknown_method"
    assert "reactions.add" in raised.value.response["fake"]


def test_slack_api_wait_for_wakes_on_a_call_from_another_thread(slack: FakeSlackApi) -> None:
    sync_client = WebClient(token=BOT_TOKEN, base_url=f"{slack.base_url}/")
    poster = threading.Thread(target=lambda: sync_client.chat_postMessage(channel=CHANNEL, text="from a thread"))

    poster.start()
    [message] = slack.wait_for(lambda: slack.messages_in(CHANNEL), what="a message in the channel")
    poster.join(timeout=5)

    assert message["text"] == "from a thread"


def test_slack_api_wait_for_times_out_describing_the_calls(slack: FakeSlackApi) -> None:
    WebClient(token=BOT_TOKEN, base_url=f"{slack.base_url}/").chat_postMessage(channel=CHANNEL, text="not it")
    started = time.monotonic()

    with pytest.raises(AssertionError) as raised:
        slack.wait_for(lambda: slack.calls("chat.update")[0], timeout_s=0.3, what="a chat.update")

    assert 0.3 <= time.monotonic() - started < 2
    assert "a chat.update" in str(raised.value)
    assert "IndexError" in str(raised.value)
    assert "chat.postMessage → ok" in str(raised.value) and "text='not it'" in str(raised.value)


async def test_slack_api_wait_for_async_lets_the_loop_run(slack: FakeSlackApi, client: AsyncWebClient) -> None:
    posting = asyncio.create_task(client.chat_postMessage(channel=CHANNEL, text="hello"))

    [call] = await slack.wait_for_async(lambda: slack.calls("chat.postMessage"))
    await posting

    assert call.params["text"] == "hello"
    with pytest.raises(AssertionError, match=r"(?s)waiting for a reply.*chat\.postMessage"):
        await slack.wait_for_async(lambda: slack.messages_in(CHANNEL, "9.000009"), 0.1, what="a reply")


def test_slack_events_signature_verified_by_slack_sdk() -> None:
    body = json.dumps(slack_events.app_mention("hello")).encode()
    headers = sign(body, SIGNING_SECRET)
    timestamp, signature = headers["X-Slack-Request-Timestamp"], headers["X-Slack-Signature"]

    assert SignatureVerifier(SIGNING_SECRET).is_valid(body, timestamp, signature)
    assert not SignatureVerifier("another-secret").is_valid(body, timestamp, signature)
    stale = sign(body, SIGNING_SECRET, timestamp=int(time.time()) - 600)
    assert not SignatureVerifier(SIGNING_SECRET).is_valid(
        body, stale["X-Slack-Request-Timestamp"], stale["X-Slack-Signature"]
    )


def test_slack_events_post_event_sends_signed_body_with_retry_headers() -> None:
    with FakeHttpApi() as receiver:
        receiver.route("/slack/events", ApiReply.with_json({}))
        body = slack_events.direct_message("hi")

        response = post_event(receiver.url("/slack/events"), body, SIGNING_SECRET, retry_num=1)

        [request] = receiver.requests
    assert response.status_code == 200
    assert request.json == body
    assert request.headers["content-type"] == "application/json"
    assert (request.headers["x-slack-retry-num"], request.headers["x-slack-retry-reason"]) == ("1", "http_timeout")
    verifier = SignatureVerifier(SIGNING_SECRET)
    assert verifier.is_valid(
        request.body, request.headers["x-slack-request-timestamp"], request.headers["x-slack-signature"]
    )


# -- the events reach a real bolt app, which answers through the fake Web API -----------------------------------


@pytest.fixture
async def bolt(slack: FakeSlackApi, client: AsyncWebClient) -> AsyncIterator[tuple[str, list[tuple[str, Any]]]]:
    """A slack_bolt AsyncApp served by aiohttp on 127.0.0.1:0 → (its events URL, what its listeners saw)."""
    app = AsyncApp(client=client, signing_secret=SIGNING_SECRET, process_before_response=True)
    seen: list[tuple[str, Any]] = []

    @app.event("app_mention")
    async def on_mention(event: dict[str, Any], say: Any, request: Any) -> None:
        seen.append(("app_mention", event))
        seen.append(("retry", request.headers.get("x-slack-retry-num")))
        await say(text="on it", thread_ts=event.get("thread_ts") or event["ts"])

    @app.event({"type": "message", "subtype": None})
    async def on_message(event: dict[str, Any]) -> None:
        seen.append(("message", event))

    @app.event({"type": "message", "subtype": "bot_message"})
    async def on_bot_message(event: dict[str, Any]) -> None:
        seen.append(("bot_message", event))

    @app.event({"type": "message", "subtype": "message_changed"})
    async def on_changed(event: dict[str, Any]) -> None:
        seen.append(("message_changed", event))

    @app.event("assistant_thread_started")
    async def on_assistant_thread(event: dict[str, Any]) -> None:
        seen.append(("assistant_thread_started", event))

    @app.event({"type": "message", "subtype": "message_deleted"})
    async def on_deleted(event: dict[str, Any]) -> None:
        seen.append(("message_deleted", event))

    @app.command("/parley")
    async def on_command(ack: Any, command: dict[str, Any]) -> None:
        await ack()
        seen.append(("command", command))

    @app.action("approve")
    async def on_action(ack: Any, action: dict[str, Any]) -> None:
        await ack()
        seen.append(("action", action))

    @app.view("ask")
    async def on_view(ack: Any, view: dict[str, Any]) -> None:
        await ack()
        seen.append(("view", view))

    runner = web.AppRunner(app.web_app(path="/slack/events"))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    try:
        yield f"http://{host}:{port}/slack/events", seen
    finally:
        await runner.cleanup()


async def test_slack_events_mention_reaches_bolt_and_its_reply_lands_in_the_fake(
    slack: FakeSlackApi, bolt: tuple[str, list[tuple[str, Any]]]
) -> None:
    url, seen = bolt
    body = slack_events.app_mention("what's the weather?", channel=CHANNEL, thread_ts="1.000001")

    response = await post_event_async(url, body, SIGNING_SECRET, retry_num=2)

    assert response.status_code == 200
    assert seen[0] == ("app_mention", body["event"])
    assert seen[1] == ("retry", ["2"])  # bolt keeps every header as a list
    assert [m["text"] for m in slack.messages_in(CHANNEL, "1.000001")] == ["on it"]
    assert len(slack.calls("auth.test")) == 1  # bolt authorized with the fake


async def test_slack_events_messages_route_by_subtype_and_own_messages_are_ignored(
    bolt: tuple[str, list[tuple[str, Any]]],
) -> None:
    url, seen = bolt
    bodies = [
        slack_events.direct_message("hello"),
        slack_events.thread_reply("and also", thread_ts="1.000001"),
        slack_events.bot_message("our own answer"),
        slack_events.bot_message("our own answer", subtype=None),
        slack_events.bot_message("another bot", bot_id="B0OTHER"),
        slack_events.message_changed("1.000001", "edited", previous_text="original"),
        slack_events.message_deleted("1.000001", previous_text="original"),
        slack_events.assistant_message("in the pane", thread_ts="2.000001"),
        slack_events.assistant_thread_started(thread_ts="3.000001"),
    ]

    for body in bodies:
        assert (await post_event_async(url, body, SIGNING_SECRET)).status_code == 200

    kinds = [kind for kind, _ in seen]
    assert kinds == [
        "message",
        "message",
        "bot_message",
        "message_changed",
        "message_deleted",
        "message",
        "assistant_thread_started",
    ]
    assert (seen[5][1]["channel_type"], seen[5][1]["thread_ts"]) == ("im", "2.000001")
    assert seen[6][1]["assistant_thread"]["thread_ts"] == "3.000001"
    assert seen[0][1]["channel_type"] == "im" and seen[1][1]["thread_ts"] == "1.000001"
    assert seen[2][1]["bot_id"] == "B0OTHER"
    assert seen[3][1]["message"]["text"] == "edited" and seen[4][1]["deleted_ts"] == "1.000001"


async def test_slack_events_url_verification_and_bad_signatures(bolt: tuple[str, list[tuple[str, Any]]]) -> None:
    url, seen = bolt

    challenge = await post_event_async(url, slack_events.url_verification("abc123"), SIGNING_SECRET)
    forged = await post_event_async(url, slack_events.app_mention("hi"), SIGNING_SECRET, signature="v0=forged")
    stale = await post_event_async(
        url, slack_events.app_mention("hi"), SIGNING_SECRET, timestamp=int(time.time()) - 600
    )

    assert challenge.json() == {"challenge": "abc123"}
    assert (forged.status_code, stale.status_code) == (401, 401)
    assert seen == []


async def test_slack_events_forms_reach_bolt_command_action_and_view(bolt: tuple[str, list[tuple[str, Any]]]) -> None:
    url, seen = bolt
    forms = [
        slack_events.slash_command("/parley", "ask me later"),
        slack_events.block_actions("approve", value="run-7"),
        slack_events.view_submission("ask", {"question": {"text": {"type": "plain_text_input", "value": "why?"}}}),
    ]

    for form in forms:
        assert (await post_event_async(url, form, SIGNING_SECRET)).status_code == 200

    assert [kind for kind, _ in seen] == ["command", "action", "view"]
    assert seen[0][1]["text"] == "ask me later"
    assert seen[1][1]["value"] == "run-7"
    assert seen[2][1]["state"]["values"]["question"]["text"]["value"] == "why?"
