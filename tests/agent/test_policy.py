"""Policies hold tool calls before they run; an approved run resumes from its snapshot, in any process."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from agent import (
    AgentConfig,
    Policies,
    RunHeld,
    RunResumed,
    RunSnapshot,
    RunStatus,
    TerminationReason,
    ToolCallFinished,
    ToolPolicy,
)
from tests.agent.toolbox import ScriptedTool, make_agent, replay

QUESTION = "Pay 1500 EUR to ops@vendor.example for invoice 42, then tell me the new balance."
TRANSFER = {"amount": 1500, "recipient": "ops@vendor.example", "memo": "invoice 42"}
POLICIES = {
    "policies": [
        {
            "tool": "transfer_funds",
            "hold_when": [{"argument": "amount", "above": 1000}],
            "reason": "Transfers over 1000 need a reviewer's approval",
        }
    ]
}

PLAN = [
    {"description": "The transfer is made", "kind": "evidence", "tool": "transfer_funds"},
    {"description": "The new balance is known", "kind": "evidence", "tool": "get_balance"},
]


def bank() -> tuple[ScriptedTool, ScriptedTool]:
    transfer = ScriptedTool("transfer_funds", lambda args: {"transfer_id": "T-77", "amount": args["amount"]})
    balance = ScriptedTool("get_balance", [{"balance": 8500}])
    return transfer, balance


def test_conditions_hold_fail_closed_and_need_exactly_one_operator():
    policies = Policies(
        [
            ToolPolicy.model_validate({"tool": "pay", "hold_when": [{"argument": "amount", "above": 1000}]}),
            ToolPolicy.model_validate(
                {"tool": "mail", "hold_when": [{"argument": "to", "not_in_domain": "example.com"}]}
            ),
            ToolPolicy.model_validate({"tool": "wipe", "requires_approval": True}),
        ]
    )
    assert policies.hold_reason("pay", {"amount": 1000}) is None
    assert "amount above 1000" in policies.hold_reason("pay", {"amount": "1000.01"})
    assert policies.hold_reason("pay", {"amount": "lots"}) is not None  # cannot be compared: held
    assert policies.hold_reason("pay", {}) is not None  # missing: held
    assert policies.hold_reason("mail", {"to": "a@mail.example.com"}) is None
    assert policies.hold_reason("mail", {"to": "a@example.com.evil.io"}) is not None
    assert policies.hold_reason("wipe", {}) == "every wipe call needs a reviewer's approval"
    assert policies.hold_reason("other", {"amount": 10**9}) is None
    assert policies.hold_reason("pay", None) is None  # unusable arguments: the executor refuses them

    with pytest.raises(ValidationError, match="exactly one operator"):
        ToolPolicy.model_validate({"tool": "pay", "hold_when": [{"argument": "amount", "above": 1, "below": 5}]})
    with pytest.raises(ValidationError, match="requires_approval"):
        ToolPolicy.model_validate({"tool": "pay"})
    with pytest.raises(ValidationError):
        AgentConfig.model_validate({"policies": [{"tool": "pay", "hold_when": [{"argument": "x", "regex": "."}]}]})


async def test_a_held_call_does_not_run_and_the_run_waits_for_review_with_a_snapshot():
    transfer, balance = bank()
    brain = replay(
        [
            {
                "calls": [
                    {"tool": "get_balance", "args": {}},
                    {"tool": "transfer_funds", "args": TRANSFER},
                ]
            }
        ]
    )
    agent, recorder = make_agent(brain, [transfer, balance], config=POLICIES)

    result = await agent.run(QUESTION)

    assert transfer.calls == []  # held: never executed
    assert balance.calls == [{}]  # the other call of the same step ran
    assert result.status is RunStatus.AWAITING_REVIEW
    assert result.termination_reason is TerminationReason.POLICY_VIOLATION
    escalation = result.escalation
    assert escalation is not None and escalation.kind == "held_action"
    assert escalation.message == "Transfers over 1000 need a reviewer's approval"
    assert [(c.tool, c.arguments) for c in escalation.held_calls] == [("transfer_funds", TRANSFER)]
    [held] = recorder.of(RunHeld)
    snapshot = RunSnapshot.model_validate(json.loads(json.dumps(held.snapshot.model_dump(mode="json"))))
    assert snapshot == held.snapshot  # survives JSON storage whole
    assert snapshot.step == 1 and snapshot.held == escalation.held_calls
    assert [s.tool for s in snapshot.sources] == ["get_balance"]


async def test_approval_runs_exactly_the_held_arguments_and_the_run_resumes_in_a_new_agent():
    transfer, balance = bank()
    first = replay([{"tool": "transfer_funds", "args": TRANSFER}], plan=PLAN)
    agent, recorder = make_agent(first, [transfer, balance], config=POLICIES)
    held = await agent.run(QUESTION)
    [event] = recorder.of(RunHeld)
    stored = json.loads(json.dumps(event.snapshot.model_dump(mode="json")))
    stored["messages"][-1]["tool_calls"][0]["arguments"]["amount"] = 999_999  # the transcript is not the source

    # Another process: a fresh agent and brain, only the stored snapshot.
    later = replay(
        [
            {"tool": "get_balance", "args": {}},
            {"final": "Transfer T-77 of 1500 EUR was made [1]; the balance is now 8500 [2]."},
        ]
    )
    resumed_agent, resumed_recorder = make_agent(later, [transfer, balance], config=POLICIES)
    result = await resumed_agent.resume(RunSnapshot.model_validate(stored), approved_by="U_REVIEWER")

    assert held.status is RunStatus.AWAITING_REVIEW
    assert transfer.calls == [TRANSFER]  # exactly what the reviewer saw, once
    assert result.run_id == held.run_id
    assert result.status is RunStatus.APPROVED
    assert result.termination_reason is TerminationReason.ANSWERED
    assert [c.tool for c in result.citations] == ["transfer_funds", "get_balance"]
    assert result.steps == 3 and result.tool_calls == 2
    [resumed] = resumed_recorder.of(RunResumed)
    assert resumed.approved_by == "U_REVIEWER" and resumed.held[0].arguments == TRANSFER
    steps = [e.step for e in resumed_recorder.of(ToolCallFinished)]
    assert steps == [1, 2]  # the held call belongs to the step that asked for it
    assert result.completed == ["The transfer is made", "The new balance is known"]  # the plan came along


async def test_an_approved_call_asked_again_is_not_held_twice_but_a_new_one_is():
    transfer, _ = bank()
    agent, recorder = make_agent(replay([{"tool": "transfer_funds", "args": TRANSFER}]), [transfer], config=POLICIES)
    await agent.run(QUESTION)
    [event] = recorder.of(RunHeld)
    bigger = {**TRANSFER, "amount": 5000}
    later = replay([{"tool": "transfer_funds", "args": TRANSFER}, {"tool": "transfer_funds", "args": bigger}])
    resumed_agent, _ = make_agent(later, [transfer], config=POLICIES)

    result = await resumed_agent.resume(event.snapshot, approved_by="U_REVIEWER")

    assert transfer.calls == [TRANSFER, TRANSFER]  # the approved one, then the same again (not re-held)
    assert result.status is RunStatus.AWAITING_REVIEW
    assert [c.arguments for c in result.escalation.held_calls] == [bigger]
