"""The store as `parley` meets it in a separate process: a database that is down, empty, or not configured at
all (the embedded default), and a process killed in the middle of a run."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import pytest

from bot.store import Database, connect
from bot.store.migrate import current_revision, head_revision
from bot.store.queries import load_trace
from tests.agent.toolbox import ScriptedTool, make_agent, replay
from tests.bot.store.postgres import MakeDatabase, pg_url_of
from tests.bot.store.process import DEMO_A, ZEPHYR, embedded_database, one_line, parley, start_parley
from tests.bot.store.recording import fetch, poll, record

pytestmark = pytest.mark.slow  # starts `parley` processes: `pytest -m "not slow"` leaves them out

EXIT_CONFIG = 2
PASSWORD = "s3cret-pw"
DOWN_URL = f"postgresql://parley:{PASSWORD}@127.0.0.1:1/parley"  # port 1: nothing listens, refused at once
ASK_DEMO_A = ("ask", ZEPHYR, "--replay", str(DEMO_A))
SLOW_WEATHER_CONFIG = """\
done: {planner: rules}
critique: {llm: false}
tools:
  - builtin: calculator
  - builtin: get_weather
    timeout_s: 60
    options: {latency_s: 30}
"""
CALCULATOR_THEN_WEATHER = """\
decisions:
  - {thought: "First the arithmetic.", tool: calculator, args: {expression: "47 * 12"}}
  - {thought: "Now the weather, from a slow provider.", tool: get_weather, args: {city: Shanghai}}
  - {final: "47 × 12 = 564 [1], and Shanghai is 28°C [2]."}
"""


async def table_names(db: Database) -> set[str]:
    rows = await fetch(db, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    return {row["tablename"] for row in rows}


# --- a database that cannot be used -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "args", [ASK_DEMO_A, ("runs", "list"), ("db", "current")], ids=["ask", "runs-list", "db-current"]
)
def test_cli_with_the_database_down_exits_2_naming_the_url_with_its_password_masked(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    done = parley(*args, home=tmp_path, env={"PARLEY_DATABASE_URL": DOWN_URL})

    assert done.returncode == EXIT_CONFIG and done.stdout == ""
    line = one_line(done.stderr)
    assert "cannot reach the database" in line and "parley:***@127.0.0.1:1/parley" in line
    assert PASSWORD not in done.stderr
    assert not embedded_database(tmp_path).exists()  # no quiet fallback to the embedded default


@pytest.mark.parametrize("args", [ASK_DEMO_A, ("runs", "list")], ids=["ask", "runs-list"])
async def test_cli_with_an_empty_database_exits_2_naming_parley_db_upgrade(
    tmp_path: Path, make_pg_database: MakeDatabase, args: tuple[str, ...]
) -> None:
    name = await make_pg_database()

    done = await asyncio.to_thread(parley, *args, home=tmp_path, env={"PARLEY_DATABASE_URL": pg_url_of(name)})

    assert done.returncode == EXIT_CONFIG and done.stdout == ""
    line = one_line(done.stderr)
    assert "`parley db upgrade`" in line and f"/{name} has no Parley tables" in line
    db = connect(pg_url_of(name))
    try:
        assert await table_names(db) == set()  # an explicit database is never migrated behind one's back
    finally:
        await db.aclose()


async def test_cli_db_upgrade_makes_an_empty_database_ready_for_runs(
    tmp_path: Path, make_pg_database: MakeDatabase
) -> None:
    env = {"PARLEY_DATABASE_URL": pg_url_of(await make_pg_database())}

    upgraded = await asyncio.to_thread(parley, "db", "upgrade", home=tmp_path, env=env)
    asked = await asyncio.to_thread(parley, "ask", ZEPHYR, "--replay", str(DEMO_A), "--json", home=tmp_path, env=env)
    listed = await asyncio.to_thread(parley, "runs", "list", "--json", home=tmp_path, env=env)

    assert upgraded.returncode == 0 and f"schema at {head_revision()} (up to date)" in upgraded.stdout
    assert asked.returncode == 0, asked.stderr
    result = json.loads(asked.stdout)
    [run] = json.loads(listed.stdout)["runs"]
    assert (run["run_id"], run["status"], run["steps"]) == (result["run_id"], "solved", result["steps"])


async def test_cli_embedded_default_creates_its_sqlite_file_and_records_runs_there(tmp_path: Path) -> None:
    asked = await asyncio.to_thread(parley, "ask", ZEPHYR, "--replay", str(DEMO_A), "--json", home=tmp_path)
    listed = await asyncio.to_thread(parley, "runs", "list", "--json", home=tmp_path)

    assert asked.returncode == 0, asked.stderr
    result = json.loads(asked.stdout)
    assert result["status"] == "solved"
    assert [run["run_id"] for run in json.loads(listed.stdout)["runs"]] == [result["run_id"]]
    path = embedded_database(tmp_path)
    db = connect(f"sqlite:///{path}")
    try:
        assert await current_revision(db) == head_revision()
        trace = await load_trace(db, result["run_id"])
    finally:
        await db.aclose()
    assert (trace.run.status, len(trace.steps), len(trace.tool_calls)) == ("solved", 5, 4)


# --- a process killed mid-run -------------------------------------------------------------------------------


async def test_cli_killed_mid_run_leaves_the_run_running_with_its_steps_so_far(
    postgres_db: Database, pg_url: str, tmp_path: Path
) -> None:
    config, script = tmp_path / "parley.yaml", tmp_path / "script.yaml"
    config.write_text(SLOW_WEATHER_CONFIG, encoding="utf-8")
    script.write_text(CALCULATOR_THEN_WEATHER, encoding="utf-8")
    question = "What is 47 times 12, and how warm is Shanghai?"
    args = ("ask", question, "--replay", str(script), "--config", str(config), "--quiet")
    process = start_parley(*args, home=tmp_path, env={"PARLEY_DATABASE_URL": pg_url})

    async def inside_the_slow_call() -> bool:
        assert process.poll() is None, (tmp_path / "parley.err").read_text(encoding="utf-8")
        calls = await fetch(postgres_db, "SELECT step FROM tool_calls")
        steps = await fetch(postgres_db, "SELECT step FROM steps")
        return [c["step"] for c in calls] == [1] and 2 in {s["step"] for s in steps}

    try:
        # Step 2's row is written just before its 30 s weather call starts: the kill lands inside that call.
        await poll(inside_the_slow_call, timeout_s=30, what="step 1's tool call recorded, step 2 decided")
    finally:
        process.kill()
        await asyncio.to_thread(process.wait, 10)

    assert process.returncode == -signal.SIGKILL
    [run] = await fetch(postgres_db, "SELECT id, status, termination_reason, answer, finished_at FROM runs")
    assert run | {"id": None} == {
        "id": None,
        "status": "running",
        "termination_reason": None,
        "answer": None,
        "finished_at": None,
    }
    trace = await load_trace(postgres_db, run["id"])
    assert trace.run.question == question
    assert [(s.step, s.decision) for s in trace.steps] == [(1, "tool_calls"), (2, "tool_calls")]
    assert trace.steps[1].requested_calls[0]["name"] == "get_weather"
    [call] = trace.tool_calls
    assert (call.step, call.tool, call.ok, call.arguments) == (1, "calculator", True, {"expression": "47 * 12"})
    assert "564" in call.observation
    assert [(a.action, a.from_status, a.to_status) for a in trace.audit] == [("run_started", None, "running")]
    assert trace.escalations == [] and {v.kind for v in trace.verdicts} <= {"plan", "done_tick"}
    # Nothing was left locked or half-written: the next run records over the same tables as usual.
    agent, _ = make_agent(
        replay([{"tool": "calculator", "args": {}}, {"give_up": "x"}]), [ScriptedTool("calculator", [1])]
    )
    result, _ = await record(agent, postgres_db, "and now?")
    assert (await load_trace(postgres_db, result.run_id)).run.status == "degraded"
