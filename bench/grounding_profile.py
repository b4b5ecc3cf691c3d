"""Where a prepared check of the bench's answer spends its time: a statistical profile, C time included.

cProfile charges each Python call its own overhead, which inflates the checker's many small functions; this
samples the stack on a CPU-time timer instead (`SIGPROF`, asked for every half millisecond; the kernel's
tick may make it coarser: take a few thousand checks) and counts, for each sample, every
function of `agent/` on the stack (its share, callees included) and the innermost line (where the time went,
with the C it called: a regular expression, `text2num`, pydantic).

    .venv/bin/python bench/grounding_profile.py [--answer untagged] [--checks 2000] [--top 40]
"""

from __future__ import annotations

import argparse
import gc
import linecache
import signal
from collections import Counter
from types import FrameType

import grounding_check as bench

from agent.grounding import check, prepare
from agent.source import Source

INTERVAL_S = 0.0005


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answer", choices=("typical", "untagged", "dense"), default="untagged")
    parser.add_argument("--checks", type=int, default=2000)
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    write = {"typical": bench.typical_answer, "untagged": bench.untagged_answer, "dense": bench.dense_answer}
    answer = write[args.answer]
    for variant in range(5):
        made = _prepared(variant)
        check(answer(made), made, bench.QUESTION)  # warm-up: patterns compiled, month names loaded
    functions: Counter[tuple[str, str]] = Counter()
    lines: Counter[tuple[str, int]] = Counter()
    sampling = False
    samples = 0

    def sample(_signal: int, frame: FrameType | None) -> None:
        nonlocal samples
        if not sampling:
            return  # preparing the next sources: not the check
        samples += 1
        seen: set[tuple[str, str]] = set()
        innermost = None
        while frame is not None:
            path = frame.f_code.co_filename
            if "/agent/" in path:
                innermost = innermost or (path, frame.f_lineno or 0)
                seen.add((path.split("/agent/")[-1], frame.f_code.co_name))
            frame = frame.f_back
        functions.update(seen)
        if innermost is not None:
            lines[innermost] += 1

    signal.signal(signal.SIGPROF, sample)
    signal.setitimer(signal.ITIMER_PROF, INTERVAL_S, INTERVAL_S)
    for batch in range(max(1, args.checks // 50)):
        made = [_prepared(batch * 50 + n) for n in range(50)]
        texts = [answer(sources) for sources in made]  # other figures each check, as in the bench
        gc.collect()
        gc.freeze()  # as `parley serve` does after start-up
        sampling = True
        for text, sources in zip(texts, made, strict=True):
            check(text, sources, bench.QUESTION)
        sampling = False
        gc.unfreeze()
    signal.setitimer(signal.ITIMER_PROF, 0, 0)
    print(f"{samples} samples of {args.checks} prepared checks of the {args.answer} answer")
    for (path, name), count in functions.most_common(args.top):
        print(f"{count / samples:6.1%}  {path}:{name}")
    print()
    for (path, number), count in lines.most_common(args.top):
        code = linecache.getline(path, number).strip()[:90]
        print(f"{count / samples:6.1%}  {path.split('/agent/')[-1]}:{number}  {code}")
    return 0


def _prepared(variant: int) -> list[Source]:
    made = bench.sources(variant)
    for source in made:
        prepare(source)
    return made


if __name__ == "__main__":
    raise SystemExit(main())
