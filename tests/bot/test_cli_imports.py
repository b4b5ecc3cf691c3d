"""What a `parley` command loads: each command imports its own module only, and what only `parley serve` or a
configured MCP server needs (Slack's SDKs, aiohttp, the web server, the scheduler, the exporters, the MCP SDK) is
not loaded by the others. Every test of the command line starts a process: its start-up is most of their time.

Each check is a fresh interpreter, since a module once imported stays in `sys.modules`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEMO_A = REPO / "config" / "demos" / "demo_a.yaml"
ZEPHYR = "How much did Zephyr Labs spend on launching satellites?"
# Top-level packages that only `parley serve` (or a configured MCP server) has a use for.
SERVING_ONLY = (
    "mcp",
    "mcp_types",
    "httpx2",
    "slack_bolt",
    "slack_sdk",
    "aiohttp",
    "uvicorn",
    "starlette",
    "apscheduler",
    "prometheus_client",
    "opentelemetry",
)
# The engine's loop and fact-checker: what runs a question, which browsing the history has no use for.
ENGINE = ("agent.loop", "agent.grounding.checker", "bot.assembly")
LOADED = """
import json, sys
print(json.dumps(sorted(set(sys.modules) & set(json.loads(sys.argv[1])))))
"""


def loaded_after(code: str, tmp_path: Path, watched: tuple[str, ...] = SERVING_ONLY) -> set[str]:
    """Which of the `watched` modules a fresh interpreter has loaded after running `code`."""
    environ = {name: value for name, value in os.environ.items() if not name.startswith(("PARLEY_", "SLACK_"))}
    environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), environ.get("PYTHONPATH")]))
    environ["XDG_DATA_HOME"] = str(tmp_path)  # the default store, created on first use, is the test's own
    done = subprocess.run(
        [sys.executable, "-c", code + LOADED, json.dumps(watched)],
        cwd=tmp_path,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_cli_commands_other_than_serve_load_nothing_of_serving(tmp_path: Path) -> None:
    commands = ["ask", "demo", "db", "runs", "review", "eval", "tools", "mcp"]
    code = f"from bot.cli import parser\nfor command in {commands!r}:\n    parser([command])\n"

    assert loaded_after(code, tmp_path) == set()


def test_cli_history_and_review_list_load_no_engine(tmp_path: Path) -> None:
    """`parley runs`, `review list` and `db` read and write the store: the loop and the checker stay out."""
    code = "from bot.cli import parser\nfor command in ['runs', 'review', 'db']:\n    parser([command])\n"

    assert loaded_after(code, tmp_path, ENGINE) == set()


def test_cli_ask_runs_a_question_without_loading_anything_of_serving(tmp_path: Path) -> None:
    """The whole run (configuration, tools without MCP servers, the engine, the store), not only the imports."""
    argv = ["ask", "--replay", str(DEMO_A), ZEPHYR, "--quiet"]
    code = f"from bot.cli import main\nassert main({argv!r}) == 0\n"

    assert loaded_after(code, tmp_path, SERVING_ONLY + ENGINE) == set(ENGINE)  # the engine, and nothing of serving


def test_cli_serve_loads_slack_and_the_web_server(tmp_path: Path) -> None:
    """The check above can fail: `parley serve`'s module does load them (MCP stays out while none is configured)."""
    loaded = loaded_after("from bot.cli import parser\nparser(['serve'])\n", tmp_path)

    assert {"slack_bolt", "aiohttp", "uvicorn", "starlette"} <= loaded
    assert not loaded & {"mcp", "mcp_types"}
