"""A run's end as its thread shows it: the marked message (Slack message metadata) read back through the real
slack_sdk client from the fake Web API, and the recovery notice that replaces a run's placeholder."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agent import RunStatus, TerminationReason
from bot.core import ReviewConfig, ShownEnd, StoredRun
from bot.slack.blocks import SlackMessage, failure_message, queued_message, section
from bot.slack.client import slack_client
from bot.slack.gateway import SlackFailure, SlackGateway
from bot.slack.reply.marks import mark_ended
from bot.slack.reply.updates import ThreadReply
from bot.slack.review.notifier import SlackNotifier
from bot.store import Database
from bot.store.models import Run
from bot.store.rows import stored_run
from bot.wording import InThread
from tests.bot.slack.harness import settings_for
from tests.bot.slack.seen import shown
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_events import CHANNEL

ANSWER = "47 × 12 = 564 [1]"


def a_run(run_id: str, thread: str, reply_ts: str | None, **columns: object) -> StoredRun:
    """A run in the thread, as the store would give it back."""
    values: dict[str, object] = {
        "source": "slack",
        "asker": "U0ASKER",
        "question": "What is 47 times 12?",
        "status": RunStatus.RUNNING,
        "created_at": datetime.now(UTC),
    }
    row = Run(id=run_id, channel_id=CHANNEL, thread_ts=thread, reply_ts=reply_ts, **(values | columns))
    return stored_run(row)


async def test_marks_a_runs_end_is_read_back_from_its_thread_and_a_notice_replaces_a_placeholder(
    db: Database, slack_api: FakeSlackApi
) -> None:
    client = slack_client(settings_for(slack_api))
    board = SlackNotifier(SlackGateway(client), ReviewConfig())
    thread = slack_api.add_message(CHANNEL, "<@UBOT> What is 47 times 12? And 6 times 7?", user="U0ASKER")
    answered = ThreadReply(client, CHANNEL, thread, min_interval_s=0)
    left = ThreadReply(client, CHANNEL, thread, min_interval_s=0)
    answered_ts, left_ts = await answered.post(queued_message(0)), await left.post(queued_message(1))
    run = a_run("run-answered", thread, answered_ts)
    assert await board.shown_end(run) is None  # a placeholder is no end

    await answered.finish(
        mark_ended([SlackMessage(ANSWER, [section(ANSWER)])], run.id, RunStatus.SOLVED, TerminationReason.ANSWERED)
    )
    assert await board.shown_end(run) == ShownEnd(RunStatus.SOLVED, TerminationReason.ANSWERED, ANSWER, answered_ts)
    assert await board.shown_end(a_run("run-left", thread, left_ts)) is None  # another run's mark is not its own

    stopped = InThread.STOPPED_AFTER_STEP.format(steps=2)
    ended = a_run(
        "run-left",
        thread,
        left_ts,
        status=RunStatus.DEGRADED,
        termination_reason=TerminationReason.CANCELLED,
        answer=stopped,
    )
    await board.stale_ended(ended)
    first, second = slack_api.messages_in(CHANNEL, thread)
    assert (first["ts"], shown(first)) == (answered_ts, ANSWER)
    assert second["ts"] == left_ts and stopped in shown(second) and "degraded · cancelled" in shown(second)
    end = await board.shown_end(ended)
    assert end is not None and (end.status, end.reason, end.message_ts) == (
        RunStatus.DEGRADED,
        TerminationReason.CANCELLED,
        left_ts,
    )


async def test_marks_a_thread_slack_refuses_to_show_is_no_end_and_one_it_cannot_reach_is_asked_again(
    db: Database, slack_api: FakeSlackApi
) -> None:
    client = slack_client(settings_for(slack_api))
    board = SlackNotifier(SlackGateway(client), ReviewConfig())
    thread = slack_api.add_message(CHANNEL, "<@UBOT> What is 47 times 12?", user="U0ASKER")
    reply = ThreadReply(client, CHANNEL, thread, min_interval_s=0)
    ts = await reply.post(queued_message(0))
    await reply.finish(
        mark_ended(
            [failure_message("my database is unavailable", "run-1")],
            "run-1",
            RunStatus.DEGRADED,
            TerminationReason.CANCELLED,
        )
    )
    run = a_run("run-1", thread, ts)
    assert (await board.shown_end(run)) is not None

    slack_api.fail_next("conversations.replies", error="missing_scope")  # refused for good
    assert await board.shown_end(run) is None
    slack_api.fail_next("conversations.replies", status=503, times=4)  # unreachable through every retry
    with pytest.raises(SlackFailure):
        await board.shown_end(run)
