"""The engine's own overhead per step: everything a run costs except waiting for the LLM and the tools.

The brain and the tool answer instantly (no I/O, no sleeps), so what a run takes is the loop itself:
building the prompt's tool list, grading and serialising observations, citations, the Definition of Done,
the repeat brakes, the closing checks, and writing every trace event to the in-memory recorder. The time
the brain and the tool spend inside their own code is measured and subtracted.

A "step" sample is the time between two consecutive `decide` calls of the same run (the engine's work for
one tool step); the per-run figure adds the plan, the final answer's closing checks and the result.

    .venv/bin/python bench/engine_overhead.py --runs 200 --steps 50 [--payload-kb 20]
    .venv/bin/python bench/engine_overhead.py --sizes            # 200 B, 20 KiB and 100 KiB results, one table

Targets (issues): under 2 ms per step; at most 5 ms per step with 100 KiB tool results.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import resource
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from instant import InstantBrain, Stopwatch, add_tool  # bench/instant.py, beside this script

from agent import (
    Agent,
    AgentConfig,
    Limits,
    MemoryRecorder,
    RunStatus,
)

TARGET_MS_PER_STEP = 2.0
QUESTION = "Add up a long series of numbers, one step at a time."


@dataclass
class Figures:
    step_ms: list[float] = field(default_factory=list)
    run_ms: list[float] = field(default_factory=list)
    wall_ms: list[float] = field(default_factory=list)
    events: int = 0


async def measure(runs: int, steps: int, warmup: int, payload_bytes: int) -> Figures:
    watch = Stopwatch()
    brain = InstantBrain(steps, watch)
    limits = Limits(
        max_steps=steps,
        repeat_threshold=1000,
        alternation_cycles=1000,
        no_progress_steps=1000,
        run_timeout_s=600,
    )
    agent = Agent(brain, [add_tool(watch, payload_bytes=payload_bytes)], AgentConfig(limits=limits))
    figures = Figures()
    for number in range(warmup + runs):
        watch.reset()
        brain.start_run()
        recorder = MemoryRecorder()  # one per run, as the CLI has: the trace does not pile up across runs
        started = time.perf_counter()
        result = await agent.run(QUESTION, recorder=recorder)
        wall_s = time.perf_counter() - started
        if result.status is not RunStatus.SOLVED or result.steps != steps:
            raise SystemExit(
                f"run {number} ended {result.status.value} ({result.termination_reason.value}) after "
                f"{result.steps} steps; the benchmark needs {steps} solved steps"
            )
        if number < warmup:
            continue
        figures.wall_ms.append(wall_s * 1000)
        figures.run_ms.append((wall_s - watch.outside_s) * 1000)
        figures.events += len(recorder.events)
        at, outside = watch.decide_at, watch.outside_at_decide
        for i in range(1, len(at)):
            figures.step_ms.append((at[i] - at[i - 1] - (outside[i] - outside[i - 1])) * 1000)
    return figures


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    rank = max(1, round(q / 100 * len(ordered) + 0.5))
    return ordered[min(rank, len(ordered)) - 1]


def peak_rss_mib() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 / 1024 if sys.platform == "darwin" else peak / 1024  # bytes on macOS, KiB on Linux


def row(label: str, values: Sequence[float]) -> str:
    mean = sum(values) / len(values)
    cells = [mean, percentile(values, 50), percentile(values, 99), max(values)]
    return f"{label:<24}" + "".join(f"{cell:>10.3f}" for cell in cells) + f"{len(values):>10}"


def report(figures: Figures, runs: int, steps: int, payload_kb: int) -> str:
    step_mean = sum(figures.step_ms) / len(figures.step_ms)
    amortised = sum(figures.run_ms) / len(figures.run_ms) / steps  # with the plan and the closing checks

    def verdict(ms: float) -> str:
        return f"{ms:.3f} ms, {'met' if ms < TARGET_MS_PER_STEP else 'NOT met'}"

    lines = [
        f"engine overhead · {runs} runs × {steps} steps ({steps - 1} tool steps + a final) · instant brain and tool",
        f"tool result: {payload_kb} KiB of JSON rows" if payload_kb else "tool result: a few bytes",
        f"python {platform.python_version()} · {platform.machine()} · {platform.system()}",
        "",
        f"{'':<24}{'mean':>10}{'p50':>10}{'p99':>10}{'max':>10}{'n':>10}",
        row("per tool step (ms)", figures.step_ms),
        row("per run, engine (ms)", figures.run_ms),
        row("per run, wall (ms)", figures.wall_ms),
        "",
        f"trace events per run: {figures.events / runs:.0f}",
        f"peak RSS: {peak_rss_mib():.1f} MiB",
        f"target < {TARGET_MS_PER_STEP:g} ms per step: tool step mean {verdict(step_mean)}; "
        f"per run ÷ steps {verdict(amortised)}",
    ]
    return "\n".join(lines)


SIZES = (("200 B", 200), ("20 KiB", 20 * 1024), ("100 KiB", 100 * 1024))


def sizes_table(runs: int, steps: int, warmup: int) -> str:
    """Per-step time at the three result sizes the issue names, each in its own measurement."""
    lines = [
        f"engine overhead by tool result size · {runs} runs × {steps} steps each · instant brain and tool",
        f"python {platform.python_version()} · {platform.machine()} · {platform.system()}",
        "",
        f"{'result':<10}{'step mean':>12}{'step p50':>12}{'step p99':>12}{'run ÷ steps':>14}",
    ]
    for label, size in SIZES:
        figures = asyncio.run(measure(runs, steps, warmup, size))
        step_mean = sum(figures.step_ms) / len(figures.step_ms)
        amortised = sum(figures.run_ms) / len(figures.run_ms) / steps
        p50, p99 = percentile(figures.step_ms, 50), percentile(figures.step_ms, 99)
        lines.append(f"{label:<10}{step_mean:>12.3f}{p50:>12.3f}{p99:>12.3f}{amortised:>14.3f}")
    lines.append(f"peak RSS: {peak_rss_mib():.1f} MiB")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="measured runs (default 200)")
    parser.add_argument("--steps", type=int, default=50, help="steps per run, 2..100 (default 50)")
    parser.add_argument("--payload-kb", type=int, default=0, help="size of each tool result in KiB (default 0)")
    parser.add_argument("--warmup", type=int, default=5, help="runs before measuring (default 5)")
    parser.add_argument("--sizes", action="store_true", help="200 B, 20 KiB and 100 KiB results in one table")
    args = parser.parse_args(argv)
    if args.runs < 1 or not 2 <= args.steps <= 100 or args.warmup < 0 or args.payload_kb < 0:
        parser.error("--runs ≥ 1, 2 ≤ --steps ≤ 100 (limits.max_steps), --warmup ≥ 0, --payload-kb ≥ 0")
    if args.sizes:
        print(sizes_table(args.runs, args.steps, args.warmup))
        return 0
    figures = asyncio.run(measure(args.runs, args.steps, args.warmup, args.payload_kb * 1024))
    print(report(figures, args.runs, args.steps, args.payload_kb))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
