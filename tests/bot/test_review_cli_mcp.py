"""A destructive MCP tool held and approved the way an operator does it, on PostgreSQL: `parley ask` stops at the
refund (nothing executed, the run `awaiting_review`), `parley review approve` runs it exactly once with the
reviewed arguments and the run finishes; a second approval runs nothing. Each command is its own process, and
each starts the CRM as a stdio child (tests/fakes/mcp_crm.py), whose ledger counts the refunds it executed."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.bot.history.parley_cli import ParleyCli, ok
from tests.bot.history.postgres import create_database, drop_database

pytestmark = pytest.mark.slow

CRM = Path(__file__).resolve().parents[1] / "fakes" / "mcp_crm.py"
QUESTION = "Refund order A-1001 in full, please."
ARGUMENTS = {"order_id": "A-1001", "amount": 129.5}
ANSWER = "Order A-1001 was refunded 129.5 EUR [1]."
EXIT_ALREADY_DECIDED = 1


@pytest.fixture
def parley(tmp_path: Path) -> Iterator[ParleyCli]:
    name, url = create_database("parley_mcp_review")
    try:
        cli = ParleyCli(tmp_path, url)
        ok(cli("db", "upgrade"))
        mcp = {
            "command": [sys.executable, str(CRM)],
            "name": "crm",
            "timeout_s": 20,
            "env": {"CRM_LEDGER": str(tmp_path / "ledger.txt")},
        }
        cli.write("parley.yaml", yaml.safe_dump({"tools": [{"builtin": "calculator"}, {"mcp": mcp}]}))
        held = {"question": QUESTION, "decisions": [{"tool": "crm_refund", "args": ARGUMENTS}]}
        cli.write("held.yaml", yaml.safe_dump(held, allow_unicode=True))
        cli.write("rest.yaml", yaml.safe_dump({"question": QUESTION, "decisions": [{"final": ANSWER}]}))
        yield cli
    finally:
        drop_database(name)


def test_a_held_mcp_refund_runs_exactly_once_when_approved(parley: ParleyCli) -> None:
    ledger = parley.cwd / "ledger.txt"
    asked = parley("ask", QUESTION, "--json", "--quiet", "--replay", "held.yaml", "--config", "parley.yaml")
    held = json.loads(ok(asked))
    assert (held["status"], held["escalation"]["kind"]) == ("awaiting_review", "held_action")
    assert "destructive" in held["escalation"]["message"]
    [held_call] = held["escalation"]["held_calls"]
    assert (held_call["tool"], held_call["arguments"]) == ("crm_refund", ARGUMENTS)
    assert not ledger.exists()  # held: nothing was executed

    listed = ok(parley("review", "list"))
    assert "crm_refund" in listed and "A-1001" in listed

    run_id = held["run_id"]
    approve = ("review", "approve", run_id, "--replay", "rest.yaml", "--config", "parley.yaml", "--quiet")
    approved = parley(*approve, user="carol")
    shown = ok(approved)
    assert shown.startswith(ANSWER + "\n")
    assert f"status: approved · reason: answered · steps: 2 · run: {run_id}" in shown
    assert ledger.read_text(encoding="utf-8") == "A-1001 129.5\n"  # once, with the reviewed arguments

    again = parley(*approve, user="carol")
    assert again.returncode == EXIT_ALREADY_DECIDED and "Already decided: approved" in again.stderr
    assert ledger.read_text(encoding="utf-8") == "A-1001 129.5\n"  # not again

    trace = json.loads(ok(parley("runs", "show", run_id, "--json")))
    [call] = trace["tool_calls"]
    assert (call["tool"], call["arguments"], call["ok"], call["tool_call_id"]) == (
        "crm_refund",
        ARGUMENTS,
        True,
        held_call["id"],
    )
    assert [c["tool"] for c in trace["run"]["citations"]] == ["crm_refund"]
