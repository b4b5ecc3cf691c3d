"""`parley review list|approve|reject`: escalations decided from the command line, on SQLite and PostgreSQL.

Every command is `python -m bot.cli` in its own process, as an operator runs it (see tests/bot/history). The
runs under review are made the way people make them: `parley ask --replay … --config policies.yaml`, whose
policy holds a calculator call before it runs, and `parley ask` with the LLM unreachable (recovery ran out:
`llm_unavailable`, escalated by default). What the store holds afterwards is read with `parley runs show
--json`. The asker is `cli:alice`; the operator deciding is `cli:carol`.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.bot.history.parley_cli import TIMEOUT_S, ParleyCli, ok, one_line_error
from tests.bot.history.postgres import create_database, drop_database
from tests.bot.history.run_rows import RunRows, bulk_run
from tests.bot.store.postgres import emptied

pytestmark = pytest.mark.slow  # starts `parley` processes: `pytest -m "not slow"` leaves them out

BACKENDS = ("sqlite", "postgresql")
ASKER = "cli:alice"
OPERATOR = "carol"
ACTOR = f"cli:{OPERATOR}"
EXIT_ALREADY_DECIDED = 1

QUESTION = "What is 2 ** 10?"
HELD_ARGUMENTS = {"expression": "2 ** 10"}
HOLD_REASON = "Powers need a reviewer's approval"
ANSWER = "2 ** 10 = 1024 [1]"
POLICIES = f"""\
tools:
  - builtin: calculator
policies:
  - tool: calculator
    hold_when: [{{argument: expression, matches: "\\\\*\\\\*"}}]
    reason: {HOLD_REASON}
"""
# The first part of the run: the model asks for the calculator, which the policy holds.
HELD_SCRIPT = f"""\
question: "{QUESTION}"
plan:
  - {{description: "2 ** 10 computed by the calculator", tool: calculator, mentions: ["2"]}}
  - {{description: "The answer states the power", kind: answer, answer_terms: ["1024"]}}
decisions:
  - thought: "Compute it."
    tool: calculator
    args: {{expression: "2 ** 10"}}
"""
# The rest, played back after the approval: the held call has run; the model answers from it.
REST_SCRIPT = f"""\
question: "{QUESTION}"
decisions:
  - thought: "The calculator answered."
    final: "{ANSWER}"
"""
EXHAUSTED_QUESTION = "What is 47 times 12?"
FAST_RETRIES = """\
limits: {llm_max_retries: 1, retry_backoff_base_s: 0.01, retry_backoff_max_s: 0.02}
tools:
  - builtin: calculator
"""
REVIEWERS_ANSWER = "47 × 12 = 564 (worked out by the reviewer, the model being down)."


# --- the stores -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """(a migrated SQLite file to copy, a migrated PostgreSQL database emptied before each test)."""
    sqlite_dir = tmp_path_factory.mktemp("review_sqlite")
    template = sqlite_dir / "parley.db"
    name, postgres_url = create_database("parley_review")
    try:
        clis = (ParleyCli(sqlite_dir, f"sqlite:///{template}"), ParleyCli(sqlite_dir, postgres_url))
        with ThreadPoolExecutor(2) as pool:
            for done in pool.map(lambda cli: cli("db", "upgrade"), clis):
                ok(done)
        yield template, postgres_url
    finally:
        drop_database(name)


def _parley(backend: str, migrated: tuple[Path, str], tmp_path: Path) -> ParleyCli:
    template, postgres_url = migrated
    if backend == "sqlite":
        path = tmp_path / "parley.db"
        shutil.copyfile(template, path)
        return ParleyCli(tmp_path, f"sqlite:///{path}")
    asyncio.run(_empty(postgres_url))
    return ParleyCli(tmp_path, postgres_url)


async def _empty(url: str) -> None:
    async with emptied(url):
        pass


@pytest.fixture(params=BACKENDS)
def parley(request: pytest.FixtureRequest, migrated: tuple[Path, str], tmp_path: Path) -> ParleyCli:
    """`parley` on an empty, migrated store of one backend, in a working directory with the test's files."""
    cli = _parley(request.param, migrated, tmp_path)
    cli.write("policies.yaml", POLICIES)
    cli.write("held.yaml", HELD_SCRIPT)
    cli.write("rest.yaml", REST_SCRIPT)
    cli.write("fast.yaml", FAST_RETRIES)
    return cli


@pytest.fixture
def sqlite_parley(migrated: tuple[Path, str], tmp_path: Path) -> ParleyCli:
    """For refusals that do not depend on the database."""
    cli = _parley("sqlite", migrated, tmp_path)
    cli.write("policies.yaml", POLICIES)
    cli.write("held.yaml", HELD_SCRIPT)
    cli.write("rest.yaml", REST_SCRIPT)
    return cli


# --- helpers ----------------------------------------------------------------------------------------------


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run(parley: ParleyCli, *args: str, user: str = OPERATOR, **env: str) -> subprocess.CompletedProcess[str]:
    """`parley` with extra environment variables (ParleyCli's own call takes none)."""
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        cwd=parley.cwd,
        env=parley.environment(user, **env),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=TIMEOUT_S,
        check=False,
    )


def ask_held(parley: ParleyCli) -> dict[str, Any]:
    asked = parley(
        "ask", QUESTION, "--json", "--quiet", "--replay", "held.yaml", "--config", "policies.yaml", user="alice"
    )
    result = json.loads(ok(asked))
    assert (result["status"], result["termination_reason"]) == ("awaiting_review", "policy_violation")
    assert result["escalation"]["kind"] == "held_action"
    return result


def ask_exhausted(parley: ParleyCli) -> dict[str, Any]:
    llm = {"PARLEY_LLM_BASE_URL": f"http://127.0.0.1:{closed_port()}/v1", "PARLEY_LLM_MODEL": "test"}
    asked = run(parley, "ask", EXHAUSTED_QUESTION, "--json", "--quiet", "--config", "fast.yaml", user="alice", **llm)
    result = json.loads(ok(asked))
    assert (result["status"], result["termination_reason"]) == ("awaiting_review", "llm_unavailable")
    assert result["escalation"]["kind"] == "exhausted"
    return result


def trace(parley: ParleyCli, run_id: str) -> dict[str, Any]:
    return json.loads(ok(parley("runs", "show", run_id, "--json")))


def pending(parley: ParleyCli) -> list[dict[str, Any]]:
    return json.loads(ok(parley("review", "list", "--json")))["escalations"]


def already_decided(result: subprocess.CompletedProcess[str], status: str) -> str:
    assert result.returncode == EXIT_ALREADY_DECIDED, f"exit {result.returncode}; stderr:\n{result.stderr}"
    assert result.stdout == ""
    line = result.stderr.strip()
    assert line.startswith(f"parley: Already decided: {status} by {ACTOR} at "), line
    decided_at = datetime.strptime(line.rsplit(" at ", 1)[1], "%Y-%m-%d %H:%M:%S UTC").replace(tzinfo=UTC)
    assert abs((datetime.now(UTC) - decided_at).total_seconds()) < 120
    return line


def actions(trace_: dict[str, Any]) -> list[tuple[str, str, str | None, str | None]]:
    return [(e["action"], e["actor"], e["from_status"], e["to_status"]) for e in trace_["audit"]]


# --- held actions -----------------------------------------------------------------------------------------


def test_a_held_call_is_listed_approved_by_prefix_and_the_run_finishes(parley: ParleyCli) -> None:
    held = ask_held(parley)
    run_id = held["run_id"]

    listed_text, listed_json = (ok(r) for r in parley.many(("review", "list"), ("review", "list", "--json")))

    assert listed_text.startswith("1 escalation waiting for a decision, oldest first:\n")
    head = next(line for line in listed_text.splitlines() if line.startswith(run_id[:12]))
    assert re.fullmatch(rf"{run_id[:12]}  waiting \d+[smhd][^ ]*  held_action  asked by {ASKER} via cli", head)
    assert f"  Q: {QUESTION}" in listed_text
    assert f"  why: {HOLD_REASON}" in listed_text
    held_call = held["escalation"]["held_calls"][0]
    assert f'  held: calculator {{"expression": "2 ** 10"}}  (call {held_call["id"]})' in listed_text
    [entry] = json.loads(listed_json)["escalations"]
    assert (entry["run_id"], entry["kind"], entry["asker"], entry["question"]) == (
        run_id,
        "held_action",
        ASKER,
        QUESTION,
    )
    assert entry["message"] == HOLD_REASON
    assert [(c["tool"], c["arguments"]) for c in entry["held_calls"]] == [("calculator", HELD_ARGUMENTS)]

    approved = run(parley, "review", "approve", run_id[:8], "--replay", "rest.yaml", "--config", "policies.yaml")
    again = run(parley, "review", "approve", run_id[:8], "--replay", "rest.yaml", "--config", "policies.yaml")

    shown = ok(approved)
    assert shown.startswith(ANSWER + "\n")  # as `parley ask` prints a result
    assert '  [1] calculator({"expression": "2 ** 10"})' in shown
    assert f"status: approved · reason: answered · steps: 2 · run: {run_id}" in shown
    assert f"Approved by {ACTOR}" in approved.stderr
    assert "✓ calculator" in approved.stderr  # the held call ran, shown as it ran
    already_decided(again, "approved")

    after, waiting = trace(parley, run_id), pending(parley)
    stored = after["run"]
    assert (stored["status"], stored["termination_reason"], stored["answer"]) == ("approved", "answered", ANSWER)
    assert [c["tool"] for c in stored["citations"]] == ["calculator"]
    # The held call ran once (not again on the second approval), with exactly the held arguments.
    [call] = after["tool_calls"]
    assert (call["tool"], call["arguments"], call["ok"], call["step"]) == ("calculator", HELD_ARGUMENTS, True, 1)
    assert call["tool_call_id"] == held_call["id"]
    [escalation] = after["escalations"]
    assert (escalation["status"], escalation["decided_by"]) == ("approved", ACTOR)
    [review] = [v for v in after["verdicts"] if v["kind"] == "review"]
    assert (review["decision"], review["decided_by"]) == ("approved", ACTOR)
    audit = actions(after)
    assert audit[-3:] == [
        ("review_approved", ACTOR, "awaiting_review", "running"),
        ("run_resumed", "engine", "running", "running"),
        ("run_finished", "engine", "running", "approved"),
    ]
    resumed = next(e for e in after["audit"] if e["action"] == "run_resumed")
    assert resumed["detail"]["approved_by"] == ACTOR
    assert [h["arguments"] for h in resumed["detail"]["held"]] == [HELD_ARGUMENTS]
    assert stored["asker"] == ASKER  # the operator decided; the run is still alice's
    assert waiting == []
    assert ok(parley("review", "list")) == "No escalations are waiting for a decision.\n"


def test_a_rejected_held_call_never_runs_and_the_reason_is_kept(parley: ParleyCli) -> None:
    run_id = ask_held(parley)["run_id"]

    no_reason, blank_reason = parley.many(
        ("review", "reject", run_id[:10]), ("review", "reject", run_id[:10], "--reason", "   ")
    )
    rejected = run(parley, "review", "reject", run_id[:10], "--reason", "Powers are not for today.")
    approve_after = run(parley, "review", "approve", run_id, "--replay", "rest.yaml", "--config", "policies.yaml")

    for refused in (no_reason, blank_reason):
        assert "--reason" in one_line_error(refused)
    assert ok(rejected).startswith(f"Rejected by {ACTOR}: Powers are not for today.\n")
    assert f"status: rejected · run: {run_id}" in rejected.stdout
    already_decided(approve_after, "rejected")
    after = trace(parley, run_id)
    assert after["run"]["status"] == "rejected"
    assert after["run"]["finished_at"] is not None
    assert after["tool_calls"] == []  # held, then rejected: never ran
    [escalation] = after["escalations"]
    assert (escalation["status"], escalation["decided_by"], escalation["decision_reason"]) == (
        "rejected",
        ACTOR,
        "Powers are not for today.",
    )
    [review] = [v for v in after["verdicts"] if v["kind"] == "review"]
    assert (review["decision"], review["decided_by"], review["reason"]) == (
        "rejected",
        ACTOR,
        "Powers are not for today.",
    )
    assert actions(after)[-1] == ("review_rejected", ACTOR, "awaiting_review", "rejected")
    assert after["audit"][-1]["detail"] == {"reason": "Powers are not for today."}
    assert pending(parley) == []


# --- escalations with nothing to resume ---------------------------------------------------------------------


def test_an_exhausted_run_is_approved_with_the_reviewers_answer(parley: ParleyCli) -> None:
    asked = ask_exhausted(parley)
    run_id = asked["run_id"]
    parley.write("answer.txt", f"\n{REVIEWERS_ANSWER}\n\n")

    listed = ok(parley("review", "list"))
    no_answer = run(parley, "review", "approve", run_id[:12])
    approved = run(parley, "review", "approve", run_id[:12], "--answer-file", "answer.txt")
    twice = run(parley, "review", "approve", run_id[:12], "--answer", "something else")

    assert f"{run_id[:12]}  waiting " in listed and "  exhausted  " in listed
    assert "(llm_unavailable, L2)" in listed
    assert "  draft: Partial answer" in listed  # what the reviewer edits from
    line = one_line_error(no_answer)
    assert "--answer" in line and "exhausted (llm_unavailable)" in line
    shown = ok(approved)
    assert shown == f"Approved by {ACTOR}\n\n{REVIEWERS_ANSWER}\n\nstatus: approved · run: {run_id}\n"
    already_decided(twice, "approved")
    after = trace(parley, run_id)
    assert (after["run"]["status"], after["run"]["answer"]) == ("approved", REVIEWERS_ANSWER)
    assert after["run"]["termination_reason"] == "llm_unavailable"  # how the engine ended stays recorded
    [escalation] = after["escalations"]
    assert (escalation["kind"], escalation["status"], escalation["decided_by"]) == ("exhausted", "approved", ACTOR)
    assert escalation["final_answer"] == REVIEWERS_ANSWER
    assert escalation["draft_answer"] == asked["answer"]
    assert actions(after)[-1] == ("review_approved", ACTOR, "awaiting_review", "approved")


def test_an_exhausted_run_can_be_rejected_and_approve_json_reports_the_decision(parley: ParleyCli) -> None:
    first, second = ask_exhausted(parley)["run_id"], ask_exhausted(parley)["run_id"]

    listed = pending(parley)
    approved = run(parley, "review", "approve", second, "--answer", " 564 ", "--json")
    rejected = run(parley, "review", "reject", first, "--reason", "Ask again once the model is back.", "--json")

    assert [e["run_id"] for e in listed] == [first, second]  # oldest first
    decision = json.loads(ok(approved))
    assert (decision["run_id"], decision["decision"], decision["decided_by"], decision["answer"]) == (
        second,
        "approved",
        ACTOR,
        "564",
    )
    refusal = json.loads(ok(rejected))
    assert (refusal["decision"], refusal["reason"]) == ("rejected", "Ask again once the model is back.")
    statuses = {run_id: trace(parley, run_id)["run"]["status"] for run_id in (first, second)}
    assert statuses == {first: "rejected", second: "approved"}


# --- refusals: nothing is decided -----------------------------------------------------------------------------


def test_an_approval_that_cannot_go_through_is_refused_before_anything_is_decided(sqlite_parley: ParleyCli) -> None:
    parley = sqlite_parley
    run_id = ask_held(parley)["run_id"]
    parley.write("no_calculator.yaml", "tools:\n  - builtin: knowledge_lookup\n")

    no_llm, missing_tool, answer_on_held = (
        one_line_error(result)
        for result in parley.many(
            ("review", "approve", run_id),  # no --replay, and no LLM configured
            ("review", "approve", run_id, "--replay", "rest.yaml", "--config", "no_calculator.yaml"),
            ("review", "approve", run_id, "--answer", "1024", "--config", "policies.yaml"),
        )
    )
    still, after = pending(parley), trace(parley, run_id)

    assert "no LLM is configured" in no_llm
    assert "calculator" in missing_tool and "--config" in missing_tool
    assert "--answer is for escalations without held calls" in answer_on_held
    assert [e["run_id"] for e in still] == [run_id]
    assert after["run"]["status"] == "awaiting_review" and after["tool_calls"] == []
    assert after["escalations"][0]["status"] == "pending"
    assert not any(e["action"].startswith("review_") for e in after["audit"])


def test_an_approval_of_a_saved_state_this_version_cannot_read_is_refused_before_anything_is_decided(
    sqlite_parley: ParleyCli,
) -> None:
    """A saved state without a field (written by another version) is refused in one line, naming the field —
    not resumed with a silent 0."""
    parley = sqlite_parley
    run_id = ask_held(parley)["run_id"]
    with sqlite3.connect(parley.database_url.removeprefix("sqlite:///")) as store:
        store.execute("UPDATE runs SET snapshot = json_remove(snapshot, '$.counters.tokens') WHERE id = ?", (run_id,))

    refused = one_line_error(parley("review", "approve", run_id, "--replay", "rest.yaml", "--config", "policies.yaml"))
    still, after = pending(parley), trace(parley, run_id)

    assert "its saved state cannot be read by this version (counters.tokens: Field required)" in refused
    assert "reject it, or ask the question again" in refused
    assert [e["run_id"] for e in still] == [run_id]
    assert after["run"]["status"] == "awaiting_review" and after["tool_calls"] == []
    assert not any(e["action"].startswith("review_") for e in after["audit"])


def test_runs_that_cannot_be_named_or_have_nothing_to_decide_are_one_line(sqlite_parley: ParleyCli) -> None:
    parley = sqlite_parley
    solved = f"5017ed{'0' * 26}"
    RunRows(parley.database_url).insert(
        [bulk_run(datetime.now(UTC), id=run_id) for run_id in (solved, f"abcdef0{'0' * 25}", f"abcdef1{'0' * 25}")]
    )  # a solved run without an escalation; two runs whose ids share a prefix

    unknown, too_short, ambiguous, no_escalation, bad_limit = (
        one_line_error(result)
        for result in parley.many(
            ("review", "approve", "0123456789abcdef"),
            ("review", "reject", "abcd", "--reason", "no"),
            ("review", "reject", "abcdef", "--reason", "no"),
            ("review", "approve", solved[:8], "--answer", "yes"),
            ("review", "list", "--limit", "0"),
        )
    )

    assert unknown == "parley: no run '0123456789abcdef'"
    assert "at least 6 characters" in too_short
    assert "names more than one run" in ambiguous
    assert no_escalation == f"parley: run {solved[:12]} (solved) has no escalation: there is nothing to decide"
    assert "--limit" in bad_limit


def test_an_unreachable_database_is_one_line(tmp_path: Path) -> None:
    parley = ParleyCli(tmp_path, f"postgresql://postgres@127.0.0.1:{closed_port()}/parley")

    for command in (("review", "list"), ("review", "approve", "abcdef123", "--answer", "x")):
        line = one_line_error(parley(*command))
        assert "127.0.0.1" in line


def test_review_help_names_the_three_commands(tmp_path: Path) -> None:
    shown = ok(ParleyCli(tmp_path, "sqlite:///unused.db")("review", "--help"))

    for command in ("list", "approve", "reject"):
        assert command in shown
