"""What recording costs per step: the engine with the in-memory recorder, then with the store.

The brain and the tool answer at once (no I/O, no sleeps; their own time is measured and subtracted), so
a step is the engine's work plus, with `StoreRecorder`, the transactions that write its events (the step's
decision, its tool call, a Done tick). The same runs go through three recorders, interleaved round by
round so a noisy neighbour hurts them all alike:

- `memory`: `MemoryRecorder`, a fresh one per run (what the engine costs without a store);
- `postgresql`: `StoreRecorder` on a fresh database created (and dropped) by this script, migrated with
  the project's migrations, on the server at --server;
- `sqlite`: `StoreRecorder` on a fresh SQLite file in a temporary directory (for reference).

A "step" sample is the time between two consecutive `decide` calls of one run.

    .venv/bin/python bench/store_overhead.py --runs 60 --steps 20

Target (issue): under 5 ms per step with the store, its writes included.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import subprocess
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
from instant import InstantBrain, Stopwatch, add_tool  # bench/instant.py, beside this script
from sqlalchemy import func, select

from agent import (
    Agent,
    AgentConfig,
    Limits,
    MemoryRecorder,
    Recorder,
    RunStatus,
    TraceEvent,
)
from bot.store import Database, RunOrigin, StoreRecorder, connect
from bot.store.migrate import upgrade
from bot.store.models import Run, Step, ToolCallRecord

TARGET_MS_PER_STEP = 5.0
QUESTION = "Add up a series of numbers, one step at a time."
MODES = ("memory", "postgresql", "sqlite")


@dataclass
class Figures:
    step_ms: list[float] = field(default_factory=list)
    run_ms: list[float] = field(default_factory=list)
    run_ids: list[str] = field(default_factory=list)
    write_ms: dict[str, list[float]] = field(default_factory=dict)  # per event kind, measured runs only


class TimedRecorder:
    """Wraps a recorder and times each `record` call by event kind (one transaction each for the store)."""

    def __init__(self, inner: Recorder) -> None:
        self._inner = inner
        self.figures: Figures | None = None

    async def record(self, event: TraceEvent) -> None:
        started = time.perf_counter()
        try:
            await self._inner.record(event)
        finally:
            if self.figures is not None:
                elapsed_ms = (time.perf_counter() - started) * 1000
                self.figures.write_ms.setdefault(event.kind, []).append(elapsed_ms)


@dataclass
class Bench:
    watch: Stopwatch
    brain: InstantBrain
    agent: Agent
    steps: int

    @classmethod
    def build(cls, steps: int) -> Bench:
        watch = Stopwatch()
        brain = InstantBrain(steps, watch)
        limits = Limits(
            max_steps=steps,
            repeat_threshold=1000,
            repeat_error_threshold=1000,
            alternation_cycles=1000,
            no_progress_steps=1000,
            run_timeout_s=600,
        )
        return cls(watch, brain, Agent(brain, [add_tool(watch)], AgentConfig(limits=limits)), steps)

    async def one_run(self, recorder: Recorder, figures: Figures | None) -> None:
        self.watch.reset()
        self.brain.start_run()
        started = time.perf_counter()
        result = await self.agent.run(QUESTION, recorder=recorder)
        wall_s = time.perf_counter() - started
        if result.status is not RunStatus.SOLVED or result.steps != self.steps:
            raise SystemExit(
                f"a run ended {result.status.value} ({result.termination_reason.value}) after {result.steps} "
                f"steps; the benchmark needs {self.steps} solved steps"
            )
        if figures is None:
            return
        figures.run_ms.append((wall_s - self.watch.outside_s) * 1000)
        figures.run_ids.append(result.run_id)
        at, outside = self.watch.decide_at, self.watch.outside_at_decide
        for i in range(1, len(at)):
            figures.step_ms.append((at[i] - at[i - 1] - (outside[i] - outside[i - 1])) * 1000)


async def create_database(server: str, synchronous_commit: str | None) -> tuple[str, str]:
    name = f"parley_bench_store_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(f"postgresql://{server}/postgres")
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        if synchronous_commit:  # for diagnosis only: how much of a write is waiting for the WAL flush
            await admin.execute(f'ALTER DATABASE "{name}" SET synchronous_commit = {synchronous_commit}')
    finally:
        await admin.close()
    return name, f"postgresql://{server}/{name}"


async def drop_database(server: str, name: str) -> None:
    admin = await asyncpg.connect(f"postgresql://{server}/postgres")
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


async def check_recorded(db: Database, figures: Figures, steps: int) -> str:
    """The store holds every measured run, solved, with all its steps and tool calls."""
    ids = figures.run_ids
    async with db.sessions() as session:
        solved = await session.scalar(select(func.count()).where(Run.id.in_(ids), Run.status == "solved"))
        step_rows = await session.scalar(select(func.count()).where(Step.run_id.in_(ids)))
        call_rows = await session.scalar(select(func.count()).where(ToolCallRecord.run_id.in_(ids)))
    expected = (len(ids), len(ids) * steps, len(ids) * (steps - 1))
    if (solved, step_rows, call_rows) != expected:
        raise SystemExit(f"{db.shown_url}: recorded (runs, steps, tool calls) {(solved, step_rows, call_rows)}")
    return f"{solved} runs, {step_rows} steps, {call_rows} tool calls recorded"


async def measure(args: argparse.Namespace) -> tuple[dict[str, Figures], list[str], str]:
    runs, steps, warmup, server = args.runs, args.steps, args.warmup, args.server
    bench = Bench.build(steps)
    figures = {mode: Figures() for mode in MODES}
    name, url = await create_database(server, args.synchronous_commit)
    with tempfile.TemporaryDirectory(prefix="parley-bench-") as directory:
        stores = {"postgresql": connect(url), "sqlite": connect(f"sqlite:///{Path(directory) / 'bench.db'}")}
        try:
            async with stores["postgresql"].engine.connect() as conn:
                version = (await conn.exec_driver_sql("SHOW server_version")).scalar_one()
                commit = (await conn.exec_driver_sql("SHOW synchronous_commit")).scalar_one()
                version = f"{version} · synchronous_commit={commit}"
            for db in stores.values():
                await upgrade(db)
            recorders = {
                mode: TimedRecorder(StoreRecorder(db, RunOrigin("cli", "cli:bench"))) for mode, db in stores.items()
            }
            for number in range(warmup + runs):
                measured = number >= warmup
                for mode in MODES:
                    recorder = recorders.get(mode) or TimedRecorder(MemoryRecorder())
                    recorder.figures = figures[mode] if measured else None
                    await bench.one_run(recorder, figures[mode] if measured else None)
            checks = [f"{mode}: {await check_recorded(db, figures[mode], steps)}" for mode, db in stores.items()]
        finally:
            for db in stores.values():
                await db.aclose()
            await drop_database(server, name)
    return figures, checks, str(version)


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    rank = max(1, round(q / 100 * len(ordered) + 0.5))
    return ordered[min(rank, len(ordered)) - 1]


def stats(values: Sequence[float]) -> tuple[float, float, float, float]:
    return sum(values) / len(values), percentile(values, 50), percentile(values, 99), max(values)


def row(label: str, values: Sequence[float]) -> str:
    return f"{label:<32}" + "".join(f"{cell:>10.3f}" for cell in stats(values)) + f"{len(values):>8}"


def report(figures: dict[str, Figures], runs: int, steps: int, checks: list[str], version: str) -> str:
    base = stats(figures["memory"].step_ms)
    lines = [
        f"store overhead · {runs} runs × {steps} steps per recorder · instant brain and tool · interleaved",
        f"python {platform.python_version()} · PostgreSQL {version} · nproc {nproc()}",
        "",
        f"{'per step (ms)':<32}{'mean':>10}{'p50':>10}{'p99':>10}{'max':>10}{'n':>8}",
    ]
    lines += [row(mode, figures[mode].step_ms) for mode in MODES]
    lines += ["", f"{'per run, engine (ms)':<32}{'mean':>10}{'p50':>10}{'p99':>10}{'max':>10}{'n':>8}"]
    lines += [row(mode, figures[mode].run_ms) for mode in MODES]
    lines += ["", f"{'store minus memory (ms)':<32}{'mean':>10}{'p50':>10}{'p99':>10}"]
    for mode in MODES[1:]:
        mean, p50, p99, _ = stats(figures[mode].step_ms)
        lines.append(f"{mode:<32}{mean - base[0]:>10.3f}{p50 - base[1]:>10.3f}{p99 - base[2]:>10.3f}")
    lines += ["", f"{'one write (ms), by event':<32}{'mean':>10}{'p50':>10}{'p99':>10}{'max':>10}{'n':>8}"]
    for mode in MODES[1:]:
        for kind, values in sorted(figures[mode].write_ms.items()):
            lines.append(row(f"{mode} {kind}", values))
    lines.append("")
    for mode in MODES[1:]:
        mean, p50, p99, _ = stats(figures[mode].step_ms)
        verdict = (
            "met" if p99 < TARGET_MS_PER_STEP else ("met at p50, NOT at p99" if p50 < TARGET_MS_PER_STEP else "NOT met")
        )
        lines.append(
            f"target < {TARGET_MS_PER_STEP:g} ms per step with writes, {mode}: p50 {p50:.2f}, p99 {p99:.2f}: {verdict}"
        )
    lines += ["", *checks]
    return "\n".join(lines)


def nproc() -> str:
    return subprocess.run(["nproc"], capture_output=True, text=True, check=False).stdout.strip() or "?"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=60, help="measured runs per recorder (default 60)")
    parser.add_argument("--steps", type=int, default=20, help="steps per run, 2..100 (default 20)")
    parser.add_argument("--warmup", type=int, default=3, help="rounds before measuring (default 3)")
    parser.add_argument("--server", default="postgres@127.0.0.1:5432", help="PostgreSQL user@host:port")
    parser.add_argument(
        "--synchronous-commit",
        choices=("on", "off"),
        help="set it on the bench database (diagnosis: the share of each write spent on the WAL flush)",
    )
    args = parser.parse_args(argv)
    if args.runs < 1 or not 2 <= args.steps <= 100 or args.warmup < 0:
        parser.error("--runs ≥ 1, 2 ≤ --steps ≤ 100 (limits.max_steps), --warmup ≥ 0")
    figures, checks, version = asyncio.run(measure(args))
    print(report(figures, args.runs, args.steps, checks, version))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
