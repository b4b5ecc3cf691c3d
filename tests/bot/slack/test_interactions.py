"""Clicks and form submissions read where they enter (bot/slack/interactions.py): the fields Parley reads from
Slack's payloads, and what a payload that does not read as Slack sends it becomes — a click by nobody, refused
by the listener with nothing decided or recorded."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlencode

from bot.core import ReviewConfig
from bot.slack.feedback_blocks import COMMENT_BLOCK, COMMENT_INPUT, COMMENT_MODAL
from bot.slack.interactions import Interaction, read_interaction
from bot.slack.review.blocks import REJECT
from tests.bot.slack.harness import running_bot
from tests.bot.slack.seen import runs
from tests.fakes.slack_events import CHANNEL, block_actions, feedback_click, view_submission

REVIEWER = "U0REVIEWER"


def payload_of(body: bytes) -> dict:
    return json.loads(parse_qs(body.decode())["payload"][0])


def test_a_click_reads_who_where_and_the_buttons_value() -> None:
    clicked = read_interaction(payload_of(block_actions(REJECT, value="run-1", user=REVIEWER)))

    assert (clicked.clicker, clicked.channel_id, clicked.value) == (REVIEWER, CHANNEL, "run-1")
    assert clicked.trigger_id


def test_a_form_reads_what_was_typed_and_what_it_is_about() -> None:
    values = {COMMENT_BLOCK: {COMMENT_INPUT: {"type": "plain_text_input", "value": "Wrong unit"}}}
    submitted = read_interaction(payload_of(view_submission(COMMENT_MODAL, values, user="U1", private_metadata="r9")))

    assert (submitted.clicker, submitted.about, submitted.channel_id) == ("U1", "r9", None)
    assert submitted.typed(COMMENT_BLOCK, COMMENT_INPUT) == "Wrong unit"
    assert submitted.typed(COMMENT_BLOCK, "elsewhere") == "" and submitted.typed("nowhere", COMMENT_INPUT) == ""


def test_a_payload_that_does_not_read_names_nobody() -> None:
    for broken in (
        {"user": "U1", "actions": [{"value": "up:r1"}]},  # a string where Slack sends an object
        {"user": {"id": "U1"}, "actions": "up:r1"},
        {"user": {"id": "U1"}, "view": {"state": {"values": []}}},
        "not even an object",
        None,
    ):
        assert read_interaction(broken) == Interaction()
        assert (read_interaction(broken).clicker, read_interaction(broken).value) == ("", "")


async def test_broken_clicks_through_the_endpoint_decide_and_record_nothing(db, slack_api, llm_server) -> None:
    review = ReviewConfig(channel="C0REVIEWS", reviewers=(REVIEWER,))
    reject = payload_of(block_actions(REJECT, value="run-1", user=REVIEWER)) | {"user": REVIEWER}
    feedback = payload_of(feedback_click("down:run-1")) | {"user": ["U0SOMEONE"]}
    async with running_bot(db, slack_api, llm_server.base_url, review=review) as bot:
        for payload in (reject, feedback):
            response = await bot.post(urlencode({"payload": json.dumps(payload)}).encode())
            assert response.status_code == 200  # acknowledged: Slack would retry otherwise

    assert not slack_api.calls("views.open")  # no form opened for a click by nobody
    assert await runs(db) == []
