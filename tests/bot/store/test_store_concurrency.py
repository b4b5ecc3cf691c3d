"""Many runs recording at once on PostgreSQL, through one StoreRecorder and one connection pool (as the bot
shares them): nothing is lost or mixed up between runs."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sqlalchemy import select

from agent import Agent, ToolError
from bot.store import Database, StoreRecorder
from bot.store.models import Run
from tests.agent.toolbox import Hang, ScriptedTool, make_agent, replay
from tests.bot.store.recording import CLI, fetch, recording_failures, stored_result

RUNS = 50


def agent_for(n: int) -> Agent:
    """Run n makes 1–3 steps of calls that each await a little; some steps call twice in parallel, some
    calls are rate-limited once and retried, so the runs' counters all differ."""

    def lookup(arguments: dict[str, Any]) -> Hang:
        return Hang(0.002 * (n % 7 + 1), then={"key": arguments["key"], "run": n})

    flaky = ScriptedTool("flaky_lookup", [Hang(0.005, then=ToolError("RATE_LIMIT", "slow down")), {"ok": 1}])
    decisions: list[dict[str, Any]] = [
        {"tool": "lookup", "args": {"key": f"run{n}-step{step}"}} for step in range(1, n % 3 + 2)
    ]
    if n % 4 == 0:
        decisions.append({"calls": [{"tool": "lookup", "args": {"key": f"run{n}-a"}}, {"tool": "flaky_lookup"}]})
    decisions.append({"give_up": f"run {n} has seen enough"})
    agent, _ = make_agent(replay(decisions), [ScriptedTool("lookup", lookup), flaky])
    return agent


async def counts(db: Database, table: str) -> dict[str, int]:
    rows = await fetch(db, f"SELECT run_id, count(*) AS n FROM {table} GROUP BY run_id")
    return {row["run_id"]: row["n"] for row in rows}


async def test_store_records_fifty_concurrent_runs_without_losing_anything(
    postgres_db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    recorder = StoreRecorder(postgres_db, CLI)
    agents = [agent_for(n) for n in range(RUNS)]

    results = await asyncio.gather(
        *(agent.run(f"Look up the keys of run {n}", recorder=recorder) for n, agent in enumerate(agents))
    )

    assert recording_failures(caplog) == []
    async with postgres_db.sessions() as session:
        runs = {run.id: run for run in (await session.scalars(select(Run))).all()}
    assert set(runs) == {result.run_id for result in results}
    steps, tool_calls, audit = [await counts(postgres_db, t) for t in ("steps", "tool_calls", "audit_events")]
    for result in results:
        assert stored_result(runs[result.run_id]) == result
        assert steps[result.run_id] == result.steps
        assert tool_calls.get(result.run_id, 0) == result.tool_calls
        assert audit[result.run_id] == 2
    first_finished = min(run.finished_at for run in runs.values())
    assert sum(run.started_at < first_finished for run in runs.values()) > RUNS // 2  # they did overlap
    assert {r.steps for r in results} == {2, 3, 4, 5} and sum(r.retries for r in results) == len(range(0, RUNS, 4))
