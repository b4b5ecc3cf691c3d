"""MCP servers through the `parley` command line, as an operator runs it: `parley tools`, `parley mcp trust`
after a definition changed, `parley ask` answering from a stdio server it starts (and leaves no orphan, also
when interrupted or killed mid-call), a server down at start, and a missing `${VAR}`. Real processes and a
real MCP server (tests/fakes/mcp_crm.py)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.bot.test_cli import EXIT_OK, EXIT_USAGE, Parley, one_line
from tests.serving import alive, free_port

pytestmark = pytest.mark.slow

CRM = Path(__file__).resolve().parents[1] / "fakes" / "mcp_crm.py"
QUESTION = "What is the status of order A-1001?"


@pytest.fixture
def parley(tmp_path: Path) -> Parley:
    return Parley(tmp_path)


def config(parley: Parley, *, mcp: dict[str, object], extra_tools: list[dict[str, object]] | None = None) -> Path:
    tools = [{"builtin": "calculator"}, *(extra_tools or []), {"mcp": mcp}]
    text = yaml.safe_dump({"limits": {"retry_backoff_base_s": 0.01, "retry_backoff_max_s": 0.02}, "tools": tools})
    return parley.write("parley.yaml", text)


def stdio(**fields: object) -> dict[str, object]:
    return {"command": [sys.executable, str(CRM)], "name": "crm", "timeout_s": 20, **fields}


def test_parley_tools_lists_every_tool_with_its_source_and_state(parley: Parley) -> None:
    path = config(parley, mcp=stdio(block=["export_all"]))
    done = parley("tools", "--config", str(path))
    assert done.returncode == EXIT_OK, done.stderr
    lines = {line.split()[0]: line for line in done.stdout.splitlines() if line and not line.startswith(" ")}
    assert "builtin" in lines["calculator"]
    assert "mcp crm" in lines["crm_lookup_order"] and "pinned" in lines["crm_lookup_order"]
    assert "held (destructive)" in lines["crm_refund"]
    assert "not offered: in block" in lines["crm_export_all"]
    assert "crm (stdio): up" in done.stdout


def test_parley_mcp_trust_after_a_changed_definition(parley: Parley) -> None:
    first = parley("tools", "--config", str(config(parley, mcp=stdio())))
    assert first.returncode == EXIT_OK, first.stderr

    changed = config(parley, mcp=stdio(env={"CRM_VARIANT": "changed"}))
    drifted = parley("tools", "--config", str(changed))
    assert drifted.returncode == EXIT_OK, drifted.stderr
    assert "CHANGED: not offered until `parley mcp trust crm lookup_order`" in drifted.stdout
    assert "changed: lookup_order" in drifted.stdout
    assert "crm_order_notes" in drifted.stdout and "definition of lookup_order" in drifted.stderr  # told in the log

    trusted = parley("mcp", "trust", "crm", "lookup_order", "--config", str(changed))
    assert trusted.returncode == EXIT_OK, trusted.stderr
    assert trusted.stdout.strip() == "crm lookup_order: trusted (its definition had changed)"

    after = parley("tools", "--config", str(changed))
    assert "CHANGED" not in after.stdout
    unknown = parley("mcp", "trust", "tickets", "--config", str(changed))
    assert unknown.returncode == EXIT_USAGE and "no MCP server is named 'tickets'" in one_line(unknown.stderr)


def test_parley_ask_answers_from_a_stdio_server_and_leaves_no_orphan(parley: Parley) -> None:
    pidfile = parley.cwd / "crm.pid"
    path = config(parley, mcp=stdio(env={"CRM_PIDFILE": str(pidfile)}))
    script = parley.write(
        "script.yaml",
        yaml.safe_dump(
            {
                "question": QUESTION,
                "decisions": [
                    {"tool": "crm_lookup_order", "args": {"order_id": "A-1001"}},
                    {"final": "Order A-1001 (Ada Lovelace) is shipped [1]."},
                ],
            }
        ),
    )
    done = parley("ask", "--config", str(path), "--replay", str(script), QUESTION, "--json", "--quiet")
    assert done.returncode == EXIT_OK, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "solved" and [c["tool"] for c in result["citations"]] == ["crm_lookup_order"]
    assert not alive(int(pidfile.read_text()))  # stopped with `parley ask`


def test_parley_ask_goes_on_when_a_server_is_down_and_says_so(parley: Parley) -> None:
    down = {"url": f"http://127.0.0.1:{free_port()}/mcp", "name": "crm", "timeout_s": 2}
    path = config(parley, mcp=down)
    script = parley.write(
        "script.yaml",
        yaml.safe_dump({"decisions": [{"tool": "calculator", "args": {"expression": "47*12"}}, {"final": "564 [1]"}]}),
    )
    done = parley("ask", "--config", str(path), "--replay", str(script), "What is 47 times 12?", "--json", "--quiet")
    assert done.returncode == EXIT_OK, done.stderr
    assert json.loads(done.stdout)["status"] == "solved"
    assert "MCP server crm is not connected" in done.stderr


def test_parley_refuses_a_missing_variable_naming_it_and_the_server(parley: Parley) -> None:
    mcp = {"url": "http://127.0.0.1:9/mcp", "name": "crm", "headers": {"Authorization": "Bearer ${CRM_TOKEN}"}}
    done = parley("tools", "--config", str(config(parley, mcp=mcp)))
    assert done.returncode == EXIT_USAGE
    line = one_line(done.stderr)
    assert "mcp server 'crm'" in line and "CRM_TOKEN" in line


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGKILL])
def test_parley_ask_stopped_mid_call_leaves_no_orphan(parley: Parley, stop: signal.Signals) -> None:
    """Ctrl-C (Parley closes its servers) or a kill (the child reads the end of its stdin): the server goes too."""
    pidfile = parley.cwd / "crm.pid"
    path = config(parley, mcp=stdio(env={"CRM_PIDFILE": str(pidfile)}, timeout_s=120))
    script = parley.write(
        "script.yaml",
        yaml.safe_dump({"decisions": [{"tool": "crm_slow_report", "args": {"seconds": 100}}, {"final": "r [1]"}]}),
    )
    command = [sys.executable, "-m", "bot.cli", "ask", "--config", str(path), "--replay", str(script), "A report?"]
    ask = subprocess.Popen(
        command, cwd=parley.cwd, env=parley.environment(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        assert ask.stderr is not None
        seen = ""
        while "crm_slow_report" not in seen:  # the progress line of the call: it is in flight
            line = ask.stderr.readline().decode()
            assert line, f"parley ask ended first: {seen}"
            seen += line
        child = int(pidfile.read_text())
        ask.send_signal(stop)
        ask.wait(timeout=60)
    finally:
        if ask.poll() is None:
            ask.kill()
    assert ask.returncode == (130 if stop is signal.SIGINT else -signal.SIGKILL)
    deadline = time.monotonic() + 20
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child)
