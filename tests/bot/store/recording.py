"""Runs recorded through the real engine into the store, and what the store kept, read back."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy import text

from agent import Agent, FanoutRecorder, MemoryRecorder, RunResult
from bot.store import Conversation, Database, RunOrigin, StoreRecorder
from bot.store.models import Run

CLI = RunOrigin("cli", "cli:tester")
SLACK = RunOrigin("slack", "U0TESTER", Conversation("T0TEAM", "C0CHAN", "1700000000.000100"))


async def record(
    agent: Agent, db: Database, question: str, *, origin: RunOrigin = CLI, **options: Any
) -> tuple[RunResult, MemoryRecorder]:
    """Run `question` with the store recording it; the MemoryRecorder holds the same events, for comparison."""
    memory = MemoryRecorder()
    result = await agent.run(question, recorder=FanoutRecorder(memory, StoreRecorder(db, origin, **options)))
    return result, memory


def stored_result(row: Run | dict[str, Any]) -> RunResult:
    """The RunResult as the runs row has it (a row, or a trace's `columns`): equal to what the caller got if
    nothing was lost on the way."""
    run = SimpleNamespace(**row) if isinstance(row, dict) else row
    return RunResult(
        run_id=run.id,
        question=run.question,
        status=run.status,
        termination_reason=run.termination_reason,
        answer=run.answer,
        citations=run.citations,
        completed=run.completed,
        missing=run.missing,
        steps=run.steps,
        llm_calls=run.llm_calls,
        tool_calls=run.tool_calls,
        retries=run.retries,
        llm_retries=run.llm_retries,
        critique_rounds=run.critique_rounds,
        tokens=run.tokens,
        duration_ms=run.duration_ms,
        escalation=run.escalation,
        degraded=run.degraded,
        grounding=run.grounding,
        replayed=run.replayed,
        brain=run.brain,
    )


def recording_failures(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the loop logged at ERROR because a recorder failed (empty when everything was stored)."""
    return [r.getMessage() for r in caplog.records if r.name == "agent.loop" and r.levelno >= logging.ERROR]


async def fetch(db: Database, sql: str, **params: Any) -> list[dict[str, Any]]:
    """Rows as dicts, straight from SQL (not through the ORM the recorder wrote with)."""
    async with db.engine.connect() as conn:
        result = await conn.execute(text(sql), params)
        return [dict(row) for row in result.mappings()]


async def poll(check: Callable[[], Awaitable[bool]], *, timeout_s: float, what: str) -> None:
    """Await `check()` until it holds; fail naming `what` when the deadline passes."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not await check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"{what}: not within {timeout_s:g}s")
        await asyncio.sleep(0.02)
