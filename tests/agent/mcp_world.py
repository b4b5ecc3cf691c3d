"""MCP servers for the engine's tests: the CRM over Streamable HTTP in the test's loop, or as a stdio child, and
an Agent whose toolbox holds them."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from agent import (
    Agent,
    AgentConfig,
    GradingTable,
    McpServers,
    McpSpec,
    MemoryPins,
    MemoryRecorder,
    PinStore,
    RecoveryPolicy,
    Toolbox,
)
from agent.tools.executor import ToolExecutor
from bot.config_file import defaults_dir, load_config

CRM_SCRIPT = Path(__file__).resolve().parents[1] / "fakes" / "mcp_crm.py"
FAST = {"retry_backoff_base_s": 0.01, "retry_backoff_max_s": 0.05}


def stdio_spec(**fields: Any) -> McpSpec:
    return McpSpec.model_validate({"command": [sys.executable, str(CRM_SCRIPT)], **fields})


def shipped_table() -> GradingTable:
    return GradingTable.from_mapping(load_config(defaults_dir() / "parley.yaml").agent.errors)


@asynccontextmanager
async def connected(
    specs: Sequence[McpSpec],
    *,
    env: Mapping[str, str] | None = None,
    pins: PinStore | None = None,
    fixed: Sequence[str] = (),
    refresh_s: float = 60.0,
) -> AsyncIterator[McpServers]:
    servers = McpServers(specs, env=env or {}, pins=pins or MemoryPins(), fixed_names=fixed, refresh_s=refresh_s)
    await servers.start()
    try:
        yield servers
    finally:
        await servers.stop()


def executor(servers: McpServers, *, max_auto_retries: int = 2) -> ToolExecutor:
    policy = RecoveryPolicy(max_auto_retries=max_auto_retries, backoff_base_s=0.01, backoff_max_s=0.05)
    return ToolExecutor(Toolbox((), servers.servers), shipped_table(), policy)


def mcp_agent(brain: Any, servers: McpServers, config: Mapping[str, Any] | None = None) -> tuple[Agent, MemoryRecorder]:
    raw = dict(config or {})
    raw["limits"] = {**FAST, **raw.get("limits", {})}
    raw.setdefault("errors", load_config(defaults_dir() / "parley.yaml").agent.errors)
    recorder = MemoryRecorder()
    agent = Agent(brain, Toolbox((), servers.servers), AgentConfig.model_validate(raw), recorder=recorder)
    return agent, recorder
