"""A report in words: a table for a terminal, Markdown (a CI summary, a pull request), JUnit XML (a CI's test
view), and a baseline comparison. JSON is the `Report` itself; the HTML page is `bot.eval.page`."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from bot.eval.baseline import Comparison, Flip
from bot.eval.report import CaseReport, Report, RunRecord, Totals

OK, FAIL = "✔", "✘"
NONE = "—"


def mark(ok: bool) -> str:
    return OK if ok else FAIL


def run_line(run: RunRecord) -> str:
    cost = NONE if run.cost_usd is None else f"${run.cost_usd:.4f}"
    return (
        f"{run.outcome.value} · {run.reason} · {run.steps} steps, {run.retries} retries · {run.tokens} tokens · "
        f"{cost} · {run.latency_ms} ms · run {run.run_id}"
    )


def checks_line(run: RunRecord) -> str:
    return "  ".join(f"{mark(c.ok)} {c.name} ({c.seen})" for c in run.checks) or "(no expectations)"


def render_table(report: Report) -> str:
    lines = [f"parley eval: {report.source} · model {report.model} · {report.repeat} run(s) per case", ""]
    for case in report.cases:
        flaky = "  (flaky)" if case.flaky else ""
        lines.append(f"{mark(case.passed)} {case.id}{flaky}")
        for run in case.runs:
            label = f"    run {run.attempt}: " if len(case.runs) > 1 else "    "
            lines.append(label + run_line(run))
            lines.append("      " + checks_line(run))
            if run.grounding:
                lines.append("      grounded: " + "; ".join(run.grounding))
            if run.rejected:
                lines.append("      drafts refused by: " + ", ".join(run.rejected))
            lines.append("      tools: " + (", ".join(run.tools) or "none"))
    lines.append("")
    lines.extend(totals_lines(report.totals, report.repeat))
    return "\n".join(lines)


def totals_lines(t: Totals, repeat: int) -> list[str]:
    cost = NONE if t.cost_per_case_usd is None else f"${t.cost_per_case_usd:.4f}"
    return [
        f"cases {t.cases} · held {t.passed} · failed {t.failed} · pass^{repeat} {t.pass_rate:.1%} · flaky {t.flaky}",
        f"kept (answered and correct) {t.kept} of {t.runs} runs ({t.kept_rate:.1%}) · "
        f"fabrications accepted {t.fabrications_accepted} · wrong answers caught {t.wrong_answers_caught}",
        f"partial {t.partial_rate:.1%} · escalated {t.escalation_rate:.1%} · latency p50 {t.latency_p50_ms} ms, "
        f"p95 {t.latency_p95_ms} ms · tokens per case {t.tokens_per_case:.0f} · cost per case {cost}",
    ]


def render_markdown(report: Report) -> str:
    lines = [
        f"## parley eval: {report.source}",
        "",
        f"Model `{report.model}`, {report.repeat} run(s) per case.",
        "",
        "| | case | outcome | reason | expectations | grounding | tools | tokens | latency | run |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for case in report.cases:
        for run in case.runs:
            cells = [
                mark(run.passed),
                case.id + (f" #{run.attempt}" if len(case.runs) > 1 else ""),
                run.outcome.value,
                run.reason,
                "<br>".join(f"{mark(c.ok)} {c.name} ({c.seen})" for c in run.checks),
                "<br>".join(run.grounding),
                ", ".join(run.tools),
                str(run.tokens),
                f"{run.latency_ms} ms",
                f"`{run.run_id}`",
            ]
            lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    lines.append("")
    lines.extend(f"- {line}" for line in totals_lines(report.totals, report.repeat))
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_junit(report: Report) -> str:
    """One `<testcase>` per run of a case; a failed expectation is a `<failure>` naming each that failed."""
    t = report.totals
    suites = ET.Element("testsuites", name="parley eval", tests=str(t.runs), failures=str(_failed_runs(report)))
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=report.source,
        tests=str(t.runs),
        failures=str(_failed_runs(report)),
        errors="0",
        time=f"{sum(r.latency_ms for c in report.cases for r in c.runs) / 1000:.3f}",
    )
    for case in report.cases:
        for run in case.runs:
            name = case.id if len(case.runs) == 1 else f"{case.id} #{run.attempt}"
            element = ET.SubElement(
                suite, "testcase", classname="parley.eval", name=name, time=f"{run.latency_ms / 1000:.3f}"
            )
            if not run.passed:
                failed = [f"{c.name} ({c.seen})" for c in run.checks if not c.ok]
                failure = ET.SubElement(element, "failure", message="; ".join(failed), type="expectation")
                failure.text = _failure_text(case, run)
            out = ET.SubElement(element, "system-out")
            out.text = f"{run_line(run)}\n{checks_line(run)}\nparley runs show {run.run_id}"
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _failed_runs(report: Report) -> int:
    return sum(not run.passed for case in report.cases for run in case.runs)


def _failure_text(case: CaseReport, run: RunRecord) -> str:
    return f"{case.question}\n{run_line(run)}\n{checks_line(run)}\nparley runs show {run.run_id}"


def render_comparison(comparison: Comparison, baseline_name: str) -> str:
    lines = [f"against the baseline {baseline_name}:"]
    if not comparison.flips:
        lines.append("  no case changed")
    for flip in comparison.flips:
        where = f" · parley runs show {flip.run_id}" if flip.run_id and flip.flip is not Flip.GONE else ""
        lines.append(f"  {flip.flip.value:9} {flip.case}{where}")
    for delta in comparison.deltas:
        lines.append(f"  {delta.name}: {_number(delta.before)} → {_number(delta.after)}")
    if comparison.regressions:
        lines.append("regressed: " + "; ".join(comparison.regressions))
    else:
        lines.append("nothing regressed")
    return "\n".join(lines)


def _number(value: float | None) -> str:
    if value is None:
        return NONE
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.4g}"
    return str(int(value)) if isinstance(value, float) else str(value)
