"""`parley runs list` at scale: pages of a million runs on PostgreSQL, through the real query code.

Creates a database (migrated with the project's migrations), fills `runs` with a million rows in SQL
(INSERT … SELECT over generate_series: two years of history, 70 % solved, 20 % degraded over nine
reasons, the rest refused or in review, 2 % running or queued; 500 Slack askers with a few asking most,
5 % CLI runs), ANALYZEs it, then times `bot.store.queries.list_runs` — the function `parley runs list`
calls — for filtered first pages and pages deep behind a cursor, each repeated (p50/p99). The pool stays
warm, as in a server process, so after a few calls asyncpg's prepared statements may run PostgreSQL's
generic plans. Prints EXPLAIN ANALYZE of filtered queries and drops the database (unless --keep).

    .venv/bin/python bench/runs_list.py                    # --runs 1000000 --repeat 50
    .venv/bin/python bench/runs_list.py --keep             # keep it; reuse with --database NAME

Target (issue): under 50 ms per filtered page.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import platform
import subprocess
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import asyncpg
from sqlalchemy import Select
from sqlalchemy.dialects.postgresql import asyncpg as asyncpg_dialect

from bot.store import Database, connect
from bot.store.migrate import upgrade
from bot.store.models import Run
from bot.store.queries import RunFilter, encode_cursor, list_runs, list_statement, resolve_run_id
from tests.bot.history.run_fill import TERMINATION_REASON, fill_statement

TARGET_MS = 50.0
PAGE = 50
CHUNK = 250_000
DIALECT = asyncpg_dialect.dialect()
COLUMNS = {
    "id": "md5('bench' || g)",
    "source": "CASE WHEN r3 < 0.05 THEN 'cli' ELSE 'slack' END",
    "workspace_id": "'T0BENCH'",
    "channel_id": "'C' || lpad((g % 120)::text, 4, '0')",
    "thread_ts": "(1700000000 + g)::text || '.000100'",
    # a few askers ask most: U0000 … U0499 with a quadratic skew towards the low numbers
    "asker": "CASE WHEN r3 < 0.05 THEN 'cli:ops' ELSE 'U' || lpad(floor(500 * r3 * r3)::int::text, 4, '0') END",
    "question": "'What happened with ticket ' || g || '? ' || repeat('some context ', (r4 * 12)::int)",
    "status": "status",
    "termination_reason": TERMINATION_REASON,
    "answer": "CASE WHEN status IN ('running', 'queued') THEN NULL "
    "ELSE repeat('an answer [1] ', 10 + (r4 * 40)::int) END",
    "citations": """'[{"marker": "[1]", "tool": "knowledge_lookup", "step": 1, "tool_call_id": "call_1"}]'""",
    "steps": "1 + (r2 * 6)::int",
    "llm_calls": "2 + (r2 * 8)::int",
    "tool_calls": "(r2 * 5)::int",
    "brain": "'openai:bench-model'",
    "config_hash": "'0123456789abcdef'",
    "created_at": "now() - r5 * interval '730 days'",
    "started_at": "now() - r5 * interval '730 days'",
    "finished_at": "CASE WHEN status IN ('running', 'queued') THEN NULL ELSE now() - r5 * interval '730 days' END",
    "duration_ms": "(r2 * 30000)::int",
}


@dataclass(frozen=True)
class Case:
    name: str
    filters: RunFilter
    depth: float | None = None  # page from this far into the filtered list (0.9: behind 90 % of its runs)


def cases(now: datetime) -> list[Case]:
    return [
        Case("no filter, first page", RunFilter()),
        Case("no filter, cursor 90 % deep", RunFilter(), 0.9),
        Case("status degraded (20 %)", RunFilter(statuses=["degraded"])),
        Case("status degraded, cursor 75 % deep", RunFilter(statuses=["degraded"]), 0.75),
        Case("status expired (1 %)", RunFilter(statuses=["expired"])),
        Case("reason gave_up (2 %)", RunFilter(reasons=["gave_up"])),
        Case("reason gave_up, cursor 75 % deep", RunFilter(reasons=["gave_up"]), 0.75),
        Case("asker U0100 (0.1 %)", RunFilter(asker="U0100")),
        Case("asker U0100, cursor 50 % deep", RunFilter(asker="U0100"), 0.5),
        Case("since 7 days", RunFilter(since=now - timedelta(days=7))),
        Case("status refused since 30 days", RunFilter(statuses=["refused"], since=now - timedelta(days=30))),
        Case("status solved + asker U0003", RunFilter(statuses=["solved"], asker="U0003")),
        Case("two statuses expired+rejected", RunFilter(statuses=["expired", "rejected"])),
        Case("two reasons max_steps+run_timeout", RunFilter(reasons=["max_steps", "run_timeout"])),
    ]


@dataclass
class Timing:
    case: str
    rows: int
    ms: list[float]


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    rank = max(1, round(q / 100 * len(ordered) + 0.5))
    return ordered[min(rank, len(ordered)) - 1]


async def admin(server: str, statement: str) -> None:
    connection = await asyncpg.connect(f"postgresql://{server}/postgres")
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


async def fill(dsn: str, runs: int) -> float:
    started = time.perf_counter()
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute("SET synchronous_commit = off")
        await connection.execute("SELECT setseed(0.42)")
        for first in range(1, runs + 1, CHUNK):
            last = min(first + CHUNK - 1, runs)
            await connection.execute(fill_statement(COLUMNS, first, last))
            print(f"  filled {last:,} runs ({time.perf_counter() - started:.0f} s)", flush=True)
        await connection.execute("VACUUM ANALYZE runs")
    finally:
        await connection.close()
    return time.perf_counter() - started


def literal_sql(stmt: Select) -> str:
    return str(stmt.compile(dialect=DIALECT, compile_kwargs={"literal_binds": True}))


async def cursor_for(dsn: str, case: Case) -> str | None:
    if case.depth is None:
        return None
    matching = case.filters.apply(Run.__table__.select().with_only_columns(Run.created_at, Run.id))
    connection = await asyncpg.connect(dsn)
    try:
        count = await connection.fetchval(f"SELECT count(*) FROM ({literal_sql(matching)}) AS matching")
        stmt = matching.order_by(Run.created_at.desc(), Run.id.desc()).offset(int(count * case.depth)).limit(1)
        row = await connection.fetchrow(literal_sql(stmt))
    finally:
        await connection.close()
    if row is None:
        raise SystemExit(f"too few runs match {case.name} to page {case.depth:.0%} deep")
    return encode_cursor(Run(created_at=row["created_at"], id=row["id"]))


async def timed(repeat: int, warmup: int, call: Callable[[], Awaitable[int]]) -> tuple[int, list[float]]:
    rows = 0
    samples = []
    for number in range(warmup + repeat):
        started = time.perf_counter()
        rows = await call()
        if number >= warmup:
            samples.append((time.perf_counter() - started) * 1000)
    return rows, samples


async def measure(db: Database, dsn: str, repeat: int, warmup: int) -> list[Timing]:
    timings = []
    for case in cases(datetime.now(UTC)):
        cursor = await cursor_for(dsn, case)

        async def page(case: Case = case, cursor: str | None = cursor) -> int:
            return len((await list_runs(db, case.filters, limit=PAGE, cursor=cursor)).runs)

        rows, samples = await timed(repeat, warmup, page)
        timings.append(Timing(case.name, rows, samples))
    prefix = md5_prefix(777)

    async def show() -> int:
        return len(await resolve_run_id(db, prefix))

    rows, samples = await timed(repeat, warmup, show)
    timings.append(Timing(f"show: resolve the prefix {prefix}", 1, samples))
    return timings


def md5_prefix(g: int) -> str:
    """The first characters of the id the fill gives run g."""
    return hashlib.md5(f"bench{g}".encode()).hexdigest()[:8]


async def explain(dsn: str, filters: RunFilter, cursor: str | None = None) -> str:
    connection = await asyncpg.connect(dsn)
    try:
        sql = literal_sql(list_statement(filters, limit=PAGE, cursor=cursor))
        lines = await connection.fetch(f"EXPLAIN (ANALYZE, BUFFERS) {sql}")
    finally:
        await connection.close()
    return "\n".join(line[0] for line in lines)


async def explain_union(dsn: str, statuses: Sequence[str]) -> str:
    """The suggested shape for several statuses: one ordered, limited branch per status, merged."""
    columns = "id, source, asker, question, status, termination_reason, steps, tool_calls, created_at, duration_ms"
    branches = " UNION ALL ".join(
        f"(SELECT {columns} FROM runs WHERE status = '{s}' ORDER BY created_at DESC, id DESC LIMIT {PAGE + 1})"
        for s in statuses
    )
    sql = f"SELECT * FROM ({branches}) AS page ORDER BY created_at DESC, id DESC LIMIT {PAGE + 1}"
    connection = await asyncpg.connect(dsn)
    try:
        lines = await connection.fetch(f"EXPLAIN (ANALYZE, BUFFERS) {sql}")
    finally:
        await connection.close()
    return "\n".join(line[0] for line in lines)


def nproc() -> str:
    return subprocess.run(["nproc"], capture_output=True, text=True, check=False).stdout.strip() or "?"


async def run(args: argparse.Namespace) -> str:
    name = args.database or f"parley_bench_runs_{uuid.uuid4().hex[:8]}"
    dsn = f"postgresql://{args.server}/{name}"
    created = args.database is None
    if created:
        await admin(args.server, f'CREATE DATABASE "{name}"')
    db = connect(dsn)
    lines: list[str] = []
    try:
        if created:
            await upgrade(db)
            print(f"database {name}: filling {args.runs:,} runs …", flush=True)
            fill_s = await fill(dsn, args.runs)
            lines.append(f"filled {args.runs:,} runs in {fill_s:.0f} s (INSERT … SELECT generate_series, then ANALYZE)")
        connection = await asyncpg.connect(dsn)
        try:
            total = await connection.fetchval("SELECT count(*) FROM runs")
            version = await connection.fetchval("SHOW server_version")
            size = await connection.fetchval("SELECT pg_size_pretty(pg_total_relation_size('runs'))")
        finally:
            await connection.close()
        print(f"timing {args.repeat} pages per case …", flush=True)
        timings = await measure(db, dsn, args.repeat, args.warmup)
        degraded = await explain(dsn, RunFilter(statuses=["degraded"]))
        two = await explain(dsn, RunFilter(statuses=["expired", "rejected"]))
        union = await explain_union(dsn, ["expired", "rejected"])
    finally:
        await db.aclose()
        if not args.keep and created:
            await admin(args.server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    kept = f"kept: --database {name}" if args.keep or not created else "dropped at the end"
    lines += [
        f"runs list · {total:,} runs ({size} with indexes) · PostgreSQL {version} · python "
        f"{platform.python_version()} · nproc {nproc()} · database {name} ({kept})",
        f"list_runs(limit={PAGE}) through bot.store.queries, {args.repeat} timed calls per case after "
        f"{args.warmup} warm-up calls",
        "",
        f"{'case':<38}{'rows':>6}{'p50 ms':>10}{'p99 ms':>10}{'mean':>10}{'max':>10}  target",
    ]
    for t in timings:
        p50, p99 = percentile(t.ms, 50), percentile(t.ms, 99)
        verdict = "met" if p99 < TARGET_MS else "met at p50" if p50 < TARGET_MS else "NOT met"
        mean = sum(t.ms) / len(t.ms)
        lines.append(f"{t.case:<38}{t.rows:>6}{p50:>10.2f}{p99:>10.2f}{mean:>10.2f}{max(t.ms):>10.2f}  {verdict}")
    lines += [
        "",
        "EXPLAIN (ANALYZE, BUFFERS) — status degraded, first page:",
        degraded,
        "",
        "EXPLAIN (ANALYZE, BUFFERS) — two statuses (expired, rejected), first page, as list_statement builds it:",
        two,
        "",
        "EXPLAIN (ANALYZE, BUFFERS) — the same page as UNION ALL of one ordered branch per status (suggested):",
        union,
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1_000_000, help="runs to create (default 1,000,000)")
    parser.add_argument("--repeat", type=int, default=50, help="timed calls per case (default 50)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed calls per case first (default 3)")
    parser.add_argument("--server", default="postgres@127.0.0.1:5432", help="PostgreSQL user@host:port")
    parser.add_argument("--keep", action="store_true", help="keep the database at the end")
    parser.add_argument("--database", help="use this existing, filled database (kept) instead of creating one")
    args = parser.parse_args(argv)
    if args.runs < 1_000 or args.repeat < 1 or args.warmup < 0:
        parser.error("--runs ≥ 1000, --repeat ≥ 1, --warmup ≥ 0")
    print(asyncio.run(run(args)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
