"""A held run's snapshot is written in one process and resumed in another: it round-trips through JSON whole,
and a stored snapshot that lacks a field, has one too many or another version is refused loudly, never
resumed with a silent 0."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from agent import DoneItem, HeldCall, Message, RunCounters, RunHeld, RunSnapshot, Source, ToolCallRequest
from tests.agent.toolbox import ScriptedTool, make_agent, replay
from tests.examples import checks

CHECKS = checks(100)

# What tools return and models ask for, as JSON carries it (NaN is mended before a snapshot is taken).
TEXT = st.text(max_size=12)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
ARGUMENTS = st.dictionaries(TEXT, JSON, max_size=3)
CALLS = st.builds(
    ToolCallRequest,
    id=TEXT,
    name=TEXT,
    arguments=st.none() | ARGUMENTS,
    raw_arguments=TEXT,
    arguments_error=st.none() | TEXT,
)
MESSAGES = st.builds(
    Message,
    role=st.sampled_from(["system", "user", "assistant", "tool"]),
    content=TEXT,
    tool_calls=st.lists(CALLS, max_size=2).map(tuple),
    tool_call_id=st.none() | TEXT,
    name=st.none() | TEXT,
)
SOURCES = st.builds(
    Source,
    number=st.integers(1, 50),
    tool=TEXT,
    tool_call_id=TEXT,
    step=st.integers(1, 50),
    arguments=ARGUMENTS,
    data=JSON,
)
ITEMS = st.builds(
    DoneItem,
    description=st.text(min_size=1, max_size=20),
    kind=st.sampled_from(["evidence", "answer"]),
    tool=st.none() | TEXT,
    mentions=st.lists(TEXT, max_size=2),
    answer_terms=st.lists(TEXT, max_size=2),
)
HELD = st.builds(HeldCall, id=TEXT, tool=TEXT, arguments=ARGUMENTS, reason=TEXT)
COUNTERS = st.builds(RunCounters, **{name: st.integers(0, 10**6) for name in RunCounters.model_fields})
SNAPSHOTS = st.builds(
    RunSnapshot,
    version=st.just(1),
    run_id=TEXT,
    question=TEXT,
    step=st.integers(0, 100),
    messages=st.lists(MESSAGES, max_size=4),
    sources=st.lists(SOURCES, max_size=3),
    checklist=st.lists(ITEMS, max_size=3),
    ticks=st.dictionaries(st.integers(0, 8), st.none() | TEXT, max_size=3),
    aliases=st.dictionaries(TEXT, st.lists(TEXT, max_size=2), max_size=2),
    disabled=st.lists(TEXT, max_size=2),
    approved=st.lists(TEXT, max_size=2),
    held=st.lists(HELD, min_size=1, max_size=2),
    counters=COUNTERS,
    call_ids=st.lists(TEXT, max_size=3),
)


def stored(snapshot: RunSnapshot) -> dict[str, Any]:
    """The snapshot as a store keeps it: JSON text, read back."""
    return json.loads(json.dumps(snapshot.model_dump(mode="json"), allow_nan=False))


@CHECKS
@given(snapshot=SNAPSHOTS)
def test_snapshot_round_trips_through_json_whole(snapshot: RunSnapshot) -> None:
    assert RunSnapshot.model_validate(stored(snapshot)) == snapshot


async def held_run() -> RunSnapshot:
    """A real held run's snapshot: a sourced call, a tick, a held transfer."""
    transfer = ScriptedTool("transfer_funds", [{"transfer_id": "T-1"}])
    balance = ScriptedTool("get_balance", [{"balance": 8500, "currency": "EUR"}])
    brain = replay(
        [{"calls": [{"tool": "get_balance", "args": {}}, {"tool": "transfer_funds", "args": {"amount": 5000}}]}]
    )
    config = {"policies": [{"tool": "transfer_funds", "requires_approval": True}]}
    agent, recorder = make_agent(brain, [transfer, balance], config=config)
    await agent.run("Pay 5000 EUR, then tell me the balance.")
    [event] = recorder.of(RunHeld)
    return event.snapshot


async def test_snapshot_of_a_held_run_round_trips_with_its_sources_and_counters() -> None:
    snapshot = await held_run()

    again = RunSnapshot.model_validate(stored(snapshot))

    assert again == snapshot
    assert [(s.number, s.tool, s.data) for s in again.sources] == [
        (1, "get_balance", {"balance": 8500, "currency": "EUR"})
    ]
    assert again.counters.tool_calls == 1 and again.counters.steps == 1 and again.counters.llm_calls >= 1
    assert [(c.tool, c.arguments) for c in again.held] == [("transfer_funds", {"amount": 5000})]


def _paths(model: type[Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    return [(*prefix, name) for name in model.model_fields]


@pytest.mark.parametrize("path", _paths(RunSnapshot) + _paths(RunCounters, ("counters",)), ids=".".join)
async def test_snapshot_that_lacks_a_field_is_refused_naming_it(path: tuple[str, ...]) -> None:
    data = stored(await held_run())
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    del parent[path[-1]]

    with pytest.raises(ValidationError) as refused:
        RunSnapshot.model_validate(data)

    assert [(error["type"], error["loc"]) for error in refused.value.errors()] == [("missing", path)]


async def test_snapshot_of_another_version_or_with_an_unknown_field_is_refused() -> None:
    data = stored(await held_run())

    with pytest.raises(ValidationError, match="version"):
        RunSnapshot.model_validate({**data, "version": 2})
    with pytest.raises(ValidationError, match="extra"):
        RunSnapshot.model_validate({**data, "deadline": "tomorrow"})
    with pytest.raises(ValidationError, match="extra"):
        RunSnapshot.model_validate({**data, "counters": {**data["counters"], "budget_left": 3}})
