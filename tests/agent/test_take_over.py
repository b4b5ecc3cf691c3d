"""A run whose process stopped is taken over from its last checkpoint: the engine's half of crash-safe runs.

The journal here keeps what a store would; a `Crash` (a BaseException, as a killed process leaves nothing to
catch) stops the first process in the middle of a tool call. The second process is a new Agent: it sees only
what the journal kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from agent import (
    CallIntent,
    ErrorCode,
    Interrupted,
    JournalRefused,
    RunFinished,
    RunSnapshot,
    RunStatus,
    RunTakenOver,
    StepDecided,
    TerminationReason,
)
from tests.agent.toolbox import ScriptedTool, make_agent, replay

QUESTION = "What is the weather in Paris?"
WEATHER = {"city": "Paris", "temperature_c": 21}
FINAL = "Paris is at 21°C [1]."


class Crash(BaseException):
    """The process died here (kill -9): nothing in it runs on."""


class Journal:
    """What the store keeps of a run: its checkpoints and the intents of its calls."""

    def __init__(self, *, refuse: bool = False) -> None:
        self.checkpoints: list[RunSnapshot] = []
        self.intents: list[tuple[int, CallIntent]] = []
        self._refuse = refuse

    async def checkpoint(self, snapshot: RunSnapshot) -> None:
        self.checkpoints.append(snapshot)

    async def intend(self, step: int, calls: Sequence[CallIntent]) -> None:
        if self._refuse:
            raise JournalRefused("another process holds this run")
        self.intents.extend((step, call) for call in calls)

    def interrupted(self, *, spent_s: float = 0.0) -> Interrupted:
        last = self.checkpoints[-1]
        unfinished = tuple(call for step, call in self.intents if step > last.step)
        return Interrupted(snapshot=last, intents=unfinished, resumed_by="replica-b", spent_s=spent_s)


def crashing_once(result: Any) -> Any:
    """A tool whose first call kills its process midway; later calls return `result`."""
    calls = {"n": 0}

    def answer(arguments: dict[str, Any]) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise Crash()
        return result

    return answer


async def first_process(tool: ScriptedTool, config: dict[str, Any]) -> Journal:
    journal = Journal()
    brain = replay([{"tool": tool.spec.name, "args": {"city": "Paris"}}, {"final": FINAL}])
    agent, _ = make_agent(brain, [tool], config=config)
    with pytest.raises(Crash):
        await agent.run(QUESTION, run_id="r1", journal=journal)
    return journal


async def test_an_idempotent_call_in_flight_is_run_once_more_and_the_run_answers() -> None:
    tool = ScriptedTool("get_weather", crashing_once(WEATHER))
    config: dict[str, Any] = {"tools": [{"builtin": "get_weather"}]}  # a built-in that reads: idempotent
    journal = await first_process(tool, config)
    assert [c.step for c in journal.checkpoints] == [0] and [s for s, _ in journal.intents] == [1]

    agent, recorder = make_agent(replay([{"final": FINAL}]), [tool], config=config)
    result = await agent.take_over(journal.interrupted(), journal=journal)

    assert result.termination_reason is TerminationReason.ANSWERED and result.answer == FINAL
    assert len(tool.calls) == 2  # the call in flight, and once more
    [taken] = recorder.of(RunTakenOver)
    assert (taken.step, taken.by, taken.rerun, taken.unknown) == (0, "replica-b", [journal.intents[0][1].id], [])
    assert [c.step for c in journal.checkpoints] == [0, 1]


async def test_a_call_that_acts_is_never_run_again_and_the_run_says_its_outcome_is_unknown() -> None:
    tool = ScriptedTool("book_table", crashing_once({"booking": "B-1"}))
    config: dict[str, Any] = {"tools": [{"builtin": "book_table", "acting": True}]}
    journal = await first_process(tool, config)

    agent, recorder = make_agent(replay([{"final": "unused"}]), [tool], config=config)
    result = await agent.take_over(journal.interrupted(), journal=journal)

    assert len(tool.calls) == 1  # only the call in flight when the first process died
    assert result.status is RunStatus.AWAITING_REVIEW and result.escalation is not None
    assert result.termination_reason is TerminationReason.IRRECOVERABLE_ERROR
    assert "took effect is unknown" in result.answer and "book_table" in result.answer
    [taken] = recorder.of(RunTakenOver)
    assert taken.rerun == [] and taken.unknown == [journal.intents[0][1].id]
    [finished] = recorder.of(RunFinished)
    assert finished.result.run_id == "r1"


async def test_a_tool_declared_idempotent_that_a_policy_holds_is_not_run_again() -> None:
    tool = ScriptedTool("get_weather", crashing_once(WEATHER))
    config: dict[str, Any] = {
        "tools": [{"builtin": "get_weather", "idempotent": True}],
        "policies": [{"tool": "get_weather", "hold_when": [{"argument": "city", "equals": "Lyon"}]}],
    }
    journal = await first_process(tool, config)

    agent, _ = make_agent(replay([{"final": "unused"}]), [tool], config=config)
    result = await agent.take_over(journal.interrupted(), journal=journal)

    assert len(tool.calls) == 1 and "took effect is unknown" in result.answer


async def test_the_model_sees_the_unknown_outcome_and_may_answer_from_what_it_has() -> None:
    weather = ScriptedTool("get_weather", [WEATHER])
    booking = ScriptedTool("book_table", crashing_once({"booking": "B-1"}))
    config: dict[str, Any] = {"tools": [{"builtin": "get_weather"}, {"builtin": "book_table", "acting": True}]}
    journal = Journal()
    brain = replay(
        [
            {"tool": "get_weather", "args": {"city": "Paris"}},
            {"tool": "book_table", "args": {"guests": 4}},
            {"final": "unused"},
        ]
    )
    first, _ = make_agent(brain, [weather, booking], config=config)
    with pytest.raises(Crash):
        await first.run(QUESTION, run_id="r2", journal=journal)
    assert journal.checkpoints[-1].step == 1 and len(weather.calls) == 1

    seen: list[list[dict[str, Any]]] = []
    brain = replay([{"final": FINAL}])
    decide = brain.decide

    async def watched(messages: Any, specs: Any) -> Any:
        seen.append([m.model_dump() if hasattr(m, "model_dump") else vars(m) for m in messages])
        return await decide(messages, specs)

    brain.decide = watched  # type: ignore[method-assign]
    agent, _ = make_agent(brain, [weather, booking], config=config)
    result = await agent.take_over(journal.interrupted(), journal=journal)

    assert result.termination_reason is TerminationReason.ANSWERED and result.answer.startswith(FINAL)
    assert 'book_table {"guests": 4}: whether it took effect is unknown' in result.answer  # said plainly
    assert len(weather.calls) == 1 and len(booking.calls) == 1  # neither call ran again
    shown = str(seen[-1])
    assert ErrorCode.OUTCOME_UNKNOWN in shown and "Parley stopped during this call" in shown


async def test_a_journal_that_refuses_the_intent_stops_the_run_before_the_call_and_records_no_end() -> None:
    tool = ScriptedTool("get_weather", [WEATHER])
    agent, recorder = make_agent(replay([{"tool": "get_weather", "args": {"city": "Paris"}}, {"final": FINAL}]), [tool])

    with pytest.raises(JournalRefused):
        await agent.run(QUESTION, journal=Journal(refuse=True))

    assert tool.calls == [] and recorder.of(RunFinished) == []


async def test_a_run_taken_over_keeps_the_time_it_already_spent() -> None:
    tool = ScriptedTool("get_weather", crashing_once(WEATHER))
    config: dict[str, Any] = {"tools": [{"builtin": "get_weather"}], "limits": {"run_timeout_s": 30}}
    journal = await first_process(tool, config)

    agent, _ = make_agent(replay([{"final": FINAL}]), [tool], config=config)
    result = await agent.take_over(journal.interrupted(spent_s=30), journal=journal)

    assert result.termination_reason is TerminationReason.RUN_TIMEOUT


async def test_a_journaled_step_names_the_calls_it_makes_now_and_not_those_a_policy_holds() -> None:
    tool = ScriptedTool("get_weather", [WEATHER, WEATHER])
    config: dict[str, Any] = {
        "tools": [{"builtin": "get_weather"}],
        "policies": [{"tool": "get_weather", "hold_when": [{"argument": "city", "equals": "Lyon"}]}],
    }
    calls = [{"tool": "get_weather", "args": {"city": "Paris"}}, {"tool": "get_weather", "args": {"city": "Lyon"}}]
    for journal in (Journal(), None):
        agent, recorder = make_agent(replay([{"calls": calls}, {"final": FINAL}]), [tool], config=config)
        await agent.run(QUESTION, run_id="r1", journal=journal)

        [step] = recorder.of(StepDecided)
        paris, lyon = step.tool_calls
        assert (paris.arguments, lyon.arguments) == ({"city": "Paris"}, {"city": "Lyon"})
        if journal is None:
            assert step.intended == []  # nothing is journaled: no intent to record with the step
        else:
            assert step.intended == [paris.id]  # Lyon is held for a person: it does not run now
            assert [(s, intent.id) for s, intent in journal.intents] == [(1, paris.id)]
