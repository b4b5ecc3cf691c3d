"""`parley runs list`: newest first, filtered, paged by the cursor it prints, refusing bad input in one line.

Every listing is compared with the `runs` table read directly (`RunRows.all`), not with the query code.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from tests.bot.history.parley_cli import EXIT_USAGE, ok, one_line_error
from tests.bot.history.run_rows import RunRow, bulk_run, newest_first
from tests.bot.history.stores import REFUSED_QUESTION, Store

pytestmark = pytest.mark.slow  # starts `parley` processes: `pytest -m "not slow"` leaves them out

HEADER = ["RUN", "CREATED", "(UTC)", "STATUS", "REASON", "STEPS", "ASKER", "FEEDBACK", "QUESTION"]
MORE = "more: add --cursor "
SUMMARY_FIELDS = {
    "run_id",
    "feedback",  # {"up": n, "down": n}: people's current verdicts
    "created_at",
    "source",
    "asker",
    "question",
    "status",
    "termination_reason",
    "steps",
    "tool_calls",
    "duration_ms",
}
ENDINGS = [
    ("solved", "answered"),
    ("degraded", "gave_up"),
    ("degraded", "max_steps"),
    ("refused", "policy_violation"),
    ("running", None),
    ("degraded", "repeat_same_call"),
    ("awaiting_review", "policy_violation"),
]
ASKERS = ["U0ANNA", "U0BEN", "cli:alice", "U0CHEN"]  # cli:alice also asked the recorded demo runs


def text_page(stdout: str) -> tuple[list[str], str | None]:
    """(the 12-character run ids listed, the cursor printed for the next page or None)."""
    lines = stdout.splitlines()
    assert lines[0].split() == HEADER, lines[0]
    cursor = lines.pop().removeprefix(MORE) if lines[-1].startswith(MORE) else None
    return [line.split()[0] for line in lines[1:]], cursor


def json_page(stdout: str) -> tuple[list[dict[str, Any]], str | None]:
    body = json.loads(stdout)
    assert set(body) == {"runs", "next_cursor"}
    return body["runs"], body["next_cursor"]


def matching(
    rows: list[RunRow],
    *,
    statuses: tuple[str, ...] = (),
    reasons: tuple[str, ...] = (),
    since: datetime | None = None,
    asker: str | None = None,
) -> list[str]:
    return [
        row.id
        for row in newest_first(rows)
        if (not statuses or row.status in statuses)
        and (not reasons or row.termination_reason in reasons)
        and (since is None or row.created_at >= since)
        and (asker is None or row.asker == asker)
    ]


def mixed_runs(now: datetime, count: int = 60) -> list[dict[str, Any]]:
    """Runs from 3 h to ~4 days old (never near the 2 h or 3 d marks), every status/reason/asker mix."""
    rows = []
    for i in range(count):
        status, reason = ENDINGS[i % len(ENDINGS)]
        asker = ASKERS[i % len(ASKERS)]
        created = now - timedelta(hours=3, minutes=97 * i)
        rows.append(
            bulk_run(
                created,
                status=status,
                termination_reason=reason,
                asker=asker,
                source="cli" if asker.startswith("cli:") else "slack",
                finished_at=None if status == "running" else created,
            )
        )
    return rows


def test_runs_list_filters_by_status_reason_since_and_asker(store: Store) -> None:
    now = datetime.now(UTC)
    store.rows.insert(mixed_runs(now))
    rows = store.rows.all()
    bulk = {row.id: row for row in rows}
    inserted = [bulk[run_id] for run_id in store.rows.inserted]
    boundary = inserted[10].created_at  # --since is inclusive: this run must be listed
    east = inserted[40].created_at.astimezone(timezone(timedelta(hours=8)))  # an offset other than Z
    cases: list[tuple[list[str], dict[str, Any]]] = [
        (["--status", "degraded"], {"statuses": ("degraded",)}),
        (["--reason", "max_steps", "--reason", "policy_violation"], {"reasons": ("max_steps", "policy_violation")}),
        (["--since", boundary.isoformat().replace("+00:00", "Z")], {"since": boundary}),
        (["--since", "2h"], {"since": now - timedelta(hours=2)}),
        (["--asker", "cli:alice"], {"asker": "cli:alice"}),
        (
            [
                *("--status", "degraded", "--status", "refused", "--reason", "gave_up", "--reason", "policy_violation"),
                *("--asker", "U0BEN", "--since", east.isoformat()),
            ],
            {"statuses": ("degraded", "refused"), "reasons": ("gave_up", "policy_violation"), "asker": "U0BEN"}
            | {"since": east},
        ),
    ]

    results = store.parley.many(*(["runs", "list", *args, "--limit", "1000", "--json"] for args, _ in cases))

    for (args, oracle), result in zip(cases, results, strict=True):
        runs, cursor = json_page(ok(result))
        expected = matching(rows, **oracle)
        assert [run["run_id"] for run in runs] == expected, args
        assert expected, f"{args} should match some runs"
        assert cursor is None
    recent = [run["run_id"] for run in json_page(results[3].stdout)[0]]
    assert sorted(recent) == sorted(store.recorded.ids)  # --since 2h: only the runs recorded this session


def test_runs_list_pages_newest_first_by_the_printed_cursor(store: Store) -> None:
    """120 runs besides the five recorded ones, --limit 50: three pages, each run once, newest first.

    Three runs share each timestamp, so page boundaries fall between runs of the same second. The middle
    page is asked for as --json with the text page's cursor, the last as text with the JSON page's cursor.
    """
    now = datetime.now(UTC)
    store.rows.insert([bulk_run(now - timedelta(hours=5, seconds=i // 3)) for i in range(120)])
    expected = [row.id for row in store.rows.all()]
    assert len(expected) == 120 + len(store.recorded.ids)

    first = ok(store.parley("runs", "list", "--limit", "50"))
    first_ids, cursor = text_page(first)
    assert cursor is not None
    middle, json_cursor = json_page(ok(store.parley("runs", "list", "--limit", "50", "--cursor", cursor, "--json")))
    assert json_cursor is not None
    last_ids, last_cursor = text_page(ok(store.parley("runs", "list", "--limit", "50", "--cursor", json_cursor)))

    assert last_cursor is None
    pages = [first_ids, [run["run_id"][:12] for run in middle], last_ids]
    assert [len(page) for page in pages] == [50, 50, 20 + len(store.recorded.ids)]
    seen = [run_id for page in pages for run_id in page]
    assert len(set(seen)) == len(seen)  # no run twice …
    assert seen == [run_id[:12] for run_id in expected]  # … none missing, newest first across pages
    newest = first.splitlines()[1]  # the refused `parley ask` was recorded last
    assert [newest.split()[0], *newest.split()[3:7]] == [
        *(store.recorded.refused[:12], "awaiting_review", "policy_violation", "1", "cli:bob")
    ]
    assert newest.endswith(REFUSED_QUESTION)
    assert "查上海和北京天气，对比并给穿衣建议。" in first  # the weather demo's question, as asked
    for run in middle:
        assert set(run) == SUMMARY_FIELDS
        assert datetime.fromisoformat(run["created_at"]).utcoffset() == timedelta(0)
    assert middle[0] | {"created_at": None} == {
        "run_id": expected[50],
        "feedback": {"up": 0, "down": 0},
        "created_at": None,
        "source": "slack",
        "asker": "U0BULK",
        "question": f"批量问题 bulk question: how did run {expected[50][:8]} go?",
        "status": "solved",
        "termination_reason": "answered",
        "steps": 2,
        "tool_calls": 1,
        "duration_ms": 1200,
    }


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def test_runs_refuse_bad_arguments_in_one_line(sqlite_store: Store) -> None:
    cases = [
        (["--cursor", "not-a-cursor!"], "--cursor"),
        (["--cursor", _b64("yesterday|abc")], "--cursor"),
        (["--since", "yesterday"], "--since"),
        (["--limit", "0"], "--limit"),
    ]

    *results, short_prefix, not_a_number = sqlite_store.parley.many(
        *(["runs", "list", *args] for args, _ in cases),
        ["runs", "show", "abc"],
        ["runs", "list", "--limit", "fifty"],
    )

    for (args, named), result in zip(cases, results, strict=True):
        assert named in one_line_error(result), args
    assert "no run 'abc' (give the whole id or at least 6 characters)" in one_line_error(short_prefix)
    # argparse's own refusal: its usage and the reason, no traceback
    assert not_a_number.returncode == EXIT_USAGE
    assert "--limit: invalid int value: 'fifty'" in not_a_number.stderr
    assert "Traceback" not in not_a_number.stderr


def test_runs_list_refuses_an_age_older_than_any_date(sqlite_store: Store) -> None:
    line = one_line_error(sqlite_store.parley("runs", "list", "--since", "99999999h"))
    assert "--since" in line
