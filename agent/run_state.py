"""RunState: everything one run accumulates (saved as a `RunSnapshot` when held), and Outcome: how its loop ended."""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agent.brains.base import Brain
from agent.context import Transcript
from agent.critique import Critique
from agent.degraded import build_degraded_final
from agent.done import DoneChecklist, DoneItem, Evidence, EvidenceLog
from agent.escalation import escalated
from agent.grading import ErrorLevel
from agent.grounding import SentenceCheck, prepare
from agent.grounding.names import NamedText, fold
from agent.journal import Journal
from agent.messages import Decision
from agent.observation import Observation
from agent.repeat import RepeatDetector
from agent.result import Citation, Escalation, GroundedFigure, HeldCall, RunResult, RunStatus, TerminationReason
from agent.snapshot import SNAPSHOT_VERSION, RunCounters, RunSnapshot
from agent.source import Source
from agent.trace import Recorder

MIN_STEPS_BEFORE_ALL_FAILED = 2


@dataclass(frozen=True)
class Failure:
    """A call that failed: its tool, what its arguments name, its error code."""

    tool: str
    arguments: NamedText
    code: str


@dataclass(frozen=True)
class Outcome:
    reason: TerminationReason
    detail: str = ""
    answer: str = ""
    citations: tuple[Citation, ...] = ()
    grounding: tuple[GroundedFigure, ...] = ()

    @classmethod
    def stop(cls, reason: TerminationReason, detail: str) -> Outcome:
        return cls(reason, detail)

    @classmethod
    def answered(cls, answer: str, citations: Sequence[Citation], grounding: Sequence[GroundedFigure] = ()) -> Outcome:
        return cls(TerminationReason.ANSWERED, "", answer, tuple(citations), tuple(grounding))


@dataclass
class RunState:
    run_id: str
    question: str
    transcript: Transcript
    detector: RepeatDetector
    critique: Critique
    recorder: Recorder
    brain: Brain  # the run's view of the brain: each LLM request it makes is reported (ReportingBrain)
    checklist: DoneChecklist = field(default_factory=lambda: DoneChecklist([]))
    sources: list[Source] = field(default_factory=list)
    disabled: set[str] = field(default_factory=set)
    escalation: Escalation | None = None
    held: list[HeldCall] = field(default_factory=list)
    approved: set[str] = field(default_factory=set)  # signatures of approved calls: not held again
    approved_by: str | None = None
    steps: int = 0
    llm_calls: int = 0
    tool_calls: int = 0
    retries: int = 0
    llm_retries: int = 0
    tokens: int = 0
    answer_repairs: int = 0
    last_progress_step: int = 0
    recording_failures: int = 0
    failed_calls: int = 0
    rejected_drafts: int = 0
    evidence: list[Evidence] = field(default_factory=list)  # one per source, with what it carried along
    failures: list[Failure] = field(default_factory=list)  # failed calls since this process took the run
    last_draft: list[SentenceCheck] = field(default_factory=list)  # the last rejected draft, sentence by sentence
    started: float = field(default_factory=time.perf_counter)
    journal: Journal | None = None  # where the run's progress is made durable (none: it is not)
    _evidence_log: EvidenceLog = field(default_factory=EvidenceLog)
    _latest: dict[str, Observation] = field(default_factory=dict)
    _call_ids: set[str] = field(default_factory=set)

    def snapshot(self) -> RunSnapshot:
        """This run as it stands, to resume from in any process once a person approves its held calls."""
        return RunSnapshot(
            version=SNAPSHOT_VERSION,
            run_id=self.run_id,
            question=self.question,
            step=self.steps,
            messages=list(self.transcript.messages),
            sources=list(self.sources),
            checklist=list(self.checklist.items),
            ticks=dict(self.checklist.ticks),
            aliases=self.checklist.aliases,
            disabled=sorted(self.disabled),
            approved=sorted(self.approved),
            held=list(self.held),
            counters=RunCounters(
                steps=self.steps,
                llm_calls=self.llm_calls,
                tool_calls=self.tool_calls,
                retries=self.retries,
                llm_retries=self.llm_retries,
                tokens=self.tokens,
                answer_repairs=self.answer_repairs,
                failed_calls=self.failed_calls,
                rejected_drafts=self.rejected_drafts,
                last_progress_step=self.last_progress_step,
                critique_rounds=self.critique.rounds,
            ),
            call_ids=sorted(self._call_ids),
        )

    def restore(self, snapshot: RunSnapshot) -> None:
        """Take over a held run's state (this state was made for the same run id and question)."""
        self.transcript = Transcript(list(snapshot.messages))
        for source in snapshot.sources:
            self.add_source(source)
        self.checklist = DoneChecklist(
            list(snapshot.checklist),
            dict(snapshot.ticks),
            {name: list(forms) for name, forms in snapshot.aliases.items()},
        )
        self.disabled = set(snapshot.disabled)
        self.approved = set(snapshot.approved)
        self.held = list(snapshot.held)
        counters = snapshot.counters
        self.steps = counters.steps
        self.llm_calls = counters.llm_calls
        self.tool_calls = counters.tool_calls
        self.retries = counters.retries
        self.llm_retries = counters.llm_retries
        self.tokens = counters.tokens
        self.answer_repairs = counters.answer_repairs
        self.failed_calls = counters.failed_calls
        self.rejected_drafts = counters.rejected_drafts
        self.last_progress_step = counters.last_progress_step
        self.critique.rounds = counters.critique_rounds
        self._call_ids = set(snapshot.call_ids)

    def result(self, outcome: Outcome, brain: Brain, escalate_on: Collection[TerminationReason] = ()) -> RunResult:
        """How the run ended, as the outward RunResult: a cited answer, or an honest degraded final — and
        `awaiting_review` with its escalation when people must decide (`escalate_on`: agent/escalation.py)."""
        reason = outcome.reason
        duration_ms = int((time.perf_counter() - self.started) * 1000)
        status = reason.status
        if self.held:
            status = RunStatus.AWAITING_REVIEW  # held, not refused: a person decides, then it resumes
        elif self.approved_by is not None and reason is TerminationReason.ANSWERED:
            status = RunStatus.APPROVED
        common: dict[str, Any] = {
            "run_id": self.run_id,
            "question": self.question,
            "status": status,
            "termination_reason": reason,
            "steps": self.steps,
            "llm_calls": self.llm_calls,
            "tool_calls": self.tool_calls,
            "retries": self.retries,
            "llm_retries": self.llm_retries,
            "critique_rounds": self.critique.rounds,
            "tokens": self.tokens,
            "duration_ms": duration_ms,
            "escalation": self.escalation,
            "replayed": brain.replayed,
            "brain": brain.name,
        }
        if reason is TerminationReason.ANSWERED:
            result = RunResult(
                **common,
                answer=outcome.answer,
                citations=list(outcome.citations),
                completed=self.checklist.completed(outcome.answer),
                missing=[],
                grounding=list(outcome.grounding),
            )
        else:
            degraded = build_degraded_final(reason, outcome.detail, self.checklist, self.sources, self.last_draft)
            result = RunResult(
                **common,
                answer=degraded.render(),
                citations=list(degraded.citations),
                completed=degraded.completed,
                missing=degraded.missing,
                degraded=degraded,
            )
        return escalated(result, escalate_on)  # whoever asked, a run that must go to people leaves as such

    def add_source(self, source: Source) -> None:
        """A successful observation the answer may cite; its evidence inherits what its arguments came from.
        What it states is read now, not when the answer is checked."""
        prepare(source)
        self.sources.append(source)
        self.evidence.append(self._evidence_log.add(source))

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

    def note_outcome(self, tool: str, arguments: dict[str, Any] | None, observation: Observation) -> None:
        self._latest[tool] = observation
        if not observation.ok:
            self.failed_calls += 1
            code = observation.code or "ERROR"
            said = json.dumps(arguments or {}, ensure_ascii=False, default=str)
            self.failures.append(Failure(tool, NamedText(said), code))

    def failed_for(self, item: DoneItem) -> list[Failure]:
        """The failed calls made for a Done item: of its tool (if it names one), naming its terms."""
        return [
            failure
            for failure in self.failures
            if (not item.tool or fold(item.tool) == fold(failure.tool))
            and all(failure.arguments.names(term, self.checklist.aliases.get(fold(term), ())) for term in item.mentions)
        ]

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
