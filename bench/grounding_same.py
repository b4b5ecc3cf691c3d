"""The fact-checker's verdicts, all of them, written down: proof that a faster checker says exactly the same.

A change made for speed must not change one verdict. This writes the full `Grounding` of every check in a
large set — the answer as shown, problems, grounded figures with their rule, `how`, sources and `cited_by`,
citations, attachments, backed clauses, each sentence with its cited results, problems, unbacked spans, facts
and text as shown — one JSON line per check, cold (sources never read), warm (the same sources again) and
prepared (each source read by `prepare` first). Run it before and after a change, and compare:

    .venv/bin/python bench/grounding_same.py record            # once: every check tests/agent makes
    .venv/bin/python bench/grounding_same.py verdicts before.jsonl
    ... change the checker ...
    .venv/bin/python bench/grounding_same.py verdicts after.jsonl
    .venv/bin/python bench/grounding_same.py compare before.jsonl after.jsonl

The set: every `check` that `tests/agent` makes (recorded by `record`, through the real loop: the inputs are
kept in a pickle outside the repository), every corpus answer (`tests/agent/corpus/`, `not-yet/` too) as
written, without its tags, line by line and with its lines reversed, and the bench's three answers
(`bench/grounding_check.py`) at five lengths. Hash-ordered sets must not leak into a verdict, so the script
runs itself with `PYTHONHASHSEED=0`.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import pickle
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from agent.grounding import Grounding, check, prepare  # noqa: E402
from agent.grounding import checker as checker_module  # noqa: E402
from agent.source import Source  # noqa: E402

RECORDED = Path(os.environ.get("GROUNDING_RECORDED", "/tmp/parley-grounding-inputs.pickle"))
TODAY = date(2026, 12, 3)
_TAG = re.compile(r"\s?\[\d{1,3}\]")


@dataclass
class Input:
    """One check's arguments, kept as plain values so that every run builds its sources anew."""

    label: str
    answer: str
    sources: list[tuple[int, str, str, int, Any, Any]]
    question: str
    today: date

    def fresh(self) -> list[Source]:
        return [Source(*copy.deepcopy(fields)) for fields in self.sources]


def _fields(source: Source) -> tuple[int, str, str, int, Any, Any]:
    return (
        source.number,
        source.tool,
        source.tool_call_id,
        source.step,
        copy.deepcopy(source.arguments),
        copy.deepcopy(source.data),
    )


def record(pytest_args: Sequence[str]) -> int:
    """Run tests/agent with every check's arguments recorded, and keep them in `RECORDED`."""
    import pytest

    seen: list[Input] = []
    original = checker_module._Checker.__init__

    def recording(self: Any, answer: str, sources: Sequence[Source], question: str, today: date) -> None:
        seen.append(Input(f"tests#{len(seen)}", answer, [_fields(s) for s in sources], question, today))
        original(self, answer, sources, question, today)

    checker_module._Checker.__init__ = recording  # type: ignore[method-assign]
    code = pytest.main(["-q", "-p", "no:cacheprovider", *(pytest_args or [str(ROOT / "tests" / "agent")])])
    RECORDED.write_bytes(pickle.dumps(seen))
    print(f"{len(seen)} checks recorded in {RECORDED} (pytest exit code {code})")
    return int(code)


def inputs() -> Iterator[Input]:
    if RECORDED.exists():
        yield from pickle.loads(RECORDED.read_bytes())
    else:
        print(f"warning: {RECORDED} is missing (run `record` first): the tests' checks are left out", file=sys.stderr)
    yield from _corpus()
    yield from _bench()


def _corpus() -> Iterator[Input]:
    import yaml

    from tests.agent.test_grounding_corpus import Case  # the corpus's own reading of its files

    corpus = ROOT / "tests" / "agent" / "corpus"
    for path in sorted([*corpus.glob("*.yaml"), *(corpus / "not-yet").glob("*.yaml")]):
        for raw in yaml.safe_load(path.read_text(encoding="utf-8"))["cases"]:
            case = Case.model_validate(raw)
            sources = [_fields(s) for s in case.sources()]
            lines = [line for line in case.final.splitlines() if line.strip()]
            variants = {
                "as written": case.final,
                "untagged": _TAG.sub("", case.final),
                "reversed": "\n".join(reversed(lines)),
                **{f"line {n}": line for n, line in enumerate(lines)},
            }
            for name, answer in variants.items():
                yield Input(f"{path.name}:{case.id}:{name}", answer, sources, case.question, TODAY)


def _bench() -> Iterator[Input]:
    import grounding_check as bench

    made = [_fields(s) for s in bench.sources()]
    for write in (bench.typical_answer, bench.untagged_answer, bench.dense_answer):
        for limit in (300, 800, 1500, 2000, 4000):
            answer = write(bench.sources(), limit)
            yield Input(f"bench:{write.__name__}:{limit}", answer, made, bench.QUESTION, TODAY)


def verdicts(out: Path) -> int:
    """Write every check's full verdict, cold, warm and prepared, one JSON line each."""
    count = 0
    with out.open("w", encoding="utf-8") as file:
        for item in inputs():
            sources = item.fresh()
            cold = check(item.answer, sources, item.question, today=item.today)
            warm = check(item.answer, sources, item.question, today=item.today)
            ready = item.fresh()
            for source in ready:
                prepare(source)
            prepared = check(item.answer, ready, item.question, today=item.today)
            for how, grounding in (("cold", cold), ("warm", warm), ("prepared", prepared)):
                # json's default ASCII: the property tests' answers hold lone surrogates, which UTF-8 refuses
                file.write(json.dumps({"input": item.label, "how": how, **dump(grounding)}))
                file.write("\n")
                count += 1
    print(f"{count} verdicts written to {out}")
    return 0


def dump(grounding: Grounding) -> dict[str, Any]:
    """Everything a check says, as plain values (a source by its number, tool and call)."""

    def ref(source: Source) -> list[Any]:
        return [source.number, source.tool, source.tool_call_id]

    return {
        "answer": grounding.answer,
        "ok": grounding.ok,
        "cited": [ref(s) for s in grounding.cited],
        "citations": [c.model_dump(mode="json") for c in grounding.citations],
        "problems": grounding.problems,
        "grounded": [g.model_dump(mode="json") for g in grounding.grounded],
        "attachments": [[a.at, a.marker] for a in grounding.attachments],
        "backed": [[words, ref(s)] for words, s in grounding.backed],
        "sentences": [
            {
                "start": s.start,
                "end": s.end,
                "text": s.text,
                "cited": [ref(c) for c in s.cited],
                "problems": s.problems,
                "unbacked": [list(u) for u in s.unbacked],
                "facts": s.facts,
                "shown": s.shown,
                "verified": s.verified,
                "without_unbacked": s.without_unbacked(),
            }
            for s in grounding.sentences
        ],
    }


def compare(before: Path, after: Path) -> int:
    old = before.read_text(encoding="utf-8").splitlines()
    new = after.read_text(encoding="utf-8").splitlines()
    differing = [n for n, (a, b) in enumerate(zip(old, new, strict=False)) if a != b]
    if len(old) != len(new):
        print(f"{len(old)} verdicts before, {len(new)} after")
    for n in differing[:5]:
        print(f"differs: {json.loads(old[n])['input']} ({json.loads(old[n])['how']})")
        print(f"  before: {old[n][:600]}")
        print(f"  after:  {new[n][:600]}")
    if differing or len(old) != len(new):
        print(f"NOT identical: {len(differing)} of {len(old)} verdicts differ")
        return 1
    print(f"identical: {len(old)} verdicts ({len(old) // 3} checks, cold, warm and prepared)")
    return 0


def main() -> int:
    if os.environ.get("PYTHONHASHSEED") != "0":  # set iteration order must not differ between two runs
        return subprocess.call([sys.executable, *sys.argv], env={**os.environ, "PYTHONHASHSEED": "0"})
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    recorder = commands.add_parser("record", help="run tests/agent and keep every check's arguments")
    recorder.add_argument("pytest_args", nargs="*")
    commands.add_parser("verdicts", help="write every verdict").add_argument("out", type=Path)
    comparer = commands.add_parser("compare", help="compare two files of verdicts")
    comparer.add_argument("before", type=Path)
    comparer.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "record":
        return record(args.pytest_args)
    if args.command == "verdicts":
        return verdicts(args.out)
    return compare(args.before, args.after)


if __name__ == "__main__":
    raise SystemExit(main())
