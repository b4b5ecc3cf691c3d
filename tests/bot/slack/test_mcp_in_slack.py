"""MCP servers in Slack: a mention answered from an MCP tool's structured result, cited; and the Home tab
showing the people who run Parley each server's state (one up, one down); the assistant pane's suggested prompts
drawn from an MCP tool's own example; a destructive MCP tool held, then approved in the reviewer channel and run
exactly once. Real MCP server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import select

from agent import McpServers, McpSpec, MemoryPins
from bot.core import ReviewConfig
from bot.slack.review.blocks import APPROVE
from bot.store.models import ToolCallRecord
from tests.bot.slack.harness import running_bot, scripted
from tests.bot.slack.seen import shown
from tests.bot.slack.test_home_and_commands import REVIEWER, REVIEWER_GROUP, open_home, section_under, text_of
from tests.bot.slack.test_review import REVIEW, click, escalated, thread_messages
from tests.bot.slack.test_review import REVIEWER as CHANNEL_REVIEWER
from tests.fakes.mcp_crm import CrmHttpServer
from tests.fakes.slack_events import ASKER, CHANNEL, DM_CHANNEL, app_mention, assistant_thread_started
from tests.serving import free_port


@pytest.fixture
async def servers() -> AsyncIterator[McpServers]:
    async with CrmHttpServer(free_port()) as crm:
        specs = [
            McpSpec(url=crm.url, name="crm", timeout_s=5),
            McpSpec(url=f"http://127.0.0.1:{free_port()}/mcp", name="tickets", timeout_s=1),
        ]
        async with McpServers(specs, env={}, pins=MemoryPins()) as connected:
            yield connected


async def test_slack_mention_answered_from_an_mcp_tool_is_cited(db, slack_api, llm_server, servers) -> None:
    llm_server.respond_with(
        scripted(
            {"tool": "crm_lookup_order", "args": {"order_id": "A-1001"}},
            {"final": "Order A-1001 for Ada Lovelace is shipped [1]."},
        )
    )
    async with running_bot(db, slack_api, llm_server.base_url, sources=servers.servers) as bot:
        body = app_mention("What is the status of order A-1001?")
        assert (await bot.post(body)).status_code == 200
        [reply] = await slack_api.wait_for_async(
            lambda: [m for m in slack_api.messages_in(CHANNEL, body["event"]["ts"]) if "shipped" in m.get("text", "")],
            timeout_s=15,
            what="the answer in the thread",
        )
    assert "[1]" in reply["text"]


async def test_home_shows_each_mcp_servers_state_to_reviewers(db, slack_api, llm_server, servers) -> None:
    slack_api.set_group_members(REVIEWER_GROUP, [REVIEWER])
    review = ReviewConfig(reviewer_group=REVIEWER_GROUP)
    async with running_bot(db, slack_api, llm_server.base_url, review=review, sources=servers.servers) as bot:
        view = await open_home(bot, REVIEWER)
        asker_view = await open_home(bot, ASKER)
    shown = section_under(view, "Tool servers")
    assert "🟢 *crm*: up, 9 tools offered" in shown
    assert "🔴 *tickets*: down, 0 tools offered" in shown and "could not talk to tickets" in shown
    assert "Tool servers" not in text_of(asker_view)  # for the people who run Parley


async def test_assistant_pane_prompts_draw_on_an_mcp_tools_example(db, slack_api, llm_server, servers) -> None:
    async with running_bot(db, slack_api, llm_server.base_url, tools=("calculator",), sources=servers.servers) as bot:
        started = assistant_thread_started()
        thread = started["event"]["assistant_thread"]["thread_ts"]
        assert (await bot.post(started)).status_code == 200
        offered = await slack_api.wait_for_async(
            lambda: slack_api.suggested_prompts(DM_CHANNEL, thread), what="the suggested prompts"
        )
    # The calculator's own prompt, then crm_lookup_order's, from the example in the server's input schema.
    assert offered["prompts"] == [
        {"title": "Calculate 47 * 12", "message": "What is 47 * 12?"},
        {"title": "Look up one order by its id", "message": "Look up one order by its id: A-1001"},
    ]


async def test_a_destructive_mcp_tool_is_held_then_approved_in_slack_and_run_once(
    db, slack_api, llm_server, tmp_path: Path
) -> None:
    arguments = {"order_id": "A-1001", "amount": 129.5}
    llm_server.respond_with(
        scripted({"tool": "crm_refund", "args": arguments}, {"final": "Order A-1001 was refunded 129.5 EUR [1]."})
    )
    ledger = tmp_path / "ledger.txt"
    async with (
        CrmHttpServer(free_port(), ledger=ledger) as crm,
        McpServers([McpSpec(url=crm.url, name="crm", timeout_s=5)], env={}, pins=MemoryPins()) as connected,
        running_bot(db, slack_api, llm_server.base_url, review=REVIEW, sources=connected.servers) as bot,
    ):
        thread, message, held = await escalated(db, bot, "Refund order A-1001 in full, please.")
        assert not ledger.exists()  # held: nothing was executed
        assert "crm_refund(" in shown(held) and "destructive" in shown(message)
        await click(bot, APPROVE, message, CHANNEL_REVIEWER)
        await thread_messages(bot, thread, 2, showing="was refunded")
        await click(bot, APPROVE, message, CHANNEL_REVIEWER)  # a second click decides nothing
    assert ledger.read_text(encoding="utf-8") == "A-1001 129.5\n"  # once, with the reviewed arguments
    async with db.sessions() as session:
        calls = (await session.scalars(select(ToolCallRecord))).all()
    assert [(c.tool, c.arguments) for c in calls] == [("crm_refund", arguments)]
