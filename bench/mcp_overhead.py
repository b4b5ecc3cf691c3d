"""The cost of an MCP tool call against a loopback server, next to an HTTP tool call (issue 20).

Three servers, each a process of its own on this machine, answer the same order lookup: the test CRM
(tests/fakes/mcp_crm.py, the `mcp` SDK's MCPServer) over Streamable HTTP on 127.0.0.1 and as a stdio child
Parley starts, and a plain JSON endpoint (uvicorn + Starlette) behind a declared HTTP tool. Each call goes through
the engine's `ToolExecutor`, the path a run takes (argument validation, timeout, grading, the observation).
Calls are sequential, after a warm-up; reported: p50 / p90 / p99 / mean in milliseconds.

    .venv/bin/python bench/mcp_overhead.py              # 500 calls each
    .venv/bin/python bench/mcp_overhead.py --calls 100
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from agent import GradingTable, HttpToolEntry, McpServers, McpSpec, MemoryPins, RecoveryPolicy, Toolbox  # noqa: E402
from agent.messages import ToolCallRequest  # noqa: E402
from agent.tools.executor import ToolExecutor  # noqa: E402
from agent.tools.http import HttpTool  # noqa: E402
from tests.serving import free_port  # noqa: E402

CRM = REPO / "tests" / "fakes" / "mcp_crm.py"
JSON_API = """
import sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
async def order(request):
    return JSONResponse({"order_id": request.path_params["id"], "customer": "Ada Lovelace", "total": 129.5,
                         "currency": "EUR", "status": "shipped"})
app = Starlette(routes=[Route("/orders/{id}", order)])
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="error")
"""


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    cut = statistics.quantiles(ordered, n=100)
    return f"{cut[49]:6.2f} / {cut[89]:6.2f} / {cut[98]:6.2f} / {statistics.fmean(ordered):6.2f}"


async def timed(executor: ToolExecutor, name: str, calls: int) -> list[float]:
    request = ToolCallRequest(id="c", name=name, arguments={"order_id": "A-1001"})
    for _ in range(20):  # warm-up: connections, first-use costs
        [done] = await executor.run_batch([request])
        assert done.observation.ok, done.observation
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        [done] = await executor.run_batch([request])
        samples.append((time.perf_counter() - started) * 1000)
        assert done.observation.ok, done.observation
    return samples


async def wait_for_port(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        except OSError:
            await asyncio.sleep(0.1)
    raise SystemExit(f"nothing listens on {port} after 30 s")


def main(calls: int) -> None:
    mcp_port, api_port = free_port(), free_port()
    children = [
        subprocess.Popen([sys.executable, str(CRM), "http", str(mcp_port)], stderr=subprocess.DEVNULL),
        subprocess.Popen([sys.executable, "-c", JSON_API, str(api_port)], stderr=subprocess.DEVNULL),
    ]
    try:
        results = asyncio.run(measure(calls, mcp_port, api_port))
    finally:
        for child in children:
            child.terminate()
            child.wait()
    print(f"{calls} sequential calls each, Python {platform.python_version()}, {platform.machine()}")
    print(f"{'':34} p50 / p90 / p99 / mean (ms)")
    for label, samples in results.items():
        print(f"{label:34} {percentiles(samples)}")


async def measure(calls: int, mcp_port: int, api_port: int) -> dict[str, list[float]]:
    table, policy = GradingTable(), RecoveryPolicy(max_auto_retries=0)
    await wait_for_port(mcp_port)
    await wait_for_port(api_port)
    results: dict[str, list[float]] = {}
    async with httpx.AsyncClient(trust_env=False) as http:
        entry = HttpToolEntry.model_validate(
            {
                "name": "lookup_order",
                "description": "Look up one order by its id.",
                "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
                "http": {"url": f"http://127.0.0.1:{api_port}/orders/{{order_id}}"},
            }
        )
        results["HTTP tool (loopback)"] = await timed(
            ToolExecutor([HttpTool(entry, http, {})], table, policy), "lookup_order", calls
        )
    specs = {
        "MCP, Streamable HTTP (loopback)": McpSpec(url=f"http://127.0.0.1:{mcp_port}/mcp", name="crm"),
        "MCP, stdio child": McpSpec(command=[sys.executable, str(CRM)], name="crm"),
    }
    for label, spec in specs.items():
        async with McpServers([spec], env={}, pins=MemoryPins()) as servers:
            executor = ToolExecutor(Toolbox((), servers.servers), table, policy)
            results[label] = await timed(executor, "crm_lookup_order", calls)
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=500)
    main(parser.parse_args().calls)
