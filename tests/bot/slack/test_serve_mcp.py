"""`parley serve` with MCP servers, as operators run it: /healthz and /metrics name each server's state (one
stdio child up, one URL down), and SIGTERM leaves no orphan stdio server behind."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml

from tests.bot.slack.test_serve_process import PARLEY, STOP_S, environment, wait_until_healthy
from tests.fakes.llm_server import FakeLLMServer
from tests.serving import alive, free_port, server_process, terminate

pytestmark = pytest.mark.slow

CRM = Path(__file__).resolve().parents[2] / "fakes" / "mcp_crm.py"


def test_serve_reports_mcp_servers_and_stops_its_stdio_server(
    tmp_path: Path, serve_db: str, llm_server: FakeLLMServer
) -> None:
    pidfile = tmp_path / "crm.pid"
    config = {
        "tools": [
            {"builtin": "calculator"},
            {"mcp": {"command": [sys.executable, str(CRM)], "name": "crm", "env": {"CRM_PIDFILE": str(pidfile)}}},
            {"mcp": {"url": f"http://127.0.0.1:{free_port()}/mcp", "name": "tickets", "timeout_s": 1}},
        ]
    }
    (tmp_path / "parley.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    port = free_port()
    env = environment(
        tmp_path,
        PARLEY_DATABASE_URL=serve_db,
        PARLEY_LLM_BASE_URL=llm_server.base_url,
        PARLEY_LLM_MODEL="m",
        PARLEY_CONFIG=str(tmp_path / "parley.yaml"),
    )
    stderr = tmp_path / "stderr.txt"
    command = [str(PARLEY), "serve", "--port", str(port), "--host", "127.0.0.1"]
    with server_process(command, env=env, cwd=tmp_path, stderr=stderr) as server:
        health = wait_until_healthy(f"http://127.0.0.1:{port}/healthz", server, stderr).json()
        assert health["mcp crm"].startswith("up, 9 tools offered"), health
        tickets = health["mcp tickets"]  # down, or trying again (its reconnection in the background): never up
        assert tickets.startswith(("down, 0 tools offered", "connecting, 0 tools offered")), health
        assert "could not talk to tickets" in tickets, health
        metrics = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5, trust_env=False).text
        assert 'parley_mcp_server_up{server="crm"} 1.0' in metrics
        assert 'parley_mcp_server_up{server="tickets"} 0.0' in metrics
        pid = int(pidfile.read_text())
        assert alive(pid)
        terminate(server, STOP_S)

    errors = stderr.read_text(encoding="utf-8")
    assert server.returncode in (0, -signal.SIGTERM), errors
    assert "MCP server tickets is not connected" in errors and "Traceback" not in errors, errors
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:  # stopped with serve: a moment for the kernel to reap it
        time.sleep(0.05)
    assert not alive(pid)
