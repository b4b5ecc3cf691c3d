"""Who may decide: configured ids and the members of a Slack user group, read without making a click wait."""

from __future__ import annotations

import asyncio

from bot.core import ReviewConfig
from bot.settings import Settings
from bot.slack.client import slack_client
from bot.slack.review.reviewers import GROUP_CACHE_S, Reviewers
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_workspace import BOT_TOKEN

GROUP = "S0REVIEWERS"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def reviewers(slack: FakeSlackApi, clock: Clock, **config: object) -> Reviewers:
    client = slack_client(Settings(slack_bot_token=BOT_TOKEN, slack_api_url=slack.base_url))
    return Reviewers(ReviewConfig.model_validate(config), client, clock=clock)


async def test_configured_ids_and_group_members_may_decide_but_not_on_their_own_question(slack_api):
    slack_api.set_group_members(GROUP, ["U0MEMBER"])
    people = reviewers(slack_api, Clock(), reviewers=["U0LEAD"], reviewer_group=GROUP)

    assert await people.refusal("U0LEAD", "U0ASKER") is None
    assert await people.refusal("U0MEMBER", "U0ASKER") is None
    assert "Only Parley's reviewers" in await people.refusal("U0STRANGER", "U0ASKER")
    assert "someone else must review" in await people.refusal("U0MEMBER", "U0MEMBER")
    self_review = reviewers(slack_api, Clock(), reviewer_group=GROUP, allow_self_review=True)
    assert await self_review.refusal("U0MEMBER", "U0MEMBER") is None


async def test_the_group_is_read_once_then_refreshed_in_the_background_and_removals_take_effect(slack_api):
    slack_api.set_group_members(GROUP, ["U0MEMBER"])
    clock = Clock()
    people = reviewers(slack_api, clock, reviewer_group=GROUP)
    await people.warm()
    assert await people.is_reviewer("U0MEMBER")
    assert len(slack_api.calls("usergroups.users.list")) == 1  # warm read it; the click did not wait

    slack_api.set_group_members(GROUP, [])  # removed from the group
    clock.now += GROUP_CACHE_S + 1
    assert await people.is_reviewer("U0MEMBER")  # the list read before is used while a new one is read
    await slack_api.wait_for_async(lambda: len(slack_api.calls("usergroups.users.list")) == 2)
    deadline = asyncio.get_running_loop().time() + 5
    while await people.is_reviewer("U0MEMBER"):  # until the background read has landed
        assert asyncio.get_running_loop().time() < deadline, "the removal never took effect"
        await asyncio.sleep(0.01)
    assert len(slack_api.calls("usergroups.users.list")) == 2  # one background read, not one per click


async def test_a_group_slack_cannot_list_has_no_members(slack_api):
    people = reviewers(slack_api, Clock(), reviewers=["U0LEAD"], reviewer_group="S0UNKNOWN")  # no_such_subteam
    assert not await people.is_reviewer("U0ANYONE")
    assert await people.is_reviewer("U0LEAD")  # configured ids still decide
