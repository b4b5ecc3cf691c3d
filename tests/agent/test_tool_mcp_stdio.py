"""A stdio MCP server Parley starts itself: its tools, a restart after it is killed mid-run, and no orphan once
the servers are stopped. Real child processes (tests/fakes/mcp_crm.py), hence slow."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from agent import ServerState, ToolCallRequest
from tests.agent.mcp_world import connected, executor, shipped_table, stdio_spec
from tests.agent.toolbox import eventually
from tests.serving import alive

pytestmark = pytest.mark.slow


def call(name: str, **arguments: object) -> ToolCallRequest:
    return ToolCallRequest(id=f"call_{name}", name=name, arguments=dict(arguments))


async def test_mcp_stdio_server_answers_and_is_stopped_with_parley(tmp_path: Path) -> None:
    pidfile = tmp_path / "crm.pid"
    spec = stdio_spec(name="crm", env={"CRM_PIDFILE": str(pidfile)}, timeout_s=15)
    async with connected([spec]) as servers:
        assert servers.status()[0].state is ServerState.UP
        [executed] = await executor(servers).run_batch([call("crm_lookup_order", order_id="A-1001")])
        assert executed.observation.ok and executed.observation.data["customer"] == "Ada Lovelace"
        pid = int(pidfile.read_text())
        assert alive(pid)
    await eventually(lambda: not alive(pid), timeout_s=10)  # no orphan


async def test_mcp_stdio_server_killed_mid_run_is_restarted_and_a_read_only_call_goes_on(tmp_path: Path) -> None:
    spec = stdio_spec(name="crm", timeout_s=15)
    async with connected([spec]) as servers:
        tools = executor(servers, max_auto_retries=3)
        [first] = await tools.run_batch([call("crm_whoami")])
        old_pid = first.observation.data["pid"]
        os.kill(old_pid, signal.SIGKILL)
        [again] = await tools.run_batch([call("crm_whoami")])
        assert again.observation.ok, again.observation
        assert again.observation.data["pid"] != old_pid
        assert servers.status()[0].state is ServerState.UP
        new_pid = again.observation.data["pid"]
    await eventually(lambda: not alive(new_pid), timeout_s=10)


async def test_mcp_stdio_server_killed_during_an_acting_call_is_outcome_unknown(tmp_path: Path) -> None:
    spec = stdio_spec(name="crm", timeout_s=15)
    async with connected([spec]) as servers:
        tools = executor(servers)
        [who] = await tools.run_batch([call("crm_whoami")])
        pid = who.observation.data["pid"]
        killer = asyncio.get_running_loop().call_later(0.5, os.kill, pid, signal.SIGKILL)
        try:
            [executed] = await tools.run_batch([call("crm_slow_update", seconds=10)])
        finally:
            killer.cancel()
    assert executed.observation.code == "OUTCOME_UNKNOWN" and executed.retries == 0
    outcome_unknown = shipped_table().grade("OUTCOME_UNKNOWN").level  # graded by the shipped errors.yaml
    assert executed.observation.error is not None and executed.observation.error.level is outcome_unknown
