"""agent/'s import graph: a pure library whose subpackages and top-level modules form no cycle.

The wire types (`agent/messages.py`) import nothing of the engine, so brains, tools, the loop and the trace can
all speak them without an arrow pointing back; and nothing in agent/ imports bot/, Slack or SQL (DESIGN.md).
"""

from __future__ import annotations

from pathlib import Path

import agent
from tests.import_graph import find_cycle, imported_modules, unit_graph

AGENT_DIR = Path(agent.__file__).parent
FOREIGN = ("bot", "slack_sdk", "slack_bolt", "sqlalchemy", "alembic", "apscheduler")


def test_agent_units_form_no_cycle():
    graph = unit_graph(AGENT_DIR)
    assert {"agent.brains", "agent.tools", "agent.grounding", "agent.loop", "agent.messages"} <= set(graph)
    cycle = find_cycle(graph)
    assert cycle is None, "agent/ imports in a circle: " + " → ".join(cycle or [])


def test_agent_wire_types_import_nothing_of_the_engine():
    graph = unit_graph(AGENT_DIR)
    assert graph["agent.messages"] == set()
    assert "agent.brains" not in graph["agent.tools"]  # tools read the calls a model asked for from agent.messages


def test_agent_imports_no_application_slack_or_sql():
    for path in sorted(AGENT_DIR.rglob("*.py")):
        foreign = {m for m in imported_modules(path) if m.split(".")[0] in FOREIGN}
        assert not foreign, f"{path.relative_to(AGENT_DIR.parent)} imports {sorted(foreign)}"


MCP_SDK = ("mcp", "mcp_types", "httpx2")


def test_only_the_mcp_package_imports_the_mcp_sdk():
    """The engine knows tools, not MCP: the SDK (and its httpx2) is imported by agent/tools/mcp/ alone."""
    importers = {
        path.relative_to(AGENT_DIR.parent).as_posix()
        for path in sorted(AGENT_DIR.rglob("*.py"))
        if any(m.split(".")[0] in MCP_SDK for m in imported_modules(path))
    }
    assert importers and all(path.startswith("agent/tools/mcp/") for path in importers), importers
