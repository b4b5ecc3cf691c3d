"""`parley eval`: a team measures Parley on its own model, tools and questions, and gates changes on it.

    parley eval cases.yaml [--jobs N] [--repeat N] [--format table|json|junit|markdown] [--html FILE]
    parley eval --suite seeds [--live]
    parley eval cases.yaml --baseline base.json --fail-on-regression [--tolerance 0.02]
    parley eval import --feedback down [--since 7d] > candidates.yaml

Exit status: 0 every case held, 1 a case failed (or, with `--fail-on-regression`, something regressed against the
baseline), 2 a case file, configuration or command line that cannot be used (the case and field named).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from bot.cli.runs import parse_since
from bot.cli.usage import UsageError
from bot.config_file import defaults_dir, load_config
from bot.core import FeedbackVerdict, History
from bot.eval import (
    DEFAULT_TOLERANCE,
    Attempt,
    Evaluation,
    Prices,
    Report,
    build_report,
    compare,
    feedback_candidates,
    load_baseline,
    load_cases,
    render_comparison,
    render_junit,
    render_markdown,
    render_page,
    render_table,
    run_cases,
    save_baseline,
    schema_text,
)
from bot.settings import Settings
from bot.store import open_store

EXIT_HELD = 0
EXIT_FAILED = 1
IMPORT = "import"
SUITES = {"seeds": "seeds.yaml"}
FORMATS = ("table", "json", "junit", "markdown")


def add_parser(sub: argparse._SubParsersAction) -> None:
    ev = sub.add_parser(
        "eval",
        help="measure Parley on a file of cases (or a built-in suite); `eval import` turns feedback into cases",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ev.add_argument("cases", nargs="?", type=str, help="a YAML case file, or `import` (see --feedback)")
    ev.add_argument("--suite", choices=sorted(SUITES), help="a built-in suite instead of a file")
    ev.add_argument("--config", type=Path, help="YAML configuration (default: PARLEY_CONFIG or config/parley.yaml)")
    ev.add_argument("--jobs", type=int, default=4, help="cases run at once (default 4)")
    ev.add_argument("--repeat", type=int, default=1, help="runs of each case: pass^k, and flaky cases flagged")
    ev.add_argument("--live", action="store_true", help="ask the configured model even where a case has a replay")
    ev.add_argument("--format", choices=FORMATS, default="table", help="the report on standard output")
    ev.add_argument("--output", type=Path, help="write the report here instead of standard output")
    ev.add_argument("--html", type=Path, metavar="FILE", help="also write a self-contained HTML page")
    ev.add_argument("--save-baseline", type=Path, metavar="FILE", help="bless this report as a baseline")
    ev.add_argument("--baseline", type=Path, metavar="FILE", help="compare with a blessed report")
    ev.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 only when something regressed against --baseline (a case flipped to failing, the kept rate "
        "fell by more than --tolerance, a fabrication accepted)",
    )
    ev.add_argument("--tolerance", type=float, default=DEFAULT_TOLERANCE, help="kept-rate drop allowed (0.02)")
    ev.add_argument("--schema", action="store_true", help="print the JSON Schema of a case file and exit")
    ev.add_argument("--feedback", choices=[v.value for v in FeedbackVerdict], help="import: runs given this verdict")
    ev.add_argument("--since", help="import: only runs since (ISO date, or 30m, 2h, 7d, 1w)")
    ev.add_argument("--limit", type=int, default=200, help="import: at most this many runs (default 200)")
    ev.set_defaults(handler=run)


async def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.schema:
        sys.stdout.write(schema_text())
        return EXIT_HELD
    if args.cases == IMPORT:
        return await _import(args, settings)
    path = _case_path(args)
    if args.jobs < 1 or args.repeat < 1:
        raise UsageError("--jobs and --repeat must be at least 1")
    if not 0 <= args.tolerance <= 1:
        raise UsageError("--tolerance is a share of the cases, between 0 and 1 (0.02 is two in a hundred)")
    if args.fail_on_regression and args.baseline is None:
        raise UsageError("--fail-on-regression compares with a baseline: give --baseline FILE")
    cases = load_cases(path)
    loaded = load_config(args.config or settings.config)
    prices = Prices.configured(loaded.evaluation, loaded.path)
    baseline = load_baseline(args.baseline) if args.baseline else None
    db = await open_store(settings.database_url)
    try:
        how = Evaluation(settings, loaded, db, live=args.live, jobs=args.jobs, repeat=args.repeat)
        bar = ProgressBar(len(cases) * args.repeat, sys.stderr)
        attempts = await run_cases(cases, how, on_done=bar.advance)
        bar.close()
    finally:
        await db.aclose()
    live = args.live or any(case.script is None for case in cases)
    report = build_report(
        attempts,
        source=f"suite {args.suite}" if args.suite else str(path),
        model=(settings.llm_model or "") if live else "replay",
        config_hash=loaded.hash,
        repeat=args.repeat,
        prices=prices,
    )
    _write(args, report)
    if args.save_baseline:
        save_baseline(report, args.save_baseline)
    if args.html:
        args.html.write_text(render_page(report), encoding="utf-8")
    if baseline is None:
        return EXIT_HELD if report.held else EXIT_FAILED
    comparison = compare(baseline, report, tolerance=args.tolerance)
    shown_on = sys.stdout if args.format == "table" and args.output is None else sys.stderr
    print("\n" + render_comparison(comparison, str(args.baseline)), file=shown_on)
    if args.fail_on_regression:
        return EXIT_FAILED if comparison.regressed else EXIT_HELD
    return EXIT_HELD if report.held else EXIT_FAILED


def _case_path(args: argparse.Namespace) -> Path:
    if args.suite and args.cases:
        raise UsageError("give a case file or --suite, not both")
    if args.suite:
        return defaults_dir() / "eval" / SUITES[args.suite]
    if not args.cases:
        raise UsageError("give a case file (parley eval cases.yaml) or a suite (parley eval --suite seeds)")
    return Path(args.cases)


def _write(args: argparse.Namespace, report: Report) -> None:
    match args.format:
        case "json":
            text = report.model_dump_json(indent=2) + "\n"
        case "junit":
            text = render_junit(report)
        case "markdown":
            text = render_markdown(report)
        case _:
            text = render_table(report) + "\n"
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


async def _import(args: argparse.Namespace, settings: Settings) -> int:
    if args.feedback is None:
        raise UsageError("parley eval import needs --feedback down (or up): which runs to turn into cases")
    if args.limit < 1:
        raise UsageError("--limit must be at least 1")
    since = parse_since(args.since)
    db = await open_store(settings.database_url)
    try:
        text = await feedback_candidates(History(db), args.feedback, since=since, limit=args.limit)
    finally:
        await db.aclose()
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return EXIT_HELD


class ProgressBar:
    """`[#####.....] 5/10` on a terminal's standard error, redrawn as each run ends; nothing elsewhere."""

    WIDTH = 30

    def __init__(self, total: int, stream: TextIO) -> None:
        self._total = total
        self._done = 0
        self._failed = 0
        self._out = stream if stream.isatty() else None

    def advance(self, attempt: Attempt) -> None:
        self._done += 1
        if self._out is None:
            return
        filled = self.WIDTH * self._done // max(1, self._total)
        bar = "#" * filled + "." * (self.WIDTH - filled)
        self._out.write(f"\r[{bar}] {self._done}/{self._total} · {attempt.case.case.id[:40]:40}")
        self._out.flush()

    def close(self) -> None:
        if self._out is not None:
            self._out.write("\n")
            self._out.flush()
