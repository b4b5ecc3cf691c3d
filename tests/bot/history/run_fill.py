"""Many runs written by PostgreSQL itself (INSERT … SELECT over generate_series), shaped like real traffic:
70 % solved, 20 % degraded (nine reasons), the rest refused and the review states, 2 % still running or
queued. Used by the query-plan tests and by `bench/runs_list.py`, each naming its own columns."""

from __future__ import annotations

import json
from collections.abc import Mapping

from bot.store.models import Run

SHAPE = """
WITH drawn AS (
    SELECT g, random() AS r, random() AS r2, random() AS r3, random() AS r4, random() AS r5
    FROM generate_series({first}, {last}) AS g
), shaped AS (
    SELECT *,
        CASE WHEN r < 0.70 THEN 'solved' WHEN r < 0.90 THEN 'degraded' WHEN r < 0.93 THEN 'refused'
             WHEN r < 0.95 THEN 'awaiting_review' WHEN r < 0.96 THEN 'approved' WHEN r < 0.97 THEN 'rejected'
             WHEN r < 0.98 THEN 'expired' WHEN r < 0.99 THEN 'running' ELSE 'queued' END AS status
    FROM drawn
)"""
# The reason that goes with each status (degraded: one of nine, drawn by r2).
TERMINATION_REASON = """CASE status
        WHEN 'solved' THEN 'answered'
        WHEN 'degraded' THEN (ARRAY['gave_up', 'max_steps', 'repeat_same_call', 'repeat_same_error', 'no_progress',
            'all_tools_failed', 'llm_unavailable', 'run_timeout', 'critique_spin'])[1 + floor(r2 * 9)::int]
        WHEN 'running' THEN NULL WHEN 'queued' THEN NULL
        ELSE 'policy_violation' END"""


def fill_statement(columns: Mapping[str, str], first: int, last: int) -> str:
    """INSERT … SELECT of rows first..last: `columns` maps a column to its SQL expression over the drawn
    values (g, r … r5, status); columns not named get their model default, whatever the model has (or the
    database's)."""
    values = dict(columns)
    for column in Run.__table__.columns:
        if column.name in values or column.nullable or column.server_default is not None:
            continue  # named, NULL, or the database's own default
        if column.default is None:
            raise ValueError(f"runs.{column.name} is NOT NULL without a default: give it an expression")
        default = column.default.arg(None) if column.default.is_callable else column.default.arg
        values[column.name] = f"'{json.dumps(default)}'" if isinstance(default, list | dict) else repr(default)
    shape = SHAPE.format(first=first, last=last)
    return f"{shape}\nINSERT INTO runs ({', '.join(values)})\nSELECT {', '.join(values.values())} FROM shaped"
