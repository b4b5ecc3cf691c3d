"""The plans PostgreSQL picks for `parley runs list` and `parley runs show PREFIX`.

50,000 runs (statuses, reasons and askers spread as a team's history would be, six months of
`created_at`) go into the session database's `runs` table, then ANALYZE. Each listing case EXPLAINs exactly
the SQL `bot.store.queries.list_statement` builds — once with the values written in (the plan one
`parley runs list` process gets) and once as a generic plan of the prepared statement (what a long-lived
process gets from asyncpg's statement cache after a few calls): an index walked in order, never a
Seq Scan + Sort. The prefix lookup's SQL is taken as `resolve_run_id` sends it (an engine event) and
EXPLAINed with its parameters.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest
from _pytest.mark.structures import ParameterSet
from sqlalchemy import Select, event
from sqlalchemy.dialects.postgresql import asyncpg as asyncpg_dialect

from bot.store import connect
from bot.store.models import Run
from bot.store.queries import RunFilter, encode_cursor, list_statement, resolve_run_id
from tests.bot.history.run_fill import TERMINATION_REASON, fill_statement
from tests.bot.history.stores import SessionStores

RUNS = 50_000
A_MONTH_AGO = datetime.now(UTC) - timedelta(days=30)
MARK = "plan-fill"  # the brain column of the filled rows: how teardown finds them
DIALECT = asyncpg_dialect.dialect()
# Six months of runs. 70 % solved, 20 % degraded (nine reasons), the rest refused and the review states,
# 2 % still running or queued; 200 Slack askers, a few of them asking most (quadratic skew), and the CLI.
COLUMNS = {
    "id": f"md5('{MARK}' || g)",
    "source": "CASE WHEN r3 < 0.05 THEN 'cli' ELSE 'slack' END",
    "workspace_id": "'T0PLAN'",
    "channel_id": "'C' || (g % 40)",
    "asker": "CASE WHEN r3 < 0.05 THEN 'cli:ops' ELSE 'U' || lpad(floor(200 * r3 * r3)::int::text, 4, '0') END",
    "question": "'How did question ' || g || ' go? ' || repeat('context ', (r4 * 20)::int)",
    "status": "status",
    "termination_reason": TERMINATION_REASON,
    "answer": "repeat('answer ', 20 + (r4 * 80)::int)",
    "steps": "1 + (r2 * 6)::int",
    "llm_calls": "2 + (r2 * 8)::int",
    "tool_calls": "(r2 * 5)::int",
    "brain": f"'{MARK}'",
    "created_at": "now() - r5 * interval '180 days' - g * interval '1 millisecond'",
    "duration_ms": "(r2 * 30000)::int",
}


@dataclass(frozen=True)
class Case:
    name: str
    filters: RunFilter
    index: str
    cursor_at: int | None = None  # page from the run at this offset of the filtered list


CASES: list[Any] = [
    Case("status", RunFilter(statuses=["degraded"]), "ix_runs_status_created"),
    Case("rare status", RunFilter(statuses=["expired"]), "ix_runs_status_created"),
    Case("reason", RunFilter(reasons=["gave_up"]), "ix_runs_reason_created"),
    Case("asker", RunFilter(asker="U0050"), "ix_runs_asker_created"),
    Case("since", RunFilter(since=A_MONTH_AGO), "ix_runs_created"),
    Case("status since", RunFilter(statuses=["refused"], since=A_MONTH_AGO), "ix_runs_status_created"),
    Case("no filter", RunFilter(), "ix_runs_created"),
    Case("deep cursor", RunFilter(), "ix_runs_created", cursor_at=40_000),
    Case("deep cursor, status", RunFilter(statuses=["degraded"]), "ix_runs_status_created", cursor_at=8_000),
]
# Several values: one ordered branch per value, merged (Merge Append), each on its own index.
CASES += [
    Case("two rare statuses", RunFilter(statuses=["expired", "rejected"]), "ix_runs_status_created"),
    Case("two reasons", RunFilter(reasons=["max_steps", "run_timeout"]), "ix_runs_reason_created"),
]


Plans = dict[tuple[str, bool], dict[str, Any]]
PREFIX_CASE = ("show by prefix", False)


@pytest.fixture(scope="module")
def plans(session_stores: SessionStores) -> Plans:
    """Every case's plan, custom and generic, on the session database with 50,000 more runs (then removed)."""
    return asyncio.run(_fill_and_explain(session_stores.postgres_url))


async def _fill_and_explain(dsn: str) -> Plans:
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute("SELECT setseed(0.42)")
        await connection.execute(fill_statement(COLUMNS, 1, RUNS))
        await connection.execute("ANALYZE runs")
        try:
            plans: Plans = {}
            for case in (c.values[0] if isinstance(c, ParameterSet) else c for c in CASES):
                stmt = list_statement(case.filters, limit=50, cursor=await _cursor(connection, case))
                for generic in (False, True):
                    plans[case.name, generic] = await explain(connection, stmt, generic=generic)
            plans[PREFIX_CASE] = await _prefix_plan(dsn, connection)
            return plans
        finally:
            await connection.execute(f"DELETE FROM runs WHERE brain = '{MARK}'")
            await connection.execute("ANALYZE runs")
    finally:
        await connection.close()


async def _cursor(connection: asyncpg.Connection, case: Case) -> str | None:
    if case.cursor_at is None:
        return None
    stmt = case.filters.apply(Run.__table__.select().with_only_columns(Run.created_at, Run.id))
    stmt = stmt.order_by(Run.created_at.desc(), Run.id.desc()).offset(case.cursor_at).limit(1)
    row = await connection.fetchrow(_literal_sql(stmt))
    assert row is not None, f"fewer than {case.cursor_at} runs match {case.name}"
    return encode_cursor(Run(created_at=row["created_at"], id=row["id"]))


async def _prefix_plan(dsn: str, connection: asyncpg.Connection) -> dict[str, Any]:
    """The plan of the prefix query `resolve_run_id` sends for 8 characters of a filled run's id."""
    run_id = hashlib.md5(f"{MARK}777".encode()).hexdigest()
    sent: list[tuple[str, Any]] = []

    def capture(_conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any, _many: bool) -> None:
        if "runs.id >=" in statement:  # the prefix lookup (the exact-id lookup before it is a plain `=`)
            sent.append((statement, parameters))

    db = connect(dsn)
    event.listen(db.engine.sync_engine, "before_cursor_execute", capture)
    try:
        assert await resolve_run_id(db, run_id[:8]) == run_id
    finally:
        await db.aclose()
    [(statement, parameters)] = sent
    document = await connection.fetchval(f"EXPLAIN (FORMAT JSON) {statement}", *parameters)
    return json.loads(document)[0]["Plan"]


def _literal_sql(stmt: Select) -> str:
    return str(stmt.compile(dialect=DIALECT, compile_kwargs={"literal_binds": True}))


def _literal(value: Any) -> str:
    if isinstance(value, datetime):
        return f"'{value.isoformat()}'"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return str(int(value))


async def explain(connection: asyncpg.Connection, stmt: Select, *, generic: bool) -> dict[str, Any]:
    """The plan's root node: for the SQL with its values written in, or as a prepared statement's generic plan."""
    if not generic:
        document = await connection.fetchval(f"EXPLAIN (FORMAT JSON) {_literal_sql(stmt)}")
    else:
        compiled = stmt.compile(dialect=DIALECT, compile_kwargs={"render_postcompile": True})
        values = ", ".join(_literal(compiled.params[name]) for name in compiled.positiontup or [])
        await connection.execute(f"PREPARE listing AS {compiled.string}")
        try:
            await connection.execute("SET plan_cache_mode = force_generic_plan")
            document = await connection.fetchval(f"EXPLAIN (FORMAT JSON) EXECUTE listing({values})")
        finally:
            await connection.execute("DEALLOCATE listing")
            await connection.execute("RESET plan_cache_mode")
    return json.loads(document)[0]["Plan"]


def nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from nodes(child)


def describe(plan: dict[str, Any]) -> str:
    """`Limit > Index Scan using ix_runs_created`: the plan's nodes, top down."""
    return " > ".join(n["Node Type"] + (f" using {n['Index Name']}" if "Index Name" in n else "") for n in nodes(plan))


@pytest.mark.parametrize("generic", [False, True], ids=["custom", "generic"])
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_list_statement_walks_its_index_in_order(plans: Plans, case: Case, generic: bool) -> None:
    plan = plans[case.name, generic]

    scans = [(n["Node Type"], n.get("Index Name")) for n in nodes(plan) if n["Node Type"].endswith("Scan")]
    assert scans and all(scan == ("Index Scan", case.index) for scan in scans), describe(plan)
    assert not any("Sort" in n["Node Type"] for n in nodes(plan)), describe(plan)
    assert plan["Node Type"] == "Limit"
    if case.cursor_at is not None:
        [scan] = [n for n in nodes(plan) if n["Node Type"] == "Index Scan"]
        assert "ROW(created_at, (id)::text) < ROW(" in scan["Index Cond"], scan["Index Cond"]  # not a Filter


def test_show_prefix_lookup_is_an_index_range(plans: Plans) -> None:
    plan = plans[PREFIX_CASE]

    conditions = [n.get("Index Cond", "") for n in nodes(plan)]
    assert any("id" in condition for condition in conditions), describe(plan)
