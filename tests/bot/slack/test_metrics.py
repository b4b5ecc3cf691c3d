"""GET /metrics of the Slack bot: labels drawn from closed vocabularies only — never a question, a user, a tool's
arguments or a secret — and a store that does not answer shows as a gauge, never as a failed scrape."""

from __future__ import annotations

import logging
import math
import socket
import time

from agent import ErrorCode, ToolError
from bot.metrics import STORE_TIMEOUT_S, Metrics, Vocabulary
from bot.store import connect
from tests.agent.toolbox import ScriptedTool
from tests.bot.slack.harness import mentioned_and_answered, running_bot, scripted
from tests.bot.slack.scrape import Scrape, assert_counters_match_the_store, store_counts
from tests.fakes.slack_events import ASKER, CHANNEL, SIGNING_SECRET
from tests.fakes.slack_workspace import BOT_TOKEN

SECRET = "sk-live-7f3a9c2e1b"
QUESTION = f"My card is 4111 1111 1111 1111 and my key {SECRET}: what is 47 times 12? Ask U0SOMEONE too"
LABELS = {"status", "reason", "tool", "code", "level", "purpose", "outcome", "kind", "verdict", "le"}


async def test_metrics_labels_are_closed_vocabularies_never_questions_users_arguments_or_secrets(
    db, slack_api, llm_server
):
    lookup = ScriptedTool("lookup", [ToolError("QUOTA_BLOWN_FOR_" + SECRET, "a code the back-end made up")])
    llm_server.respond_with(
        scripted(
            {"tool": f"leak_{SECRET}", "args": {"key": SECRET}},  # a tool the model made up, named after the secret
            {"tool": "lookup", "args": {"card": "4111 1111 1111 1111"}},
            {"tool": "calculator", "args": {"expression": "47 * 12"}},
            {"final": "47 × 12 = 564 [1]"},
        )
    )
    async with running_bot(db, slack_api, llm_server.base_url, tools=("calculator", lookup)) as bot:
        await mentioned_and_answered(bot, QUESTION)
        response = await bot.get("/metrics")
        store = await store_counts(db, {"calculator", "lookup"})

    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    page = Scrape.parse(response.text)
    assert_counters_match_the_store(page, store)
    # Numbers are checked with their spaces: a bare "4111" can occur in a sample's _created timestamp.
    for never in (SECRET, "4111 1111", "47 times", "U0SOMEONE", ASKER, CHANNEL, SIGNING_SECRET, BOT_TOKEN, "leak_"):
        assert never not in response.text
    pairs = page.label_values()
    assert {name for name, _ in pairs} <= LABELS
    assert {value for name, value in pairs if name == "tool"} == {"calculator", "lookup", "other"}
    assert {value for name, value in pairs if name == "verdict"} == {"up", "down"}
    codes = {value for name, value in pairs if name == "code"}
    assert codes == {"ok", "UNKNOWN_TOOL", "other"} and codes <= {"ok", "other", *ErrorCode}
    assert page.value("parley_tool_calls_total", tool="other", code="UNKNOWN_TOOL", level="L3") == 1
    assert page.value("parley_tool_calls_total", tool="lookup", code="other", level="L1") == 1
    assert page.value("parley_slack_ack_duration_seconds_count") == 1


def silent_port(listener: socket.socket) -> int:
    """A port that takes connections and never says a word (a hung database server)."""
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    return int(listener.getsockname()[1])


async def test_metrics_a_store_that_does_not_answer_shows_as_a_gauge_and_the_scrape_still_answers(db, caplog):
    caplog.set_level(logging.INFO, logger="bot.metrics")
    metrics = Metrics(Vocabulary(["calculator"]), workers=4)
    with socket.socket() as listener:
        hung = connect(f"postgresql://parley@127.0.0.1:{silent_port(listener)}/parley")
        try:
            started = time.monotonic()
            first = Scrape.parse((await metrics.page(hung, busy=1, waiting=3)).decode())
            elapsed = time.monotonic() - started
            second = Scrape.parse((await metrics.page(hung, busy=0, waiting=0)).decode())
        finally:
            await hung.aclose()
    back = Scrape.parse((await metrics.page(db, busy=0, waiting=0)).decode())

    assert elapsed < STORE_TIMEOUT_S + 0.5  # bounded: the scrape does not wait for the database
    assert first.value("parley_store_up") == 0 and math.isnan(first.value("parley_escalations_pending"))
    assert (first.value("parley_workers_busy"), first.value("parley_queue_waiting"), first.value("parley_workers")) == (
        1,
        3,
        4,
    )
    assert second.value("parley_store_up") == 0
    assert back.value("parley_store_up") == 1 and back.value("parley_escalations_pending") == 0
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == ["metrics: escalations and feedback not counted, the store is unavailable: no answer within 1 s"]
    assert math.isnan(first.value("parley_feedback_verdicts", verdict="down"))  # unknown, never a made-up 0
    assert (
        back.value("parley_feedback_verdicts", verdict="up")
        == back.value("parley_feedback_verdicts", verdict="down")
        == 0
    )
    assert "metrics: the store answers again" in caplog.messages
