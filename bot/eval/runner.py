"""Running cases: each through the real engine and the run service, recorded with the source `eval`.

A case with a recorded script is played back (no LLM) unless the evaluation is `live`; the others ask the
configured model. Cases run concurrently, at most `jobs` at a time, each `repeat` times.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agent import (
    Brain,
    FinalRejected,
    LLMCallFinished,
    ReplayBrain,
    RunResult,
    ToolCallFinished,
    TraceEvent,
)
from bot.assembly import build_brain, open_agent
from bot.config_file import LoadedConfig
from bot.core import LogNotifier, RunOrigin, RunOwner, RunService, RunSource
from bot.eval.cases import LoadedCase
from bot.settings import Settings
from bot.store import Database

EVAL_ASKER = "eval"
ORIGIN = RunOrigin(RunSource.EVAL, EVAL_ASKER)


class RunWatcher:
    """A Recorder that keeps what a report needs and a RunResult does not say: the tools called, the tokens
    each way, and the drafts the closing checks refused."""

    def __init__(self) -> None:
        self.tools: list[str] = []
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.rejected: list[str] = []  # which check refused each refused draft

    async def record(self, event: TraceEvent) -> None:
        match event:
            case ToolCallFinished():
                self.tools.append(event.tool)
            case LLMCallFinished():
                self.prompt_tokens += event.prompt_tokens
                self.completion_tokens += event.completion_tokens
            case FinalRejected():
                self.rejected.append(str(event.by))
            case _:
                pass


@dataclass(frozen=True)
class Attempt:
    """One run of one case."""

    case: LoadedCase
    attempt: int  # 1 … repeat
    result: RunResult
    tools: list[str]
    prompt_tokens: int
    completion_tokens: int
    rejected: list[str] = field(default_factory=list)
    model: str = ""  # the model asked ("" when replayed)


@dataclass(frozen=True)
class Evaluation:
    """How the cases are run."""

    settings: Settings
    loaded: LoadedConfig
    db: Database
    live: bool = False  # ask the model even where a case records decisions
    jobs: int = 1
    repeat: int = 1


async def run_cases(
    cases: Sequence[LoadedCase], how: Evaluation, *, on_done: Callable[[Attempt], None] | None = None
) -> list[Attempt]:
    """Every case `how.repeat` times, at most `how.jobs` at once; the attempts in case order."""
    owner = RunOwner(how.db)
    gate = asyncio.Semaphore(max(1, how.jobs))

    async def one(case: LoadedCase, attempt: int) -> Attempt:
        async with gate:
            done = await _run(case, attempt, how, owner)
        if on_done is not None:
            on_done(done)
        return done

    # The brains are built first: a missing LLM is one clear error before anything runs.
    for case in cases:
        if case.script is None or how.live:
            build_brain(how.settings, how.loaded.agent)
            break
    work = [one(case, attempt) for case in cases for attempt in range(1, how.repeat + 1)]
    return list(await asyncio.gather(*work))


async def _run(case: LoadedCase, attempt: int, how: Evaluation, owner: RunOwner) -> Attempt:
    brain: Brain
    if case.script is not None and not how.live:
        brain = ReplayBrain(case.script, name=f"replay:{case.case.id}")
        model = ""
    else:
        brain = build_brain(how.settings, how.loaded.agent)
        model = how.settings.llm_model or ""
    watcher = RunWatcher()
    async with open_agent(how.settings, how.loaded, brain, tools=case.case.tools) as agent:
        service = RunService(how.db, LogNotifier(), agent, owner=owner)
        result = await service.ask(case.case.question, ORIGIN, watchers=[watcher])
    return Attempt(
        case=case,
        attempt=attempt,
        result=result,
        tools=watcher.tools,
        prompt_tokens=watcher.prompt_tokens,
        completion_tokens=watcher.completion_tokens,
        rejected=watcher.rejected,
        model=model,
    )
