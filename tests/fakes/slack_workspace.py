"""FakeWorkspace: what Slack remembers behind FakeSlackApi — messages, thread statuses, agent sessions, users,
user groups, views.

It answers the Web API methods the bot uses from that memory, as Slack would (`ok: false` with Slack's error
codes via `SlackError`). It knows only what was posted through the fake or seeded with `add_message`,
`add_user` and `set_group_members`. The identities here (team, app, bot user, bot token) are the ones
`slack_events` puts in the event bodies, so a bot wired to both sees one consistent workspace. Not
thread-safe: FakeSlackApi holds its lock around every use.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

TEAM_ID = "T0PARLEY"
TEAM_DOMAIN = "parley-test"
APP_ID = "A0PARLEY"
BOT_USER_ID = "UBOT"
BOT_ID = "BBOT"
BOT_TOKEN = "xoxb-test"

# agents.sessions.setStatus: a session's lifecycle; `processing` shows Slack's native stop button.
SESSION_STATUSES = ("processing", "active", "suspended", "closed")
MAX_SUGGESTED_PROMPTS = 4  # assistant.threads.setSuggestedPrompts: "up to four suggested prompts"
_REPLIES_PAGE = 1000  # conversations.replies' documented default `limit`

_ts_lock = threading.Lock()
_last_ts_us = 0

Message = dict[str, Any]


def next_ts() -> str:
    """A fresh message timestamp shaped like Slack's ("1700000000.000100"): the wall clock in microseconds,
    strictly increasing across the process, so the fake's replies and `slack_events`' messages interleave in
    the order they happened and never collide."""
    global _last_ts_us
    with _ts_lock:
        _last_ts_us = max(time.time_ns() // 1000, _last_ts_us + 1)
        return f"{_last_ts_us // 1_000_000}.{_last_ts_us % 1_000_000:06d}"


def ts_order(ts: str) -> tuple[int, int]:
    """Sort key for Slack timestamps (string order breaks when the seconds part changes length)."""
    seconds, _, micros = ts.partition(".")
    return int(seconds), int(micros or 0)


class SlackError(Exception):
    """An `{"ok": false, "error": code}` answer, with any extra fields Slack adds."""

    def __init__(self, error: str, **extra: Any) -> None:
        super().__init__(error)
        self.error = error
        self.extra = extra


class FakeWorkspace:
    """One team with one bot: the memory behind the fake Web API and the methods that read and change it."""

    def __init__(self, *, team_id: str = TEAM_ID, bot_user_id: str = BOT_USER_ID, bot_id: str = BOT_ID) -> None:
        self.team_id = team_id
        self.bot_user_id = bot_user_id
        self.bot_id = bot_id
        self._messages: dict[tuple[str, str], Message] = {}  # (channel, ts) → the message as it is now
        self._statuses: dict[tuple[str, str], str] = {}  # (channel, thread_ts) → assistant status
        self._prompts: dict[tuple[str, str], dict[str, Any]] = {}  # (channel, thread_ts) → {title, prompts}
        self._titles: dict[tuple[str, str], str] = {}  # (channel, thread_ts) → the assistant thread's title
        # (channel, thread_ts) → the agent session: {"status", "title", "initiator_user_id", "statuses": [every one]}
        self._sessions: dict[tuple[str, str], dict[str, Any]] = {}
        self._users: dict[str, dict[str, Any]] = {}
        self._views: dict[str, dict[str, Any]] = {}
        self._view_count = 0
        self._groups: dict[str, list[str]] = {}  # user group id (S…) → member ids
        self._methods: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "api.test": lambda params: {"args": params},
            "auth.test": self._auth_test,
            "chat.postMessage": self._post_message,
            "chat.update": self._update,
            "chat.postEphemeral": self._post_ephemeral,
            "chat.getPermalink": self._get_permalink,
            "assistant.threads.setStatus": self._set_status,
            "assistant.threads.setSuggestedPrompts": self._set_suggested_prompts,
            "assistant.threads.setTitle": self._set_title,
            "chat.startStream": self._start_stream,
            "chat.appendStream": self._append_stream,
            "chat.stopStream": self._stop_stream,
            "agents.sessions.setStatus": self._session_set_status,
            "agents.sessions.rename": self._session_rename,
            "users.info": self._users_info,
            "conversations.replies": self._replies,
            "views.open": self._views_open,
            "views.update": self._views_update,
            "views.publish": self._views_publish,
            "usergroups.users.list": self._usergroup_members,
        }

    # -- what tests seed and read ---------------------------------------------------------------------------

    def add_message(
        self, channel: str, text: str, *, user: str, ts: str | None = None, thread_ts: str | None = None
    ) -> str:
        """Remember a message someone else posted (a user's question), so conversations.replies returns it."""
        ts = ts or next_ts()
        message: Message = {"type": "message", "user": user, "text": text, "ts": ts, "team": self.team_id}
        if thread_ts is not None:
            message["thread_ts"] = thread_ts
        self._messages[(channel, ts)] = message
        return ts

    def add_user(
        self, user_id: str, *, name: str, real_name: str | None = None, tz: str = "UTC", is_bot: bool = False
    ) -> None:
        self._users[user_id] = _user(
            user_id, self.team_id, name=name, real_name=real_name or name, tz=tz, is_bot=is_bot
        )

    def set_group_members(self, usergroup: str, members: list[str]) -> None:
        """Who belongs to user group `usergroup` (S…) from now on, as usergroups.users.list answers."""
        self._groups[usergroup] = list(members)

    def messages_in(self, channel: str, thread_ts: str | None = None) -> list[Message]:
        """The replies in `thread_ts`'s thread (without its parent), or with no `thread_ts` the channel's top-level
        messages; oldest first, as they are now (after every chat.update)."""
        found = [
            message
            for (in_channel, ts), message in self._messages.items()
            if in_channel == channel and message.get("thread_ts", ts) == (thread_ts or ts) and ts != thread_ts
        ]
        return copy.deepcopy(sorted(found, key=lambda message: ts_order(message["ts"])))

    def thread_status(self, channel: str, thread_ts: str) -> str | None:
        """The assistant status shown in the thread now; None when never set, cleared, or ended by a reply."""
        return self._statuses.get((channel, thread_ts)) or None

    def suggested_prompts(self, channel: str, thread_ts: str | None) -> dict[str, Any] | None:
        """The last assistant.threads.setSuggestedPrompts of the thread: `{"title": …, "prompts": [...]}`; with
        `thread_ts` None, those of the Messages tab (set without a thread, above the composer)."""
        found = self._prompts.get((channel, thread_ts or ""))
        return copy.deepcopy(found) if found is not None else None

    def session(self, channel: str, thread_ts: str) -> dict[str, Any] | None:
        """The thread's agent session: its `status`, `title`, `initiator_user_id` and every status it was set to
        (`statuses`, oldest first); None when none was ever set."""
        found = self._sessions.get((channel, thread_ts))
        return copy.deepcopy(found) if found is not None else None

    def thread_title(self, channel: str, thread_ts: str) -> str | None:
        """The assistant thread's title (assistant.threads.setTitle), None when never set."""
        return self._titles.get((channel, thread_ts))

    def view(self, view_id: str) -> dict[str, Any] | None:
        view = self._views.get(view_id)
        return copy.deepcopy(view) if view is not None else None

    # -- the Web API ----------------------------------------------------------------------------------------

    def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The `ok: true` body for `method`; raises SlackError for Slack's `ok: false` answers."""
        handler = self._methods.get(method)
        if handler is None:
            raise SlackError("unknown_method", req_method=method, fake=f"FakeSlackApi does not implement {method}")
        return {"ok": True, **handler(params)}

    def _auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "url": f"https://{TEAM_DOMAIN}.slack.com/",
            "team": "Parley Test",
            "user": "parley",
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
            "is_enterprise_install": False,
        }

    def _post_message(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = _required(params, "channel", error="channel_not_found")
        if not any(params.get(name) for name in ("text", "blocks", "attachments", "markdown_text")):
            raise SlackError("no_text")
        ts = next_ts()
        message: Message = {
            "type": "message",
            "user": self.bot_user_id,
            "bot_id": self.bot_id,
            "app_id": APP_ID,
            "text": params.get("text") or params.get("markdown_text") or "",
            "ts": ts,
            "team": self.team_id,
        }
        for name in ("blocks", "attachments", "metadata", "thread_ts"):
            if params.get(name) is not None:
                message[name] = params[name]
        self._messages[(channel, ts)] = message
        if "thread_ts" in message:
            self._statuses.pop((channel, message["thread_ts"]), None)  # Slack ends the status when the app replies
        return {"channel": channel, "ts": ts, "message": copy.deepcopy(message)}

    def _update(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = _required(params, "channel", error="channel_not_found")
        ts = _required(params, "ts", error="message_not_found")
        message = self._messages.get((channel, ts))
        if message is None:
            raise SlackError("message_not_found")
        if message.get("user") != self.bot_user_id:
            raise SlackError("cant_update_message")
        if params.get("text") is not None:
            message["text"] = params["text"]
        for name in ("blocks", "attachments", "metadata"):  # left out: kept; an empty list: removed
            if params.get(name) is not None:
                message[name] = params[name]
        message["edited"] = {"user": self.bot_user_id, "ts": next_ts()}
        return {"channel": channel, "ts": ts, "text": message["text"], "message": copy.deepcopy(message)}

    def _post_ephemeral(self, params: dict[str, Any]) -> dict[str, Any]:
        _required(params, "channel", error="channel_not_found")
        _required(params, "user", error="user_not_in_channel")
        return {"message_ts": next_ts()}

    def _get_permalink(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = _required(params, "channel", error="channel_not_found")
        ts = _required(params, "message_ts", error="message_not_found")
        # Slack knows every message; the fake only some, so any ts gets a permalink.
        permalink = f"https://{TEAM_DOMAIN}.slack.com/archives/{channel}/p{ts.replace('.', '')}"
        thread_ts = self._messages.get((channel, ts), {}).get("thread_ts")
        if thread_ts is not None and thread_ts != ts:
            permalink += f"?thread_ts={thread_ts}&cid={channel}"
        return {"channel": channel, "permalink": permalink}

    def _start_stream(self, params: dict[str, Any]) -> dict[str, Any]:
        """A streamed message in a thread: its text grows with markdown, its task timeline with task updates."""
        channel = _required(params, "channel", error="channel_not_found")
        thread_ts = _required(params, "thread_ts")
        if not channel.startswith("D"):  # outside DMs Slack needs to know who the stream is for
            _required(params, "recipient_team_id", error="missing_recipient_team_id")
            _required(params, "recipient_user_id", error="missing_recipient_user_id")
        mode = params.get("task_display_mode", "timeline")
        if mode not in _TASK_DISPLAY_MODES:
            raise SlackError("invalid_arguments")
        ts = next_ts()
        message: Message = {
            "type": "message",
            "user": self.bot_user_id,
            "bot_id": self.bot_id,
            "app_id": APP_ID,
            "text": "",
            "ts": ts,
            "team": self.team_id,
            "thread_ts": thread_ts,
            "streaming": True,
            "task_display_mode": mode,
            "recipient_user_id": params.get("recipient_user_id"),
            "tasks": [],
        }
        _apply_stream(message, params)
        self._messages[(channel, ts)] = message
        return {"channel": channel, "ts": ts}

    def _append_stream(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, ts, message = self._streamed(params)
        if not params.get("markdown_text") and not params.get("chunks"):
            raise SlackError("no_text")
        _apply_stream(message, params)
        return {"channel": channel, "ts": ts}

    def _stop_stream(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, ts, message = self._streamed(params)
        _apply_stream(message, params)
        for name in ("blocks", "metadata"):
            if params.get(name) is not None:
                message[name] = params[name]
        message["streaming"] = False
        self._statuses.pop((channel, message["thread_ts"]), None)  # the reply is complete: Slack ends the status
        if params.get("session_status") is not None:  # ending the stream moves the thread's session too
            self._move_session(channel, message["thread_ts"], params["session_status"])
        return {"channel": channel, "ts": ts, "message": copy.deepcopy(message)}

    def _streamed(self, params: dict[str, Any]) -> tuple[str, str, Message]:
        channel = _required(params, "channel", error="channel_not_found")
        ts = _required(params, "ts", error="message_not_found")
        message = self._messages.get((channel, ts))
        if message is None:
            raise SlackError("message_not_found")
        if not message.get("streaming"):
            raise SlackError("message_not_in_streaming_state")
        return channel, ts, message

    def _set_status(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = _required(params, "channel_id")
        thread_ts = _required(params, "thread_ts")
        if "status" not in params:
            raise SlackError("invalid_arguments")
        self._statuses[(channel, thread_ts)] = str(params["status"])
        return {}

    def _set_suggested_prompts(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = _required(params, "channel_id", error="channel_not_found")
        # No thread: the Messages tab's prompts (the agent messaging experience); the assistant pane names one.
        thread_ts = str(params.get("thread_ts") or "")
        prompts = params.get("prompts")
        if not isinstance(prompts, list) or not 1 <= len(prompts) <= MAX_SUGGESTED_PROMPTS:
            raise SlackError("invalid_arguments")
        for prompt in prompts:
            if not isinstance(prompt, Mapping) or not prompt.get("title") or not prompt.get("message"):
                raise SlackError("invalid_arguments")
        shown = [{"title": str(p["title"]), "message": str(p["message"])} for p in prompts]
        self._prompts[(channel, thread_ts)] = {"title": params.get("title"), "prompts": shown}
        return {}

    def _session_set_status(self, params: dict[str, Any]) -> dict[str, Any]:
        """Set a thread's session status, creating the session when needed (its title and initiator come then)."""
        channel = _required(params, "channel_id", error="channel_not_found")
        thread_ts = _required(params, "thread_ts", error="invalid_thread_ts")
        session = self._move_session(channel, thread_ts, params.get("status"))
        for name in ("title", "initiator_user_id"):
            if params.get(name):
                session[name] = str(params[name])
        return {}

    def _session_rename(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = _required(params, "channel_id", error="channel_not_found")
        thread_ts = _required(params, "thread_ts", error="invalid_thread_ts")
        title = _required(params, "title")
        session = self._sessions.get((channel, thread_ts))
        if session is None:
            raise SlackError("session_not_found")
        session["title"] = title
        return {}

    def _move_session(self, channel: str, thread_ts: str, status: Any) -> dict[str, Any]:
        if status not in SESSION_STATUSES:
            raise SlackError("invalid_status")
        session = self._sessions.setdefault(
            (channel, thread_ts), {"status": None, "title": None, "initiator_user_id": None, "statuses": []}
        )
        session["status"] = status
        session["statuses"].append(status)
        return session

    def _set_title(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = _required(params, "channel_id", error="channel_not_found")
        thread_ts = _required(params, "thread_ts", error="invalid_thread_ts")
        self._titles[(channel, thread_ts)] = _required(params, "title")
        return {}

    def _users_info(self, params: dict[str, Any]) -> dict[str, Any]:
        user_id = _required(params, "user", error="user_not_found")
        if user_id == self.bot_user_id:
            return {"user": _user(user_id, self.team_id, name="parley", real_name="Parley", tz="UTC", is_bot=True)}
        # Slack knows every member; unknown ids get a plain profile (fail_next("users.info", …) for the error).
        known = self._users.get(user_id) or _user(user_id, self.team_id, name=user_id.lower(), real_name=user_id)
        return {"user": copy.deepcopy(known)}

    def _replies(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = _required(params, "channel", error="channel_not_found")
        ts = _required(params, "ts", error="thread_not_found")
        replies = self.messages_in(channel, ts)
        parent = copy.deepcopy(self._messages.get((channel, ts)))
        if parent is None and not replies:
            raise SlackError("thread_not_found")
        if parent is not None and replies:
            parent |= {"thread_ts": ts, "reply_count": len(replies), "latest_reply": replies[-1]["ts"]}
        thread = ([parent] if parent is not None else []) + replies
        start = int(params.get("cursor") or 0)
        end = start + int(params.get("limit") or _REPLIES_PAGE)
        next_cursor = str(end) if end < len(thread) else ""
        return {
            "messages": thread[start:end],
            "has_more": bool(next_cursor),
            "response_metadata": {"next_cursor": next_cursor},
        }

    def _views_open(self, params: dict[str, Any]) -> dict[str, Any]:
        _required(params, "trigger_id", error="invalid_trigger_id")
        self._view_count += 1
        return {"view": self._store_view(f"V{self._view_count:07d}", _view_of(params))}

    def _views_update(self, params: dict[str, Any]) -> dict[str, Any]:
        view_id, external_id = params.get("view_id"), params.get("external_id")
        if not view_id and not external_id:
            raise SlackError("invalid_arguments")
        if not view_id:
            view_id = next((key for key, view in self._views.items() if view.get("external_id") == external_id), None)
        if view_id not in self._views:
            raise SlackError("not_found")
        return {"view": self._store_view(view_id, _view_of(params))}

    def _views_publish(self, params: dict[str, Any]) -> dict[str, Any]:
        user_id = _required(params, "user_id", error="user_not_found")
        return {"view": self._store_view(f"VHOME{user_id}", _view_of(params))}

    def _usergroup_members(self, params: dict[str, Any]) -> dict[str, Any]:
        usergroup = _required(params, "usergroup", error="no_such_subteam")
        if usergroup not in self._groups:
            raise SlackError("no_such_subteam")
        return {"users": list(self._groups[usergroup])}

    def _store_view(self, view_id: str, view: Mapping[str, Any]) -> dict[str, Any]:
        stored = {
            **view,
            "id": view_id,
            "team_id": self.team_id,
            "app_id": APP_ID,
            "bot_id": self.bot_id,
            "state": {"values": {}},
            "hash": f"{next_ts()}.fake",
            "root_view_id": view_id,
            "previous_view_id": None,
        }
        self._views[view_id] = stored
        return copy.deepcopy(stored)


_TASK_DISPLAY_MODES = ("timeline", "plan")
_TASK_STATUSES = ("pending", "in_progress", "complete", "error")


def _apply_stream(message: Message, params: Mapping[str, Any]) -> None:
    """A stream call's markdown and chunks, applied to the message as Slack shows it: text appended, each task
    at its latest state (in the order tasks first appeared), the plan's latest title."""
    chunks = params.get("chunks") or []
    if not isinstance(chunks, list):
        raise SlackError("invalid_chunks")
    if params.get("markdown_text"):
        message["text"] += str(params["markdown_text"])
    for chunk in chunks:
        kind = chunk.get("type") if isinstance(chunk, dict) else None
        if kind == "markdown_text":
            message["text"] += str(_required(chunk, "text", error="invalid_chunks"))
        elif kind == "plan_update":
            message["plan_title"] = _required(chunk, "title", error="invalid_chunks")
        elif kind == "task_update":
            task_id = _required(chunk, "id", error="invalid_chunks")
            _required(chunk, "title", error="invalid_chunks")
            if chunk.get("status") not in _TASK_STATUSES:
                raise SlackError("invalid_chunks")
            tasks: list[dict[str, Any]] = message["tasks"]
            shown = next((task for task in tasks if task["id"] == task_id), None)
            if shown is None:
                tasks.append(dict(chunk))
            else:
                shown.update(chunk)
        else:
            raise SlackError("invalid_chunks")


def _required(params: Mapping[str, Any], name: str, *, error: str = "invalid_arguments") -> str:
    value = params.get(name)
    if value is None or value == "":
        raise SlackError(error)
    return str(value)


def _view_of(params: Mapping[str, Any]) -> Mapping[str, Any]:
    view = params.get("view")
    if not isinstance(view, Mapping) or "type" not in view:
        raise SlackError("invalid_arguments")
    return view


def _user(
    user_id: str, team_id: str, *, name: str, real_name: str, tz: str = "UTC", is_bot: bool = False
) -> dict[str, Any]:
    return {
        "id": user_id,
        "team_id": team_id,
        "name": name,
        "real_name": real_name,
        "deleted": False,
        "is_bot": is_bot,
        "tz": tz,
        "profile": {"display_name": name, "real_name": real_name},
    }
