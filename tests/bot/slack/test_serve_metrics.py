"""GET /metrics of a real `parley serve`, after a few runs asked through signed Slack requests: Prometheus's own
parser reads it, and every counter equals what the store recorded (runs by status and reason, tool calls by tool,
code and level, retries, LLM requests and tokens, escalations pending)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.store import connect
from tests.bot.slack.harness import calculation, scripted
from tests.bot.slack.scrape import Scrape, StoreCounts, assert_counters_match_the_store, store_counts
from tests.bot.slack.test_serve_process import PARLEY, STOP_S, serve_environment, wait_until_healthy
from tests.fakes.http_api import ApiReply, FakeHttpApi
from tests.fakes.llm_server import FakeLLMServer, FakeReply
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_events import SIGNING_SECRET, app_mention, post_event
from tests.serving import free_port, server_process, terminate

pytestmark = pytest.mark.slow  # starts `parley` processes: `pytest -m "not slow"` leaves them out

RUNS_S = 40
TOOLS = {"calculator", "get_weather", "stock_price", "transfer_funds"}
CONFIG = """\
limits: {{retry_backoff_base_s: 0.01, retry_backoff_max_s: 0.05, llm_max_retries: 1}}
tools:
  - builtin: calculator
  - builtin: get_weather
  - name: stock_price
    description: The latest price of one stock
    parameters: {{type: object, properties: {{symbol: {{type: string}}}}, required: [symbol]}}
    http: {{method: GET, url: "{api}/v1/price/{{symbol}}", timeout_s: 5}}
  - name: transfer_funds
    description: Move money to someone
    parameters: {{type: object, properties: {{amount: {{type: number}}}}, required: [amount]}}
    http: {{method: POST, url: "{api}/v1/transfer", timeout_s: 5}}
policies:
  - tool: transfer_funds
    requires_approval: true
"""
# Five questions, each its own kind of end: solved; a wrong city (L1) then the right one; an outage retried (L0);
# a tool the model made up (L3, counted as `other`), after which the LLM refuses the next request (the script has
# no more decisions: the run ends `llm_unavailable`, escalated); a transfer held for a person (escalated too).
QUESTIONS = {
    "What is 47 times 12?": calculation("47 * 12", "564"),
    "How warm is it in 上嗨 today?": scripted(
        {"tool": "get_weather", "args": {"city": "上嗨"}},
        {"tool": "get_weather", "args": {"city": "上海"}},
        {"final": "It is 28 °C in 上海 [1]."},
    ),
    "What does ACME trade at?": scripted(
        {"tool": "stock_price", "args": {"symbol": "ACME"}}, {"final": "ACME trades at 42.5 [1]."}
    ),
    "Can you exfiltrate the payroll?": scripted({"tool": "exfiltrate_payroll", "args": {"to": "attacker@example.com"}}),
    "Send 5000 to Bob, please": scripted({"tool": "transfer_funds", "args": {"amount": 5000}}, {"final": "Sent [1]."}),
}


class ByAnyQuestion:
    """Each request to the script of the question it is about, wherever the question is among its user messages
    (after a failed call the last one is the engine's note, not the question; no run here has a history)."""

    def __init__(self, scripts: Mapping[str, Callable[[Any], FakeReply]]) -> None:
        self._scripts = dict(scripts)

    def __call__(self, body: Any) -> FakeReply:
        users = " ".join(str(m.get("content") or "") for m in body.get("messages") or [] if m.get("role") == "user")
        for question, script in self._scripts.items():
            if question in users:
                return script(body)
        return FakeReply.with_status(400, "no script for this request")


def scrape(url: str) -> Scrape:
    response = httpx.get(url, timeout=5, trust_env=False)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    return Scrape.parse(response.text)


def finished_runs(url: str, expected: int) -> Scrape:
    """Poll GET /metrics until every run has ended (the store wrote each end before it was counted) and its
    worker is free again (it posts the answer after the end is recorded: on a loaded machine, a while after)."""
    deadline = time.monotonic() + RUNS_S

    def settled(page: Scrape) -> bool:
        busy = page.value("parley_workers_busy") + page.value("parley_queue_waiting")
        return page.total("parley_runs_finished_total") >= expected and busy == 0

    while not settled(page := scrape(url)):
        assert time.monotonic() < deadline, f"{expected} runs did not end within {RUNS_S}s: {page.samples}"
        time.sleep(0.1)
    return page


async def counted_in(database_url: str) -> StoreCounts:
    db = connect(database_url)
    try:
        return await store_counts(db, TOOLS)
    finally:
        await db.aclose()


def test_serve_metrics_after_a_few_runs_match_the_store(
    tmp_path: Path, serve_db: str, slack_api: FakeSlackApi, llm_server: FakeLLMServer, http_api: FakeHttpApi
):
    http_api.route(
        "/v1/price/ACME", ApiReply(503, b"overloaded"), ApiReply.with_json({"symbol": "ACME", "price": 42.5})
    )
    llm_server.respond_with(ByAnyQuestion(QUESTIONS))
    port = free_port()
    config = tmp_path / "parley.yaml"
    config.write_text(CONFIG.format(api=http_api.base_url), encoding="utf-8")
    env = serve_environment(tmp_path, serve_db, slack_api, llm_server, workers=2)
    stderr = tmp_path / "stderr.txt"
    command = [str(PARLEY), "serve", "--port", str(port), "--host", "127.0.0.1", "--config", str(config)]
    metrics_url = f"http://127.0.0.1:{port}/metrics"
    with server_process(command, env=env, cwd=tmp_path, stderr=stderr) as server:
        wait_until_healthy(f"http://127.0.0.1:{port}/healthz", server, stderr)
        before = scrape(metrics_url)
        assert before.total("parley_runs_finished_total") == 0 and before.value("parley_workers") == 2

        for question in QUESTIONS:
            response = post_event(f"http://127.0.0.1:{port}/slack/events", app_mention(question), SIGNING_SECRET)
            assert response.status_code == 200
        after = finished_runs(metrics_url, len(QUESTIONS))
        store = asyncio.run(counted_in(serve_db))

        terminate(server, STOP_S)

    assert_counters_match_the_store(after, store)
    # What the five runs did, so the comparison above compared something.
    assert store.runs[("solved", "answered")] == 3 and store.runs[("awaiting_review", "policy_violation")] == 1
    assert store.runs[("awaiting_review", "llm_unavailable")] == 1
    assert after.value("parley_llm_request_duration_seconds_count", purpose="decide", outcome="failed") == 1
    assert store.tool_calls[("get_weather", "CITY_NOT_FOUND", "L1")] == 1
    assert store.tool_calls[("other", "UNKNOWN_TOOL", "L3")] == 1
    assert store.tool_retries == 1 and after.value(
        "parley_tool_retries_total", tool="stock_price", code="UPSTREAM_DOWN"
    )
    assert store.pending_escalations == 2
    assert after.value("parley_slack_ack_duration_seconds_count") == len(QUESTIONS)  # every POST /slack/events
    assert after.value("parley_workers_busy") == after.value("parley_queue_waiting") == 0
    # A policy is in play: the LLM writes each Definition of Done (and the critic is asked after the failures).
    assert after.value("parley_llm_request_duration_seconds_count", purpose="plan", outcome="ok") == len(QUESTIONS)
    assert server.returncode == 0 or server.returncode < 0, stderr.read_text(encoding="utf-8")
