"""The fact-checker's cost: checking one 2,000-character answer against 20 tool results.

Each result is a small JSON object of the kind teams' APIs return (ten fields: unit-bearing numbers,
unrounded values, ISO dates, text with figures in it). Three answers of up to 2,000 characters use them:
"typical", the way strong models write a long answer (a lead-in, a bullet per region with a rounded revenue
and a growth rate, some prose, each bullet tagged); "untagged", the same answer as weak models write it, with
no tag at all, so that Parley must find which of the 20 results states each figure (by the region each bullet
names) and attach the citations itself; and "dense", a table in prose (four figures a sentence, grouped and
scaled, percentages of fractions, a sum of two cited figures, a date) — the worst case. Every run must pass,
and the untagged one must come back with a citation Parley attached to every bullet.

"cold" builds the sources anew for every check, nothing read; "prepared" builds them anew and reads each
(`prepare`), as the loop does when each result arrives — the check a run waits for at its closing; "warm"
checks again against the same sources (a repaired draft). Samples are the wall time of one `check` call;
"reading 20 results" is what `prepare` cost, spread over the run as the results came in. "machine speed", printed
before and after, times a fixed loop: machines here differ up to threefold between sessions, and so does the
load, so compare timings only between runs whose machine speed agrees (3.5–4 ms on a quiet, slow machine).

    .venv/bin/python bench/grounding_check.py [--runs 2000]

Target (issue): under 5 ms p99, attribution included (the untagged answer), for the check a run waits for.
"""

from __future__ import annotations

import argparse
import gc
import platform
import re
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agent.grounding import check as check_answer
from agent.grounding import prepare
from agent.source import Source

TARGET_P99_MS = 5.0
QUESTION = "How did our twenty regions do in October, and which grew most?"
REGIONS = [
    "Berlin", "Lisbon", "Madrid", "Paris", "Rome", "Vienna", "Prague", "Warsaw", "Oslo", "Dublin",
    "Zurich", "Munich", "Milan", "Lyon", "Porto", "Seville", "Krakow", "Bergen", "Cork", "Basel",
]  # fmt: skip


def sources(variant: int = 0) -> list[Source]:
    """The 20 results; each `variant` gives other figures, so that no two runs check the same text."""
    made = []
    for number, region in enumerate(REGIONS, start=1):
        data = {
            "region": region,
            "month": "2026-10",
            "revenue_eur": 1_000_000 + number * 123_457 + variant * 50_111,
            "orders": 3000 + number * 17 + variant % 97,
            "returns_rate": round(0.01 + number / 1000, 4),
            "p50_ms": 150 + number * 3.1415,
            "headcount": 20 + number + variant % 13,
            "growth_pct": round(1.5 + number * 0.37 + (variant % 29) * 0.01, 2),
            "updated_at": f"2026-11-{number:02d}T08:15:00Z",
            "note": f"{number * 11} new customers, {number} churned",
        }
        made.append(Source(number, "get_region", f"call_{number}", 1, {"region": region}, data))
    return made


def dense_answer(made: Sequence[Source], limit: int = 2000) -> str:
    """A table in prose: four figures a sentence, one sentence a region (the worst case for the checker)."""
    first, second = made[0].data, made[1].data
    sentences = [
        f"{first['region']} has {first['headcount']} people [1] and {second['region']} {second['headcount']} [2], "
        f"{first['headcount'] + second['headcount']} together.",
        f"{first['region']}'s report is from November 1, 2026 [1].",
    ]
    for source in made:
        d = source.data
        revenue = d["revenue_eur"] / 1_000_000
        sentences.append(
            f"{d['region']}: revenue about €{revenue:.2f} million on {d['orders']:,} orders, "
            f"returns {d['returns_rate'] * 100:.1f}%, growth {d['growth_pct']}% {source.tag}."
        )
    return _up_to(sentences, limit)


def typical_answer(made: Sequence[Source], limit: int = 2000) -> str:
    """How strong models write a long answer: a lead-in, bullets with one or two figures each, some prose."""
    lines = ["Here is how October went across the twenty regions.", ""]
    for source in made:
        d = source.data
        revenue = d["revenue_eur"] / 1_000_000
        lines.append(
            f"- **{d['region']}**: revenue of about €{revenue:.1f} million {source.tag} on {d['orders']:,} orders, "
            f"up {d['growth_pct']}%."
        )
        if source.number % 4 == 0:
            lines.append("  Demand held steady there all month, and the team expects the same in November.")
    best = max(made, key=lambda s: s.data["growth_pct"])
    lines.append(f"{best.data['region']} grew fastest. Every region grew, so no action is needed before the review.")
    return _up_to(lines, limit, joiner="\n")


def untagged_answer(made: Sequence[Source], limit: int = 2000) -> str:
    """The typical answer as an 8B model writes it: not one tag (and as long as the typical one may be)."""
    lines = re.sub(r" ?\[\d+\]", "", typical_answer(made, 2 * limit)).split("\n")
    return _up_to(lines, limit, joiner="\n")


def _up_to(parts: Sequence[str], limit: int, joiner: str = " ") -> str:
    text = ""
    for part in parts:  # whole sentences or lines, up to the limit
        if len(text) + len(part) + 1 > limit:
            break
        text = f"{text}{joiner}{part}" if text else part
    return text


@dataclass
class Samples:
    """Milliseconds of one `check` each: "cold" (no result read before), "prepared" (each result read as it
    arrived, as the loop does: what a run waits for at its closing), "warm" (the same draft checked again)."""

    cold: list[float] = field(default_factory=list)
    prepared: list[float] = field(default_factory=list)
    warm: list[float] = field(default_factory=list)
    reading: list[float] = field(default_factory=list)  # preparing the 20 results, as they arrive
    figures: int = 0
    chars: int = 0


def measure(runs: int, write: Callable[[Sequence[Source]], str]) -> Samples:
    samples = Samples()
    for run in range(runs):
        made = sources(run)
        text = write(made)  # other figures every run: nothing the checker caches by text is reused
        samples.chars = max(samples.chars, len(text))
        started = time.perf_counter()
        check = check_answer(text, made, QUESTION)
        samples.cold.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        again = check_answer(text, made, QUESTION)
        samples.warm.append((time.perf_counter() - started) * 1000)
        made = sources(run)
        started = time.perf_counter()
        for source in made:
            prepare(source)
        samples.reading.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        prepared = check_answer(text, made, QUESTION)
        samples.prepared.append((time.perf_counter() - started) * 1000)
        for result in (check, again, prepared):
            if not result.ok:
                raise SystemExit(f"the benchmark answer did not pass: {result.problems[:3]}")
        if write is untagged_answer and len(check.attachments) < text.count("\n- "):
            raise SystemExit(f"Parley attached {len(check.attachments)} citations to the untagged answer")
        samples.figures = len(check.grounded)
    return samples


def machine_speed(runs: int = 300) -> float:
    """Milliseconds (p50) of a fixed pure-Python loop: the same work on every machine, so that this machine's
    timings can be compared with another session's (its checks cost the same instructions there)."""
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        total = 0
        for number in range(60_000):
            total += number * number
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def row(label: str, values: Sequence[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    cells = [statistics.mean(values), statistics.median(values), p99, max(values)]
    return f"{label:<22}" + "".join(f"{cell:>10.3f}" for cell in cells)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2000)
    args = parser.parse_args()
    answers = {"typical": typical_answer, "untagged": untagged_answer, "dense": dense_answer}
    for write in answers.values():
        measure(20, write)  # warm-up: compile the patterns, load the month names
    gc.collect()
    gc.freeze()  # as `parley serve` does after start-up
    print(f"grounding check · {args.runs} runs per answer · 20 sources")
    print(f"python {platform.python_version()} · {platform.machine()} · {platform.system()}")
    print(f"machine speed: a fixed loop of 60,000 multiply-adds takes {machine_speed():.2f} ms (p50)")
    print(f"{'ms':<22}{'mean':>10}{'p50':>10}{'p99':>10}{'max':>10}")
    verdicts = []
    for name, write in answers.items():
        samples = measure(args.runs, write)
        print(f"{name} ({samples.chars} chars, {samples.figures} figures)")
        print(row("  cold", samples.cold))
        print(row("  prepared", samples.prepared))
        print(row("  warm", samples.warm))
        print(row("  reading 20 results", samples.reading))
        p99 = sorted(samples.prepared)[int(0.99 * len(samples.prepared))]
        verdicts.append(f"{name} {p99:.3f} ms {'met' if p99 < TARGET_P99_MS else 'NOT met'}")
    print(f"machine speed at the end: {machine_speed():.2f} ms (p50; if it moved, the load did)")
    print(f"target < {TARGET_P99_MS:g} ms p99 (prepared): " + "; ".join(verdicts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
