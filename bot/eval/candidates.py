"""Candidate cases from people's feedback: each run someone gave a 👎 (or a 👍) written as a case — its question,
what the tools returned, the answer given and the people's notes — with `expect:` left empty for a person to fill
in. A candidate is never added to a suite by itself: until its `expect:` is written, the file does not load."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import yaml

from agent import shorten
from bot.core import History, RunFilter, StoredTrace

SHOWN_CHARS = 600  # of each tool result, enough to judge what a right answer would have been
PAGE = 100
HEADER = """\
# Candidate cases from people's feedback ({verdict}), written by `parley eval import`.
# Each is a run someone judged; its `feedback:` says what the tools returned, the answer given and their notes.
# Fill in each `expect:` (outcome, figures, not_figures, tools, …), keep the cases worth keeping, then add them to a
# case file. Until its `expect:` is filled in, a candidate does not load (`parley eval` names it and exits 2).
"""


async def feedback_candidates(history: History, verdict: str, *, since: datetime | None, limit: int) -> str:
    """The runs given `verdict` (newest first, at most `limit`) as a YAML case file for a person to curate."""
    filters = RunFilter(feedback=verdict, since=since)
    traces: list[StoredTrace] = []
    cursor = None
    while len(traces) < limit:
        page = await history.runs(filters, limit=min(PAGE, limit - len(traces)), cursor=cursor)
        for summary in page.runs:
            traces.append(await history.trace(summary.id))
        cursor = page.next_cursor
        if cursor is None:
            break
    cases = [_candidate(trace, verdict) for trace in traces]
    body = yaml.safe_dump({"cases": cases}, allow_unicode=True, sort_keys=False, width=120) if cases else "cases: []\n"
    return HEADER.format(verdict=verdict) + body


def _candidate(trace: StoredTrace, verdict: str) -> dict[str, Any]:
    run = trace.run
    notes = [f.comment for f in trace.feedback if f.verdict == verdict and f.comment]
    results = [
        {
            "tool": call.tool,
            "arguments": call.arguments,
            "ok": call.ok,
            **({"error": call.error_code} if call.error_code else {}),
            "returned": shorten(call.observation, SHOWN_CHARS),
        }
        for call in trace.tool_calls
    ]
    result = run.result
    return {
        "id": f"feedback-{run.id[:8]}",
        "question": run.question,
        "expect": None,
        "feedback": {
            "run_id": run.id,
            "verdict": verdict,
            "answer": result.answer if result is not None else (run.answer or ""),
            "outcome": result.outcome.value if result is not None else run.status.value,
            "tool_results": results,
            "notes": notes,
        },
    }
