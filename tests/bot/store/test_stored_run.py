"""StoredRun: a run read back from the store is the RunResult the engine gave, and every view renders it alike.

One real run of each kind of end goes through the engine into the store (PostgreSQL and SQLite); read back,
it prints in the terminal exactly as `parley ask` printed it live, and makes the same Slack thread; `parley runs
show` names the same outcome and lists the same footnotes. Rows older versions wrote still read.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agent import Citation, OutcomeKind, RunStatus
from bot.cli.render import render_citations, render_result
from bot.cli.runs import render_trace
from bot.slack.blocks import answer_messages
from bot.store import Database
from bot.store.escalations import current_escalation
from bot.store.models import EscalationRecord, Run
from bot.store.queries import load_trace
from tests.bot.store.outcomes import RUNS
from tests.bot.store.recording import SLACK, record, stored_result


@pytest.mark.parametrize("kind", list(OutcomeKind))
async def test_stored_run_is_the_live_result_and_renders_like_it(db: Database, kind: OutcomeKind) -> None:
    agent, question = RUNS[kind]()
    live, _ = await record(agent, db, question, origin=SLACK)
    assert live.outcome is kind  # the scenario

    trace = await load_trace(db, live.run_id[:8])
    stored = trace.run

    assert stored.result == live == stored_result(trace.columns)
    assert stored.outcome is kind
    assert render_result(stored.result) == render_result(live)  # the terminal, as `parley ask` printed it
    assert answer_messages(stored.result) == answer_messages(live)  # the Slack thread
    shown = render_trace(trace)  # `parley runs show`
    assert f"\n  outcome      {kind.value}\n" in shown
    heading = "Answer:" if kind is OutcomeKind.ANSWERED else "Final (as the user saw it):"
    assert f"\n{heading}\n{live.answer}\n" in shown
    if live.citations:
        assert "\nSources:\n" + "\n".join(render_citations(live.citations)) + "\n" in shown
    else:
        assert "\nSources:\n" not in shown
    assert stored.origin == SLACK
    # A run that went to people reads back, from its escalation, as exactly what the engine handed them.
    if live.escalation is not None:
        assert len(trace.escalations) == 1
        escalated = await current_escalation(db, live.run_id)
        assert escalated is not None and escalated.as_escalated.result == live


async def test_stored_run_has_no_result_before_the_run_ends(db: Database) -> None:
    now = datetime.now(UTC)
    async with db.sessions() as session, session.begin():
        session.add(
            Run(id="running0001", source="cli", asker="cli:bob", question="Q?", status="running", created_at=now)
        )

    trace = await load_trace(db, "running0001")

    assert (trace.run.status, trace.run.result, trace.run.outcome) == (RunStatus.RUNNING, None, None)
    shown = render_trace(trace)
    assert "  status       running (not finished)\n  outcome      not finished\n" in shown
    assert "\nFinal (as the user saw it):\n(none yet)\n" in shown


async def test_stored_run_reads_rows_older_versions_wrote(db: Database, caplog: pytest.LogCaptureFixture) -> None:
    """Before the engine escalated refusals a refused run was `refused`; its escalation had no kind, its
    citations no call id; and a citation no longer readable is left out, not the run."""
    now = datetime.now(UTC)
    old = Run(
        id="oldrefused01",
        source="slack",
        asker="U0OLD",
        question="Send 5000 to bob",
        status="refused",
        termination_reason="policy_violation",
        answer="Partial answer — a policy forbids this request.",
        citations=[{"marker": "[1]", "tool": "calculator", "arguments": {"expression": "6 * 7"}, "step": 1}, "[2]"],
        escalation={"reason": "policy_violation", "level": "L4", "message": "transfers above 1000 need approval"},
        created_at=now,
    )
    async with db.sessions() as session, session.begin():
        session.add(old)
        await session.flush()
        session.add(
            EscalationRecord(
                run_id=old.id, reason="policy_violation", level="L4", message="transfers above 1000", created_at=now
            )
        )

    trace = await load_trace(db, old.id)
    result = trace.run.result

    assert result is not None and trace.run.outcome is OutcomeKind.REFUSED
    assert result.citations == [
        Citation(marker="[1]", tool="calculator", tool_call_id="", step=1, arguments={"expression": "6 * 7"})
    ]
    assert result.escalation is not None and result.escalation.kind == "policy"
    assert (result.duration_ms, result.grounding, result.degraded) == (0, [], None)
    assert "run oldrefused01: its stored Citation does not read" in caplog.text  # "[2]": left out, and said
    assert render_result(result).startswith("REFUSED — transfers above 1000 need approval\n")
    shown = render_trace(trace)
    assert "  outcome      refused\n" in shown
    assert '\nSources:\n  [1] calculator({"expression": "6 * 7"}) — step 1, call \n' in shown
    # The reviewer message's view of it: the same kind of end, from the escalation row.
    escalated = await current_escalation(db, old.id)
    assert escalated is not None and escalated.as_escalated.outcome is OutcomeKind.REFUSED
