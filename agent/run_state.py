"""RunState: everything one run accumulates, and Outcome: how its loop ended."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from agent.brains.base import Decision
from agent.context import Transcript
from agent.critique import Critique
from agent.done import DoneChecklist
from agent.finalize import Source
from agent.grading import ErrorLevel
from agent.observation import Observation
from agent.repeat import RepeatDetector
from agent.result import Citation, Escalation, TerminationReason
from agent.trace import Recorder

MIN_STEPS_BEFORE_ALL_FAILED = 2


@dataclass(frozen=True)
class Outcome:
    reason: TerminationReason
    detail: str = ""
    answer: str = ""
    citations: tuple[Citation, ...] = ()

    @classmethod
    def stop(cls, reason: TerminationReason, detail: str) -> Outcome:
        return cls(reason, detail)

    @classmethod
    def answered(cls, answer: str, citations: Sequence[Citation]) -> Outcome:
        return cls(TerminationReason.ANSWERED, "", answer, tuple(citations))


@dataclass
class RunState:
    run_id: str
    question: str
    transcript: Transcript
    detector: RepeatDetector
    critique: Critique
    recorder: Recorder
    checklist: DoneChecklist = field(default_factory=lambda: DoneChecklist([]))
    sources: list[Source] = field(default_factory=list)
    disabled: set[str] = field(default_factory=set)
    escalation: Escalation | None = None
    steps: int = 0
    llm_calls: int = 0
    tool_calls: int = 0
    retries: int = 0
    llm_retries: int = 0
    tokens: int = 0
    answer_repairs: int = 0
    last_progress_step: int = 0
    recording_failures: int = 0
    started: float = field(default_factory=time.perf_counter)
    _latest: dict[str, Observation] = field(default_factory=dict)
    _call_ids: set[str] = field(default_factory=set)

    def count_llm(self, tokens: int | None) -> None:
        """One LLM call made (None: no call was made)."""
        if tokens is not None:
            self.llm_calls += 1
            self.tokens += tokens

    def with_unique_call_ids(self, decision: Decision, step: int) -> Decision:
        """Tool-call ids unique across the run: some servers restart at `call_0` every turn, and sources,
        Done ticks and citations are keyed by id. A reused id is renamed in our transcript and trace."""
        if not decision.tool_calls:
            return decision
        calls = []
        for index, call in enumerate(decision.tool_calls, start=1):
            if call.id in self._call_ids:
                call = replace(call, id=f"{call.id}~{step}.{index}")
            self._call_ids.add(call.id)
            calls.append(call)
        return replace(decision, tool_calls=tuple(calls))

    def stalled_for(self, step: int) -> int:
        return step - self.last_progress_step

    def note_outcome(self, tool: str, observation: Observation) -> None:
        self._latest[tool] = observation

    def all_tools_failed(self, tool_names: Sequence[str]) -> bool:
        """Nothing has worked: every tool was tried, none ever succeeded, each last failed its path (L2+)."""
        if self.sources or self.steps < MIN_STEPS_BEFORE_ALL_FAILED or not tool_names:
            return False
        for name in tool_names:
            latest = self._latest.get(name)
            if latest is None or latest.ok or (latest.level is not None and latest.level < ErrorLevel.L2):
                return False
        return True

    def failure_summary(self) -> str:
        return ", ".join(f"{name}: {obs.code}" for name, obs in self._latest.items() if not obs.ok)
