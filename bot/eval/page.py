"""The report as one self-contained HTML page (`--html FILE`): the table of cases and runs, the totals, and two
charts drawn as inline SVG — the runs by outcome, and their latency distribution. No script, no server, no
file beside it: it opens from a CI's artefacts as it is."""

from __future__ import annotations

from collections import Counter
from html import escape

from agent import OutcomeKind
from bot.eval.render import mark, totals_lines
from bot.eval.report import Report

BAR_W, BAR_H, GAP = 48, 160, 16
BUCKETS = 10
STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem;color:#222}
table{border-collapse:collapse;font-size:.9rem}td,th{border:1px solid #ccc;padding:.3rem .5rem;vertical-align:top}
.ok{color:#17803d}.fail{color:#b42318}figure{display:inline-block;margin:0 2rem 1rem 0}
svg text{font-size:11px}code{font-size:.85rem}
"""


def render_page(report: Report) -> str:
    rows = []
    for case in report.cases:
        for run in case.runs:
            checks = "<br>".join(
                f'<span class="{"ok" if c.ok else "fail"}">{mark(c.ok)}</span> {escape(c.name)} ({escape(c.seen)})'
                for c in run.checks
            )
            rows.append(
                "<tr>"
                f'<td class="{"ok" if run.passed else "fail"}">{mark(run.passed)}</td>'
                f"<td>{escape(case.id)}{f' #{run.attempt}' if len(case.runs) > 1 else ''}</td>"
                f"<td>{escape(run.outcome.value)}</td><td>{escape(run.reason)}</td><td>{checks}</td>"
                f"<td>{'<br>'.join(escape(g) for g in run.grounding)}</td>"
                f"<td>{escape(', '.join(run.tools))}</td><td>{run.tokens}</td><td>{run.latency_ms} ms</td>"
                f"<td><code>{escape(run.run_id)}</code></td>"
                "</tr>"
            )
    totals = "".join(f"<li>{escape(line)}</li>" for line in totals_lines(report.totals, report.repeat))
    runs = [run for case in report.cases for run in case.runs]
    outcomes = Counter(run.outcome.value for run in runs)
    by_outcome = [(kind.value, outcomes.get(kind.value, 0)) for kind in OutcomeKind]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>parley eval: {escape(report.source)}</title>
<style>{STYLE}</style></head><body>
<h1>parley eval: {escape(report.source)}</h1>
<p>Model <code>{escape(report.model)}</code> · {report.repeat} run(s) per case ·
{report.created_at:%Y-%m-%d %H:%M} UTC</p>
<ul>{totals}</ul>
<figure><figcaption>Runs by outcome</figcaption>{bar_chart(by_outcome)}</figure>
<figure><figcaption>Latency (ms)</figcaption>{bar_chart(latency_buckets([r.latency_ms for r in runs]))}</figure>
<table><thead><tr><th></th><th>case</th><th>outcome</th><th>reason</th><th>expectations</th><th>grounding</th>
<th>tools</th><th>tokens</th><th>latency</th><th>run</th></tr></thead>
<tbody>{"".join(rows)}</tbody></table>
</body></html>
"""


def latency_buckets(latencies: list[int]) -> list[tuple[str, int]]:
    """At most BUCKETS equal ranges from 0 to the slowest run, each with how many runs fell in it."""
    if not latencies:
        return []
    top = max(latencies) + 1
    width = max(1, -(-top // BUCKETS))
    counts = Counter(min(value // width, BUCKETS - 1) for value in latencies)
    used = max(counts) + 1
    return [(f"<{(i + 1) * width}", counts.get(i, 0)) for i in range(used)]


def bar_chart(bars: list[tuple[str, int]]) -> str:
    """A bar per (label, count), as an inline SVG."""
    highest = max((count for _, count in bars), default=0) or 1
    width = len(bars) * (BAR_W + GAP) + GAP
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{BAR_H + 40}" role="img">']
    for i, (label, count) in enumerate(bars):
        x = GAP + i * (BAR_W + GAP)
        h = round(BAR_H * count / highest)
        parts.append(f'<rect x="{x}" y="{BAR_H - h + 14}" width="{BAR_W}" height="{h}" fill="#4062bb"/>')
        parts.append(f'<text x="{x + BAR_W / 2}" y="{BAR_H - h + 10}" text-anchor="middle">{count}</text>')
        parts.append(f'<text x="{x + BAR_W / 2}" y="{BAR_H + 30}" text-anchor="middle">{escape(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)
