"""`parley runs export`: every matching run, as JSON Lines or CSV, to standard output or a file.

The bulk rows (1,100, seven per timestamp) cross the export's internal batches of 500 inside a run of
equal timestamps, so a batch boundary that skipped or repeated a run would show in the counts.
"""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.cli.runs import EXPORT_COLUMNS
from tests.bot.history.parley_cli import EXIT_OK, ok, one_line_error
from tests.bot.history.run_rows import bulk_run
from tests.bot.history.stores import Store

pytestmark = pytest.mark.slow  # starts `parley` processes: `pytest -m "not slow"` leaves them out

# What analysis relies on; the export may carry more columns (bot.cli.runs.EXPORT_COLUMNS, in that order).
CORE_COLUMNS = {
    *("id", "created_at", "finished_at", "source", "workspace_id", "channel_id", "thread_ts", "asker", "question"),
    *("status", "termination_reason", "answer", "steps", "llm_calls", "tool_calls", "retries", "critique_rounds"),
    *("tokens", "duration_ms", "brain", "replayed", "config_hash", "completed", "missing", "citations", "escalation"),
}
COLUMNS = list(EXPORT_COLUMNS)
WEATHER_QUESTION = "查上海和北京天气，对比并给穿衣建议。"
BULK = 1100


def insert_bulk(store: Store) -> None:
    now = datetime.now(UTC)
    store.rows.insert(
        [
            bulk_run(
                now - timedelta(days=1, seconds=i // 7),
                status="degraded" if i % 5 == 0 else "solved",
                termination_reason="gave_up" if i % 5 == 0 else "answered",
                answer='第一行 first line\nsecond line, with a comma and "quotes"' if i % 5 == 0 else "短答 [1]",
                citations=[{"marker": "[1]", "tool": "calculator", "arguments": {"expression": "1 + 1"}}],
            )
            for i in range(BULK)
        ]
    )


def jsonl(stdout: str) -> list[dict[str, Any]]:
    assert stdout.endswith("\n")
    return [json.loads(line) for line in stdout.splitlines()]


def as_csv_cell(value: Any) -> str:
    """What one JSON Lines value looks like in the CSV export."""
    if value is None:
        return ""
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def test_runs_export_writes_every_matching_run_as_jsonl_or_csv(store: Store) -> None:
    insert_bulk(store)
    everything = [row.id for row in store.rows.all()]
    assert len(everything) == BULK + len(store.recorded.ids)
    partial = [row.id for row in store.rows.all() if row.status in ("degraded", "awaiting_review")]
    filters = ["--status", "degraded", "--status", "awaiting_review"]

    whole, to_file, as_jsonl = store.parley.many(
        ["runs", "export", "--format", "jsonl"],
        ["runs", "export", "--format", "csv", *filters, "--output", "runs.csv"],
        ["runs", "export", "--format", "jsonl", *filters],
    )

    rows = jsonl(ok(whole))
    assert [row["id"] for row in rows] == everything  # newest first, none twice, none missing
    assert set(COLUMNS) >= CORE_COLUMNS
    assert all(list(row) == COLUMNS for row in rows)
    assert WEATHER_QUESTION in whole.stdout  # the text itself, not \\u escapes
    weather = next(row for row in rows if row["id"] == store.recorded.weather)
    assert weather["question"] == WEATHER_QUESTION
    assert "穿衣建议" in weather["answer"]
    assert [c["marker"] for c in weather["citations"]] == ["[1]", "[2]", "[3]"]
    assert (weather["status"], weather["termination_reason"], weather["steps"]) == ("solved", "answered", 5)
    assert datetime.fromisoformat(weather["created_at"]) < datetime.fromisoformat(weather["finished_at"])

    filtered = jsonl(ok(as_jsonl))
    assert [row["id"] for row in filtered] == partial
    assert ok(to_file) == f"exported {len(partial)} runs to runs.csv\n"
    with (store.parley.cwd / "runs.csv").open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        assert reader.fieldnames == COLUMNS
        cells = list(reader)
    # Every cell — multi-line answers with commas and quotes, Chinese, JSON lists — reads back as exported.
    assert cells == [{key: as_csv_cell(value) for key, value in run.items()} for run in filtered]
    assert any("\n" in cell["answer"] and '"quotes"' in cell["answer"] for cell in cells)
    refused = next(cell for cell in cells if cell["id"] == store.recorded.refused)
    assert json.loads(refused["escalation"])["reason"] == "policy_violation"


def test_runs_export_stops_quietly_when_the_reader_leaves(store: Store) -> None:
    """`parley runs export … | head -1`: the reader closes the pipe early; no traceback, exit 0."""
    insert_bulk(store)  # far more output than a pipe buffers, so the writer is still writing
    process = store.parley.start("runs", "export", "--format", "jsonl")
    assert process.stdout is not None and process.stderr is not None

    first = process.stdout.readline()
    process.stdout.close()
    returncode = process.wait(timeout=60)
    stderr = process.stderr.read().decode()
    process.stderr.close()

    assert json.loads(first)["id"] == store.recorded.refused
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    assert returncode == EXIT_OK, stderr


def test_runs_export_refuses_an_output_it_cannot_write(sqlite_store: Store) -> None:
    line = one_line_error(sqlite_store.parley("runs", "export", "--format", "csv", "--output", "missing/runs.csv"))
    assert "missing/runs.csv" in line


def test_runs_export_leaves_the_output_alone_when_refused(sqlite_store: Store) -> None:
    kept = sqlite_store.parley.write("runs.csv", "last week's export\n")

    result = sqlite_store.parley("runs", "export", "--format", "csv", "--since", "yesterday", "--output", "runs.csv")

    assert "--since" in one_line_error(result)
    assert kept.read_text(encoding="utf-8") == "last week's export\n"
