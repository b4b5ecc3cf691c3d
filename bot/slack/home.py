"""The Home tab: a person's recent runs and, for reviewers, what waits for review and how runs ended.

Read-only: decisions on escalations are taken in the reviewer channel. The tab is published when someone
opens it and again on every "Older" / "Newer" click. Each list shows a page of ten; every button carries
where all the lists stand (`HomePages`), so a click moves one list and leaves the others where they were.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from slack_bolt.async_app import AsyncAck, AsyncApp

from agent import McpServerStatus, ServerState
from bot.core import BadCursor, Escalated, History, RunFilter, StoredRun, encode_cursor
from bot.slack.blocks import contexts, header, section
from bot.slack.gateway import SlackGateway, attempt
from bot.slack.listings import ENDED, HistoryUnavailable, escalation_entry, reading, run_entry
from bot.slack.review.reviewers import Reviewers
from bot.wording import InHome

log = logging.getLogger(__name__)

PAGE_SIZE = 10
PAGE_ACTION = "parley_home_page"  # `parley_home_page.previous` / `.next`: unique within their actions block
PAGE_ACTIONS = re.compile(rf"^{PAGE_ACTION}(\.\w+)?$")
CALLBACK_ID = "parley_home"
# No 3-second rule here: Slack's event (or click) is acknowledged before the listener reads anything.
HOME_BUDGET_S = 10.0
MAX_OFFSET = 100_000
POSITION_CHARS = 200

# The buttons: a run list goes from newer to older pages, the waiting list from older to newer ones.
NEWER_BACK, OLDER_ON = "← Newer", "Older →"
OLDER_BACK, NEWER_ON = "← Older", "Newer →"

_NEWER, _OLDER = "newer:", "older:"

T = TypeVar("T")
ToolServers = Callable[[], Sequence[McpServerStatus]]  # each MCP server's state, now

# Someone opened the app's Messages tab: the DM channel and the person.
MessagesTabOpened = Callable[[str, str], Awaitable[None]]


class HomePages(BaseModel):
    """Where each list of the Home tab stands: a run list's position (`""` for its newest page, `older:CURSOR`
    or `newer:CURSOR` from `encode_cursor`), the waiting list's offset. Carried in the page buttons' values."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mine: str = Field("", max_length=POSITION_CHARS)
    waiting: int = Field(0, ge=0, le=MAX_OFFSET)
    ended: str = Field("", max_length=POSITION_CHARS)

    def encode(self) -> str:
        return self.model_dump_json()

    @classmethod
    def decode(cls, value: str) -> HomePages:
        """The positions a button carried; anything else (an old or forged value) is the first pages."""
        try:
            return cls.model_validate_json(value or "{}")
        except ValidationError:
            log.info("a Home page button carried a value that is not Home positions; showing the first pages")
            return cls()


@dataclass(frozen=True)
class Window(Generic[T]):
    """One page of a list and the positions of the pages either side of it (None: there is none)."""

    entries: Sequence[T]
    before: str | int | None = None
    after: str | int | None = None


class HomeTab:
    """Builds and publishes the Home view of one person."""

    def __init__(
        self,
        history: History,
        reviewers: Reviewers,
        gateway: SlackGateway,
        messages_tab: MessagesTabOpened | None = None,
        tool_servers: ToolServers = list,
    ) -> None:
        self._history = history
        self._reviewers = reviewers
        self._gateway = gateway
        self._messages_tab = messages_tab
        self._tool_servers = tool_servers

    async def on_opened(self, body: dict[str, Any]) -> None:
        try:
            opened = _HomeOpened.model_validate(body).event
        except ValidationError as exc:
            log.info("ignored an app_home_opened event Parley cannot read (%s problem(s))", exc.error_count())
            return
        if opened.tab == "home":
            await self.publish(opened.user, HomePages())
        elif opened.tab == "messages" and opened.channel and self._messages_tab is not None:
            # The agent messaging experience: the Messages tab is where people ask (its prompts are offered).
            await self._messages_tab(opened.channel, opened.user)

    async def on_page(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        try:
            click = _PageClick.model_validate(body)
        except ValidationError as exc:
            log.info("ignored a Home page click Parley cannot read (%s problem(s))", exc.error_count())
            return
        await self.publish(click.user.id, HomePages.decode(click.actions[0].value))

    async def publish(self, user: str, pages: HomePages) -> None:
        try:
            view = await self.view(user, pages)
        except HistoryUnavailable as exc:
            view = _view([header(InHome.UNAVAILABLE_TITLE), section(InHome.UNAVAILABLE.format(problem=exc))])
        publish = self._gateway.client.views_publish(user_id=user, view=view)
        await attempt(publish, what=f"publish the Home tab of {user}")

    async def view(self, user: str, pages: HomePages) -> dict[str, Any]:
        """The Home view for `user` at `pages`; raises HistoryUnavailable when the store cannot be read."""
        async with reading(HOME_BUDGET_S):
            history = self._history
            mine = await runs_window(history, RunFilter(asker=user), pages.mine)
            reviewer = await self._reviewers.is_reviewer(user)
            waiting = await waiting_window(history, pages.waiting) if reviewer else None
            ended = await runs_window(history, RunFilter(statuses=ENDED), pages.ended) if reviewer else None
            listed = [run.id for run in [*mine.entries, *(ended.entries if ended else [])]]
            counted = await history.tallies(listed)
        blocks = [
            header(InHome.MINE_TITLE),
            *contexts(InHome.MINE_NOTE.format(size=PAGE_SIZE)),
            *[section(run_entry(run, feedback=counted.get(run.id))) for run in mine.entries],
            *([] if mine.entries else [section(InHome.MINE_EMPTY)]),
            *_nav("home_mine_pages", pages, "mine", mine, (NEWER_BACK, OLDER_ON)),
        ]
        if waiting is not None:
            blocks += [
                {"type": "divider"},
                header(InHome.WAITING_TITLE),
                *contexts(InHome.WAITING_NOTE),
                *[section(escalation_entry(e.escalation, e.as_escalated)) for e in waiting.entries],
                *([] if waiting.entries else [section(InHome.WAITING_EMPTY)]),
                *_nav("home_waiting_pages", pages, "waiting", waiting, (OLDER_BACK, NEWER_ON)),
            ]
        if ended is not None:
            blocks += [
                {"type": "divider"},
                header(InHome.ENDED_TITLE),
                *contexts(InHome.ENDED_NOTE),
                *[section(run_entry(run, asker=True, feedback=counted.get(run.id))) for run in ended.entries],
                *([] if ended.entries else [section(InHome.ENDED_EMPTY)]),
                *_nav("home_ended_pages", pages, "ended", ended, (NEWER_BACK, OLDER_ON)),
            ]
        servers = self._tool_servers() if reviewer else []
        if servers:  # for the people who run Parley: whether each MCP server's tools can be used now
            blocks += [
                {"type": "divider"},
                header(InHome.SERVERS_TITLE),
                *[section(_server_entry(server)) for server in servers],
            ]
        return _view(blocks, pages)


def _server_entry(server: McpServerStatus) -> str:
    offered = sum(1 for tool in server.tools if tool.offered)
    icon = InHome.SERVER_UP if server.state is ServerState.UP else InHome.SERVER_DOWN
    line = InHome.SERVER.format(icon=icon, server=server.server, state=server.state.value, offered=offered)
    if server.state is not ServerState.UP and server.problem:
        line += "\n" + InHome.SERVER_PROBLEM.format(problem=server.problem)
    if server.changed:
        line += "\n" + InHome.SERVER_CHANGED.format(tools=", ".join(server.changed), server=server.server)
    return line


def register_home(
    app: AsyncApp,
    history: History,
    reviewers: Reviewers,
    gateway: SlackGateway,
    messages_tab: MessagesTabOpened | None = None,
    tool_servers: ToolServers = list,
) -> HomeTab:
    """Publish the Home tab when someone opens it, and again on its page buttons; an opened Messages tab goes to
    `messages_tab`. Call it before registering any catch-all event listener: bolt hands an event to the first
    listener that matches."""
    home = HomeTab(history, reviewers, gateway, messages_tab, tool_servers)
    app.event("app_home_opened")(home.on_opened)
    app.action(PAGE_ACTIONS)(home.on_page)
    return home


async def runs_window(history: History, filters: RunFilter, position: str) -> Window[StoredRun]:
    """A page of runs, newest first, at `position`; an unreadable position is the newest page."""
    direction, _, cursor = position.partition(":")
    try:
        if cursor and direction + ":" == _NEWER:
            newer = await history.newer_runs(filters, cursor, limit=PAGE_SIZE)
            if newer is not None:
                return Window(newer, _NEWER + encode_cursor(newer[0]), _OLDER + encode_cursor(newer[-1]))
        elif cursor and direction + ":" == _OLDER:
            page = await history.stored_runs(filters, limit=PAGE_SIZE, cursor=cursor)
            if page.runs:
                after = _OLDER + page.next_cursor if page.next_cursor else None
                return Window(page.runs, _NEWER + encode_cursor(page.runs[0]), after)
    except BadCursor:
        log.info("a Home page position is not a cursor; showing the newest page")
    # The newest page (also when nothing is newer than a `newer:` position: the newest page, full).
    page = await history.stored_runs(filters, limit=PAGE_SIZE)
    return Window(page.runs, None, _OLDER + page.next_cursor if page.next_cursor else None)


async def waiting_window(history: History, offset: int) -> Window[Escalated]:
    """A page of the escalations waiting for a decision, oldest first."""
    found = await history.waiting(limit=PAGE_SIZE + 1, offset=offset)
    if not found and offset:
        return await waiting_window(history, 0)
    before = max(0, offset - PAGE_SIZE) if offset else None
    after = offset + PAGE_SIZE if len(found) > PAGE_SIZE and offset + PAGE_SIZE <= MAX_OFFSET else None
    return Window(found[:PAGE_SIZE], before, after)


def _nav(
    block_id: str, pages: HomePages, field: str, window: Window[Any], labels: tuple[str, str]
) -> list[dict[str, Any]]:
    """The buttons to the pages before and after `window`, each carrying every list's position."""
    buttons = []
    for suffix, label, position in (("previous", labels[0], window.before), ("next", labels[1], window.after)):
        if position is None:
            continue
        value = pages.model_copy(update={field: position}).encode()
        buttons.append(
            {
                "type": "button",
                "action_id": f"{PAGE_ACTION}.{suffix}",
                "text": {"type": "plain_text", "text": label},
                "value": value,
            }
        )
    return [{"type": "actions", "block_id": block_id, "elements": buttons}] if buttons else []


def _view(blocks: list[dict[str, Any]], pages: HomePages | None = None) -> dict[str, Any]:
    view: dict[str, Any] = {"type": "home", "callback_id": CALLBACK_ID, "blocks": blocks}
    if pages is not None:
        view["private_metadata"] = pages.encode()  # what this view shows; the buttons carry their own
    return view


class _Event(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    type: Literal["app_home_opened"]
    user: str
    channel: str | None = None  # the app's DM with the person
    tab: str | None = None


class _HomeOpened(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    event: _Event


class _User(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str


class _Action(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    value: str = ""


class _PageClick(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    user: _User
    actions: list[_Action] = Field(min_length=1)
