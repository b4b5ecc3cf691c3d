"""Slack's requests to the bot: Events API bodies, interactivity and slash-command forms, signed and posted.

Bodies follow Slack's Events API documentation (and bolt-python's test payloads): an `event_callback` envelope
(token, team_id, api_app_id, event, event_id, event_time, authorizations) around the event, carrying the
identities of `slack_workspace`, so the bot sees the team and bot user that FakeSlackApi's auth.test names.
Event builders return dicts (sent as JSON); form builders return the encoded bytes. `sign` makes Slack's v0
signature headers; `post_event` / `post_event_async` send a signed body with httpx and return the response.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import re
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

import httpx

from tests.fakes.slack_workspace import APP_ID, BOT_ID, BOT_USER_ID, TEAM_DOMAIN, TEAM_ID, next_ts

SIGNING_SECRET = "fake-signing-secret"
VERIFICATION_TOKEN = "fake-verification-token"  # the deprecated body token Slack still sends
ASKER = "U0ASKER"
CHANNEL = "C0GENERAL"
DM_CHANNEL = "D0ASKER"
# Where a slash command or an action says to answer: a closed local port, so a bot that answers without a
# test having pointed response_url at a fake fails fast instead of reaching out.
UNSET_RESPONSE_URL = "http://127.0.0.1:9/response-url-not-set"
DEFAULT_POST_TIMEOUT_S = 10.0

_event_numbers = itertools.count(1)
_trigger_numbers = itertools.count(1)
_MENTION = re.compile(r"<@([A-Z0-9]+)>")


# -- Events API -------------------------------------------------------------------------------------------------


def event_callback(
    event: Mapping[str, Any],
    *,
    team_id: str = TEAM_ID,
    api_app_id: str = APP_ID,
    bot_user_id: str = BOT_USER_ID,
    event_id: str | None = None,
    event_time: int | None = None,
) -> dict[str, Any]:
    """The envelope Slack posts for every subscribed event; `event_id` is fresh unless given (a retry reuses it)."""
    event_id = event_id or f"Ev0FAKE{next(_event_numbers):05d}"
    return {
        "token": VERIFICATION_TOKEN,
        "team_id": team_id,
        "context_team_id": team_id,
        "context_enterprise_id": None,
        "api_app_id": api_app_id,
        "event": dict(event),
        "type": "event_callback",
        "event_id": event_id,
        "event_time": event_time if event_time is not None else int(time.time()),
        "authorizations": [
            {
                "enterprise_id": None,
                "team_id": team_id,
                "user_id": bot_user_id,
                "is_bot": True,
                "is_enterprise_install": False,
            }
        ],
        "is_ext_shared_channel": False,
        "event_context": f"4-fake-{event_id}",
    }


def app_mention(
    question: str,
    *,
    user: str = ASKER,
    channel: str = CHANNEL,
    ts: str | None = None,
    thread_ts: str | None = None,
    bot_user_id: str = BOT_USER_ID,
) -> dict[str, Any]:
    """`<@UBOT> question` in a channel (in a thread when `thread_ts` is given); app_mention has no channel_type."""
    event = _user_message(f"<@{bot_user_id}> {question}", user=user, channel=channel, ts=ts, thread_ts=thread_ts)
    event["type"] = "app_mention"
    return event_callback(event, bot_user_id=bot_user_id)


def direct_message(
    text: str, *, user: str = ASKER, channel: str = DM_CHANNEL, ts: str | None = None, thread_ts: str | None = None
) -> dict[str, Any]:
    """A `message` in the bot's DM with `user` (`channel_type: "im"`), in a thread when `thread_ts` is given."""
    return event_callback(
        _user_message(text, user=user, channel=channel, ts=ts, thread_ts=thread_ts, channel_type="im")
    )


def thread_reply(
    text: str,
    *,
    thread_ts: str,
    user: str = ASKER,
    channel: str = CHANNEL,
    ts: str | None = None,
    parent_user_id: str | None = None,
    channel_type: str = "channel",
) -> dict[str, Any]:
    """A `message` replying in `thread_ts`'s thread (Slack adds `parent_user_id`: who started the thread)."""
    event = _user_message(text, user=user, channel=channel, ts=ts, thread_ts=thread_ts, channel_type=channel_type)
    event["parent_user_id"] = parent_user_id or user
    return event_callback(event)


def bot_message(
    text: str,
    *,
    channel: str = CHANNEL,
    ts: str | None = None,
    thread_ts: str | None = None,
    bot_id: str = BOT_ID,
    bot_user_id: str = BOT_USER_ID,
    subtype: str | None = "bot_message",
    channel_type: str = "channel",
) -> dict[str, Any]:
    """A bot's message coming back as an event. With `subtype="bot_message"` the classic shape (`bot_id`,
    `username`, no `user`); with `subtype=None` the shape Slack sends for an app's chat.postMessage (`bot_id`,
    `user` = the bot user, `app_id`, `bot_profile`, no subtype). A bot must ignore both when they are its own."""
    ts = ts or next_ts()
    event: dict[str, Any] = {"type": "message", "text": text, "ts": ts, "bot_id": bot_id}
    if subtype is None:
        event |= {
            "user": bot_user_id,
            "app_id": APP_ID,
            "team": TEAM_ID,
            "bot_profile": {"id": bot_id, "app_id": APP_ID, "name": "parley", "deleted": False, "team_id": TEAM_ID},
        }
    else:
        event |= {"subtype": subtype, "username": "parley"}
    event |= {"channel": channel, "event_ts": ts, "channel_type": channel_type}
    if thread_ts is not None:
        event["thread_ts"] = thread_ts
    return event_callback(event, bot_user_id=bot_user_id)


def message_changed(
    ts: str,
    text: str,
    *,
    previous_text: str,
    user: str = ASKER,
    channel: str = CHANNEL,
    thread_ts: str | None = None,
    channel_type: str = "channel",
) -> dict[str, Any]:
    """`user` edited message `ts` from `previous_text` to `text` (a hidden `message_changed` event of its own ts)."""
    event_ts = next_ts()
    before = _plain_message(previous_text, user=user, ts=ts, thread_ts=thread_ts)
    after = _plain_message(text, user=user, ts=ts, thread_ts=thread_ts) | {"edited": {"user": user, "ts": event_ts}}
    event = {
        "type": "message",
        "subtype": "message_changed",
        "message": after,
        "previous_message": before,
        "channel": channel,
        "hidden": True,
        "ts": event_ts,
        "event_ts": event_ts,
        "channel_type": channel_type,
    }
    return event_callback(event)


def message_deleted(
    ts: str,
    *,
    previous_text: str,
    user: str = ASKER,
    channel: str = CHANNEL,
    thread_ts: str | None = None,
    channel_type: str = "channel",
) -> dict[str, Any]:
    """`user`'s message `ts` was deleted (a hidden `message_deleted` event naming it in `deleted_ts`)."""
    event_ts = next_ts()
    event = {
        "type": "message",
        "subtype": "message_deleted",
        "previous_message": _plain_message(previous_text, user=user, ts=ts, thread_ts=thread_ts),
        "channel": channel,
        "hidden": True,
        "deleted_ts": ts,
        "ts": event_ts,
        "event_ts": event_ts,
        "channel_type": channel_type,
    }
    return event_callback(event)


def app_home_opened(
    *, user: str = ASKER, channel: str = DM_CHANNEL, tab: str = "home", view: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """`user` opened the app's Home (`tab` "home" or "messages"); `view` is the Home view last published for
    them, which Slack includes only once one was."""
    event: dict[str, Any] = {"type": "app_home_opened", "user": user, "channel": channel, "tab": tab}
    if view is not None:
        event["view"] = dict(view)
    event["event_ts"] = next_ts()
    return event_callback(event)


def assistant_thread_started(
    *,
    user: str = ASKER,
    channel: str = DM_CHANNEL,
    thread_ts: str | None = None,
    context_channel: str | None = CHANNEL,
) -> dict[str, Any]:
    """`user` opened Parley in Slack's assistant pane: a new assistant thread `thread_ts` in their DM with the
    bot. `context` names the channel they were looking at (empty when none: `context_channel=None`)."""
    event_ts = next_ts()
    context: dict[str, Any] = {}
    if context_channel is not None:
        context = {"channel_id": context_channel, "team_id": TEAM_ID, "enterprise_id": None}
    event = {
        "type": "assistant_thread_started",
        "assistant_thread": {
            "user_id": user,
            "context": context,
            "channel_id": channel,
            "thread_ts": thread_ts or next_ts(),
        },
        "event_ts": event_ts,
    }
    return event_callback(event)


def assistant_message(
    text: str, *, thread_ts: str, user: str = ASKER, channel: str = DM_CHANNEL, ts: str | None = None
) -> dict[str, Any]:
    """`user` asks in assistant thread `thread_ts`: a `message.im` in the thread, whose parent (the thread Slack
    opened) is the bot's."""
    event = _user_message(text, user=user, channel=channel, ts=ts, thread_ts=thread_ts, channel_type="im")
    event |= {"parent_user_id": BOT_USER_ID, "user_team": TEAM_ID, "source_team": TEAM_ID}
    return event_callback(event)


def agent_session_stopped(
    *, thread_ts: str, user: str = ASKER, channel: str = DM_CHANNEL, streaming_message_ts: Sequence[str] = ()
) -> dict[str, Any]:
    """`user` clicked the native stop button of the agent session of `thread_ts`'s thread (shown while it is
    `processing`). `streaming_message_ts` lists the app's streams Slack stopped: empty when none was active."""
    event = {
        "channel": channel,
        "event_ts": next_ts(),
        "streaming_message_ts": list(streaming_message_ts),
        "thread_ts": thread_ts,
        "type": "agent_session_stopped",
        "user": user,
    }
    return event_callback(event)


def url_verification(challenge: str | None = None) -> dict[str, Any]:
    """The handshake Slack sends when the Request URL is saved; the app must echo `challenge`."""
    return {"token": VERIFICATION_TOKEN, "challenge": challenge or uuid.uuid4().hex, "type": "url_verification"}


# -- interactivity and slash commands (form-encoded) -------------------------------------------------------------


def slash_command(
    command: str = "/parley",
    text: str = "",
    *,
    user: str = ASKER,
    channel: str = CHANNEL,
    response_url: str = UNSET_RESPONSE_URL,
    trigger_id: str | None = None,
) -> bytes:
    """The form Slack posts for `/command text`."""
    fields = {
        "token": VERIFICATION_TOKEN,
        "team_id": TEAM_ID,
        "team_domain": TEAM_DOMAIN,
        "channel_id": channel,
        "channel_name": "general",
        "user_id": user,
        "user_name": user.lower(),
        "command": command,
        "text": text,
        "api_app_id": APP_ID,
        "is_enterprise_install": "false",
        "response_url": response_url,
        "trigger_id": trigger_id or _new_trigger_id(),
    }
    return urlencode(fields).encode()


def interactivity(payload: Mapping[str, Any]) -> bytes:
    """Any interaction payload as Slack posts it: the form `payload=<JSON>`."""
    return urlencode({"payload": json.dumps(payload)}).encode()


def block_actions(
    action_id: str,
    *,
    value: str = "",
    block_id: str = "actions",
    user: str = ASKER,
    channel: str = CHANNEL,
    message_ts: str | None = None,
    response_url: str = UNSET_RESPONSE_URL,
    view: Mapping[str, Any] | None = None,
) -> bytes:
    """`user` clicked button `action_id` (carrying `value`) on the bot's message `message_ts`, or, given `view`
    (a view as published, with its `id`), on that view: a Home tab click has no channel, message or
    response_url."""
    action = {
        "type": "button",
        "action_id": action_id,
        "block_id": block_id,
        "value": value,
        "text": {"type": "plain_text", "text": action_id},
        "action_ts": next_ts(),
    }
    payload: dict[str, Any] = {
        "type": "block_actions",
        "user": _user_ref(user),
        "api_app_id": APP_ID,
        "token": VERIFICATION_TOKEN,
        "trigger_id": _new_trigger_id(),
        "team": {"id": TEAM_ID, "domain": TEAM_DOMAIN},
    }
    if view is not None:
        payload |= {"container": {"type": "view", "view_id": view["id"]}, "view": dict(view)}
    else:
        message_ts = message_ts or next_ts()
        payload |= {
            "container": {"type": "message", "message_ts": message_ts, "channel_id": channel, "is_ephemeral": False},
            "channel": {"id": channel, "name": "general"},
            "message": {"type": "message", "user": BOT_USER_ID, "bot_id": BOT_ID, "ts": message_ts, "text": ""},
            "response_url": response_url,
        }
    payload["actions"] = [action]
    return interactivity(payload)


def feedback_click(
    value: str,
    *,
    action_id: str = "parley_feedback",
    block_id: str = "parley_feedback",
    user: str = ASKER,
    channel: str = CHANNEL,
    message_ts: str | None = None,
) -> bytes:
    """`user` clicked one of the feedback buttons (`feedback_buttons` in a `context_actions` block) under the
    bot's message `message_ts`: the action carries the clicked button's `value`, as Slack sends it."""
    message_ts = message_ts or next_ts()
    payload = {
        "type": "block_actions",
        "user": _user_ref(user),
        "api_app_id": APP_ID,
        "token": VERIFICATION_TOKEN,
        "trigger_id": _new_trigger_id(),
        "team": {"id": TEAM_ID, "domain": TEAM_DOMAIN},
        "container": {"type": "message", "message_ts": message_ts, "channel_id": channel, "is_ephemeral": False},
        "channel": {"id": channel, "name": "general"},
        "message": {"type": "message", "user": BOT_USER_ID, "bot_id": BOT_ID, "ts": message_ts, "text": ""},
        "response_url": UNSET_RESPONSE_URL,
        "actions": [
            {
                "type": "feedback_buttons",
                "action_id": action_id,
                "block_id": block_id,
                "value": value,
                "action_ts": next_ts(),
            }
        ],
    }
    return interactivity(payload)


def view_submission(
    callback_id: str,
    values: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    user: str = ASKER,
    view_id: str = "V0000001",
    private_metadata: str = "",
) -> bytes:
    """`user` submitted modal `callback_id`; `values` is `view.state.values` (block_id → action_id → value)."""
    view = {
        "id": view_id,
        "team_id": TEAM_ID,
        "type": "modal",
        "callback_id": callback_id,
        "private_metadata": private_metadata,
        "blocks": [],
        "state": {"values": dict(values or {})},
        "hash": f"{next_ts()}.fake",
        "title": {"type": "plain_text", "text": "Parley"},
        "root_view_id": view_id,
        "previous_view_id": None,
        "app_id": APP_ID,
        "bot_id": BOT_ID,
    }
    return interactivity(
        {
            "type": "view_submission",
            "team": {"id": TEAM_ID, "domain": TEAM_DOMAIN},
            "user": _user_ref(user),
            "api_app_id": APP_ID,
            "token": VERIFICATION_TOKEN,
            "trigger_id": _new_trigger_id(),
            "view": view,
            "response_urls": [],
        }
    )


# -- signing and sending --------------------------------------------------------------------------------------


def sign(body: bytes, secret: str, timestamp: int | None = None) -> dict[str, str]:
    """Slack's request-signing headers: v0 HMAC-SHA256 of `v0:{timestamp}:{body}` (timestamp: now)."""
    timestamp = int(time.time()) if timestamp is None else timestamp
    digest = hmac.new(secret.encode(), f"v0:{timestamp}:".encode() + body, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": str(timestamp), "X-Slack-Signature": f"v0={digest}"}


def post_event(
    url: str,
    body: Mapping[str, Any] | bytes,
    secret: str,
    *,
    retry_num: int | None = None,
    retry_reason: str = "http_timeout",
    timestamp: int | None = None,
    signature: str | None = None,
    timeout_s: float = DEFAULT_POST_TIMEOUT_S,
) -> httpx.Response:
    """POST a signed body to the bot as Slack does; blocks, so never call it on the loop serving `url`.

    A dict is sent as JSON, bytes as they are (form-encoded unless they look like JSON). `retry_num` adds
    Slack's `X-Slack-Retry-Num` / `X-Slack-Retry-Reason`; `timestamp` and `signature` forge the signature."""
    content, headers = _signed_request(body, secret, retry_num, retry_reason, timestamp, signature)
    return httpx.post(url, content=content, headers=headers, timeout=timeout_s)


async def post_event_async(
    url: str,
    body: Mapping[str, Any] | bytes,
    secret: str,
    *,
    retry_num: int | None = None,
    retry_reason: str = "http_timeout",
    timestamp: int | None = None,
    signature: str | None = None,
    timeout_s: float = DEFAULT_POST_TIMEOUT_S,
) -> httpx.Response:
    """`post_event` for a test whose bot serves on the same event loop."""
    content, headers = _signed_request(body, secret, retry_num, retry_reason, timestamp, signature)
    async with httpx.AsyncClient(timeout=timeout_s) as client:
        return await client.post(url, content=content, headers=headers)


def _signed_request(
    body: Mapping[str, Any] | bytes,
    secret: str,
    retry_num: int | None,
    retry_reason: str,
    timestamp: int | None,
    signature: str | None,
) -> tuple[bytes, dict[str, str]]:
    if isinstance(body, bytes):
        content = body
        looks_json = body.lstrip().startswith(b"{")
        content_type = "application/json" if looks_json else "application/x-www-form-urlencoded"
    else:
        content, content_type = json.dumps(body).encode(), "application/json"
    headers = {"Content-Type": content_type, **sign(content, secret, timestamp)}
    if signature is not None:
        headers["X-Slack-Signature"] = signature
    if retry_num is not None:
        headers |= {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": retry_reason}
    return content, headers


def _user_message(
    text: str,
    *,
    user: str,
    channel: str,
    ts: str | None,
    thread_ts: str | None,
    channel_type: str | None = None,
) -> dict[str, Any]:
    ts = ts or next_ts()
    event: dict[str, Any] = {
        "client_msg_id": str(uuid.uuid4()),
        "type": "message",
        "text": text,
        "user": user,
        "ts": ts,
        "blocks": _rich_text(text),
        "team": TEAM_ID,
        "channel": channel,
        "event_ts": ts,
    }
    if thread_ts is not None:
        event["thread_ts"] = thread_ts
    if channel_type is not None:
        event["channel_type"] = channel_type
    return event


def _plain_message(text: str, *, user: str, ts: str, thread_ts: str | None) -> dict[str, Any]:
    message = {"type": "message", "text": text, "user": user, "team": TEAM_ID, "ts": ts, "blocks": _rich_text(text)}
    if thread_ts is not None:
        message["thread_ts"] = thread_ts
    return message


def _rich_text(text: str) -> list[dict[str, Any]]:
    """The rich_text block Slack attaches to a typed message, mentions as `user` elements."""
    elements: list[dict[str, Any]] = []
    for index, part in enumerate(_MENTION.split(text)):
        if index % 2:
            elements.append({"type": "user", "user_id": part})
        elif part:
            elements.append({"type": "text", "text": part})
    section = {"type": "rich_text_section", "elements": elements}
    return [{"type": "rich_text", "block_id": uuid.uuid4().hex[:5], "elements": [section]}]


def _user_ref(user: str) -> dict[str, str]:
    return {"id": user, "username": user.lower(), "name": user.lower(), "team_id": TEAM_ID}


def _new_trigger_id() -> str:
    number = next(_trigger_numbers)
    return f"{number}.{number}.fake"
