"""MCP servers as operators see them from `parley serve`: `/healthz` names each server's state (a server that
is down degrades its tools, not Parley) and the changed tools; `/metrics` has a gauge of each; pins are kept in
PostgreSQL, where a first sighting never overwrites a pin and only `trust` does; a changed definition is told on
`/healthz`, in a metric and in the log."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import yaml

from agent import Agent, ReplayBrain, ReplayScript
from bot.assembly import build_runtime, open_agent
from bot.config_file import load_config
from bot.settings import Settings
from bot.store import Database, StorePins, connect
from tests.bot.store.postgres import session_database
from tests.fakes.mcp_crm import CrmHttpServer
from tests.serving import free_port


@pytest.fixture(scope="module")
def mcp_pg_url() -> Iterator[str]:
    with session_database("mcp") as url:
        yield url


@pytest.fixture
async def db(mcp_pg_url: str) -> AsyncIterator[Database]:
    store = connect(mcp_pg_url, pool_size=3)
    try:
        yield store
    finally:
        await store.aclose()


async def test_health_and_metrics_show_each_mcp_server(db: Database, tmp_path: Path) -> None:
    down_url = f"http://127.0.0.1:{free_port()}/mcp"
    async with CrmHttpServer(free_port()) as crm:
        tools = [
            {"builtin": "calculator"},
            {"mcp": {"url": crm.url, "name": "crm", "timeout_s": 5}},
            {"mcp": {"url": down_url, "name": "tickets", "timeout_s": 1}},
        ]
        path = tmp_path / "parley.yaml"
        path.write_text(yaml.safe_dump({"tools": tools}), encoding="utf-8")
        brain = ReplayBrain(ReplayScript.model_validate({"decisions": [{"final": "nothing"}]}))
        async with open_agent(Settings(), load_config(path), brain, pins=StorePins(db)) as agent:
            runtime = build_runtime(Settings(workers=1), db, agent)
            status, report = await runtime.health()
            page = (await runtime.metrics_page()).decode()
    assert status == 200  # a server that is down degrades its tools, not Parley
    assert report["mcp crm"].startswith("up, 9 tools offered")
    assert report["mcp tickets"].startswith("down, 0 tools offered: could not talk to tickets")
    assert 'parley_mcp_server_up{server="crm"} 1.0' in page
    assert 'parley_mcp_server_up{server="tickets"} 0.0' in page
    assert 'parley_mcp_tools_changed{server="crm"} 0.0' in page
    assert "crm_lookup_order" in agent.tool_names and "calculator" in agent.tool_names


async def test_a_changed_definition_is_told_on_healthz_in_a_metric_and_in_the_log(
    db: Database, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def seen(crm: CrmHttpServer) -> tuple[Agent, dict[str, str], str]:
        path = tmp_path / "parley.yaml"
        tools = [{"mcp": {"url": crm.url, "name": "crm-drift", "timeout_s": 5}}]
        path.write_text(yaml.safe_dump({"tools": tools}), encoding="utf-8")
        brain = ReplayBrain(ReplayScript.model_validate({"decisions": [{"final": "nothing"}]}))
        async with open_agent(Settings(), load_config(path), brain, pins=StorePins(db)) as agent:
            runtime = build_runtime(Settings(workers=1), db, agent)
            _, report = await runtime.health()
            return agent, report, (await runtime.metrics_page()).decode()

    async with CrmHttpServer(free_port()) as original:
        await seen(original)  # first sighting: pinned in PostgreSQL
    with caplog.at_level(logging.WARNING):
        async with CrmHttpServer(free_port(), variant="changed") as rug_pull:
            agent, report, page = await seen(rug_pull)
    assert report["mcp crm-drift"].startswith("up, 8 tools offered"), report  # the others keep working
    assert "changed, refused until `parley mcp trust crm-drift`: lookup_order" in report["mcp crm-drift"]
    assert 'parley_mcp_tools_changed{server="crm-drift"} 1.0' in page
    assert any("lookup_order" in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records)
    assert "crm-drift_lookup_order" not in agent.tool_names and "crm-drift_order_notes" in agent.tool_names


async def test_store_pins_keep_the_first_sighting_until_trusted(db: Database) -> None:
    pins = StorePins(db, actor="U_OPERATOR")
    await pins.pin_new("crm-pins", {"lookup_order": "a" * 64})
    await pins.pin_new("crm-pins", {"lookup_order": "b" * 64, "refund": "c" * 64})  # another replica, later
    assert await pins.pinned("crm-pins") == {"lookup_order": "a" * 64, "refund": "c" * 64}
    await pins.trust("crm-pins", {"lookup_order": "b" * 64})
    assert await pins.pinned("crm-pins") == {"lookup_order": "b" * 64, "refund": "c" * 64}
    assert await pins.pinned("another") == {}
