"""What crash-safe runs cost per step: the store's recorder alone, then with the run's journal (issue 19).

The same instant runs as `store_overhead.py` (the brain and the tool answer at once; their own time is measured
and subtracted), on a fresh PostgreSQL database, through two set-ups interleaved round by round:

- `store`: `StoreRecorder`, as before crash-safe runs;
- `store+journal`: the same, and the run's `RunJournal`: a checkpoint (the run's `RunSnapshot`, one upsert,
  written in the background) at every step boundary and each tool call's intent before it runs — written by the
  recorder in the step's own transaction, which the journal then confirms — both conditional on the run being
  held by this process.

A "step" sample is the time between two consecutive `decide` calls of one run. Also shown: each journal write
on its own, the snapshot's size as the run grows, and the CPU time per step of this process and of its
PostgreSQL backends (read from /proc when the server is on this machine): on a shared machine the wall-clock
figures move with the load, the CPU ones much less.

    .venv/bin/python bench/journal_overhead.py --runs 40 --steps 20

Target (issue 19): saving state at each step adds at most 2 ms p50 per step on PostgreSQL.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from store_overhead import Bench, create_database, drop_database, nproc, percentile  # bench/, beside this script

from agent import CallIntent, RunSnapshot
from bot.core.journal import RunJournal
from bot.core.owner import RunOwner
from bot.store import Database, RunOrigin, StoreRecorder, connect
from bot.store.migrate import upgrade

TARGET_MS_PER_STEP = 2.0
QUESTION = "Add up a series of numbers, one step at a time."
MODES = ("store", "store+journal")


@dataclass
class Figures:
    step_ms: list[float] = field(default_factory=list)
    checkpoint_ms: list[float] = field(default_factory=list)
    intent_ms: list[float] = field(default_factory=list)
    snapshot_bytes: list[int] = field(default_factory=list)
    cpu_ms: float = 0.0  # this process, over the measured runs
    server_cpu_ms: float | None = 0.0  # its PostgreSQL backends (None: not readable here)
    steps: int = 0


class TimedJournal:
    """The run's journal, each write timed."""

    def __init__(self, inner: RunJournal, figures: Figures | None) -> None:
        self._inner = inner
        self._figures = figures

    async def checkpoint(self, snapshot: RunSnapshot) -> None:
        started = time.perf_counter()
        await self._inner.checkpoint(snapshot)
        if self._figures is not None:
            self._figures.checkpoint_ms.append((time.perf_counter() - started) * 1000)
            self._figures.snapshot_bytes.append(len(json.dumps(snapshot.model_dump(mode="json"))))

    async def intend(self, step: int, calls: Sequence[CallIntent]) -> None:
        started = time.perf_counter()
        await self._inner.intend(step, calls)
        if self._figures is not None:
            self._figures.intent_ms.append((time.perf_counter() - started) * 1000)


async def backend_cpu_ms(db: Database) -> float | None:
    """CPU time so far of the database's backends serving the bench, from /proc; None when not readable."""
    async with db.engine.connect() as conn:
        pids = (
            await conn.exec_driver_sql("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")
        ).scalars()
    return sum_cpu_ms(list(pids))


def sum_cpu_ms(pids: list[int]) -> float | None:
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        total += (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")  # utime + stime
    return total


async def one_run(
    bench: Bench,
    db: Database,
    run_id: str,
    recorder: StoreRecorder,
    journal: TimedJournal | None,
    figures: Figures | None,
) -> None:
    bench.watch.reset()
    bench.brain.start_run()
    server_before = await backend_cpu_ms(db) if figures is not None else None
    cpu_before = time.process_time()
    result = await bench.agent.run(QUESTION, run_id=run_id, recorder=recorder, journal=journal)
    cpu_ms = (time.process_time() - cpu_before) * 1000
    if result.steps != bench.steps:
        raise SystemExit(f"a run ended {result.termination_reason.value} after {result.steps} steps")
    if figures is None:
        return
    server_after = await backend_cpu_ms(db)
    figures.cpu_ms += cpu_ms
    figures.steps += result.steps
    if figures.server_cpu_ms is not None and server_before is not None and server_after is not None:
        figures.server_cpu_ms += server_after - server_before
    else:
        figures.server_cpu_ms = None
    at, outside = bench.watch.decide_at, bench.watch.outside_at_decide
    for i in range(1, len(at)):
        figures.step_ms.append((at[i] - at[i - 1] - (outside[i] - outside[i - 1])) * 1000)


async def measure(args: argparse.Namespace) -> tuple[dict[str, Figures], str]:
    bench = Bench.build(args.steps)
    figures = {mode: Figures() for mode in MODES}
    name, url = await create_database(args.server, None)
    db = connect(url)
    try:
        async with db.engine.connect() as conn:
            version = (await conn.exec_driver_sql("SHOW server_version")).scalar_one()
        await upgrade(db)
        owner = RunOwner(db)
        async with owner.holding():
            origin = RunOrigin("cli", "cli:bench")
            recorder = StoreRecorder(db, origin, owner=owner.id)
            for number in range(args.warmup + args.runs):
                measured = number >= args.warmup
                for mode in MODES:
                    shown = figures[mode] if measured else None
                    run_id = uuid.uuid4().hex
                    if mode == "store+journal":  # as the service runs a journaled run: its recorder knows its journal
                        inner = RunJournal(db, run_id, owner)
                        journaled = StoreRecorder(db, origin, owner=owner.id, writer=inner.writer)
                        await one_run(bench, db, run_id, journaled, TimedJournal(inner, shown), shown)
                    else:
                        await one_run(bench, db, run_id, recorder, None, shown)
    finally:
        await db.aclose()
        await drop_database(args.server, name)
    return figures, str(version)


def stats(values: Sequence[float]) -> str:
    mean = sum(values) / len(values)
    cells = (mean, percentile(values, 50), percentile(values, 99), max(values))
    return "".join(f"{cell:>10.3f}" for cell in cells) + f"{len(values):>8}"


def report(figures: dict[str, Figures], args: argparse.Namespace, version: str) -> str:
    lines = [
        f"journal overhead · {args.runs} runs × {args.steps} steps per set-up · instant brain and tool · interleaved",
        f"python {platform.python_version()} · PostgreSQL {version} · nproc {nproc()}",
        "",
        f"{'per step (ms)':<28}{'mean':>10}{'p50':>10}{'p99':>10}{'max':>10}{'n':>8}",
    ]
    lines += [f"{mode:<28}{stats(figures[mode].step_ms)}" for mode in MODES]
    journal = figures["store+journal"]
    lines += [
        f"{'checkpoint write':<28}{stats(journal.checkpoint_ms)}",
        f"{'intent (journal.intend)':<28}{stats(journal.intent_ms)}",
        "",
        f"snapshot size (bytes): first {journal.snapshot_bytes[0]}, largest {max(journal.snapshot_bytes)}",
        "",
        f"{'CPU per step (ms)':<28}{'process':>10}{'postgres':>10}",
    ]
    for mode in MODES:
        shown = figures[mode]
        server = "n/a" if shown.server_cpu_ms is None else f"{shown.server_cpu_ms / shown.steps:.3f}"
        lines.append(f"{mode:<28}{shown.cpu_ms / shown.steps:>10.3f}{server:>10}")
    lines.append("")
    added = percentile(journal.step_ms, 50) - percentile(figures["store"].step_ms, 50)
    verdict = "met" if added <= TARGET_MS_PER_STEP else "NOT met"
    lines.append(f"target: at most {TARGET_MS_PER_STEP:g} ms added per step at p50: {added:.3f} ms: {verdict}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40, help="measured runs per set-up (default 40)")
    parser.add_argument("--steps", type=int, default=20, help="steps per run, 2..100 (default 20)")
    parser.add_argument("--warmup", type=int, default=3, help="rounds before measuring (default 3)")
    parser.add_argument("--server", default="postgres@127.0.0.1:5432", help="PostgreSQL user@host:port")
    args = parser.parse_args(argv)
    figures, version = asyncio.run(measure(args))
    print(report(figures, args, version))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
