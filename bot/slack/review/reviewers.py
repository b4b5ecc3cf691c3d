"""Who may decide on an escalation: configured reviewer ids and/or the members of a Slack user group."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from slack_sdk.web.async_client import AsyncWebClient

from bot.core import ReviewConfig
from bot.slack.gateway import attempt

log = logging.getLogger(__name__)

GROUP_CACHE_S = 60.0  # a member removed from the group loses the right within a minute


class Reviewers:
    """`refusal(user, asker)` is None when `user` may decide, else the sentence to show them."""

    def __init__(
        self,
        config: ReviewConfig,
        client: AsyncWebClient | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._config = config
        self._client = client
        self._clock = clock
        self._group: frozenset[str] = frozenset()
        self._group_read_at = float("-inf")
        self._refresh: asyncio.Future[None] | None = None

    async def is_reviewer(self, user: str) -> bool:
        if user in self._config.reviewers:
            return True
        return user in await self._group_members()

    async def refusal(self, user: str, asker: str) -> str | None:
        if not await self.is_reviewer(user):
            return "Only Parley's reviewers can decide on escalations."
        if user == asker and not self._config.allow_self_review:
            return "You asked this question, so someone else must review it."
        return None

    async def warm(self) -> None:
        """Read the reviewer group now (at start-up), so no click waits for it."""
        if self._config.reviewer_group and self._client is not None:
            await self._read_group()

    async def _group_members(self) -> frozenset[str]:
        """The group's members. A click never waits for Slack once they were read: an older list is used while
        a fresh one is read in the background (a member removed loses the right within about a minute)."""
        if not self._config.reviewer_group or self._client is None:
            return frozenset()
        if self._group_read_at == float("-inf"):
            await self._read_group()
        elif self._clock() - self._group_read_at >= GROUP_CACHE_S and (self._refresh is None or self._refresh.done()):
            self._refresh = asyncio.ensure_future(self._read_group())
        return self._group

    async def _read_group(self) -> None:
        group = self._config.reviewer_group
        assert group is not None and self._client is not None
        # Fail closed: an unread group has no members (configured ids still are reviewers); the last list read
        # stays in use, and the next click tries again.
        call = self._client.usergroups_users_list(usergroup=group)
        response = await attempt(call, what=f"read the members of reviewer group {group}")
        if response is None:
            return
        self._group = frozenset(response.get("users") or [])
        self._group_read_at = self._clock()
