"""`parley eval`'s engine room: cases (YAML, validated, with a JSON Schema), running them through the real engine
and run service (recorded with the source `eval`), scoring each run against its expectations, the report and its
renderings, baselines and their comparison, prices, and candidate cases from people's feedback.

The command line (`bot/cli/evaluation.py`) only translates between the terminal and these."""

from bot.eval.baseline import DEFAULT_TOLERANCE, Comparison, compare, load_baseline, save_baseline
from bot.eval.candidates import feedback_candidates
from bot.eval.cases import Case, CaseFileError, Expect, LoadedCase, case_file_schema, load_cases, schema_text
from bot.eval.page import render_page
from bot.eval.prices import Prices
from bot.eval.render import render_comparison, render_junit, render_markdown, render_table
from bot.eval.report import Report, Totals, build_report
from bot.eval.runner import Attempt, Evaluation, run_cases
from bot.eval.scoring import Check, Standing, appears, score

__all__ = [
    "DEFAULT_TOLERANCE",
    "Attempt",
    "Case",
    "CaseFileError",
    "Check",
    "Comparison",
    "Evaluation",
    "Expect",
    "LoadedCase",
    "Prices",
    "Report",
    "Standing",
    "Totals",
    "appears",
    "build_report",
    "case_file_schema",
    "compare",
    "feedback_candidates",
    "load_baseline",
    "load_cases",
    "render_comparison",
    "render_junit",
    "render_markdown",
    "render_page",
    "render_table",
    "run_cases",
    "save_baseline",
    "schema_text",
    "score",
]
