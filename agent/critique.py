"""Critique: self-critique in-step (after a batch) and at closing (before a final is accepted).

Rule-based checks always run; an LLM critic (the brain's `complete`) adds its own verdict when enabled.
Rounds are hard-capped per run; a critic that fails or answers garbage leaves the rules' verdict alone.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent.brains.base import Brain, BrainError
from agent.config import CritiqueConfig, InStepCritique
from agent.grading import ErrorLevel
from agent.messages import Message
from agent.text import clip
from agent.tools.executor import ExecutedCall
from agent.trace import CritiqueVerdictMade

log = logging.getLogger(__name__)

NextAction = Literal["continue_react", "switch_tool", "finalize", "give_up"]

MAX_GAPS = 10
MAX_GAP_CHARS = 300

CRITIC_PROMPT = """You are the quality checker of an agent that answers questions with tools.
Compare the current state with the user's goal and its Definition of Done.
Reply with one JSON object only: {"satisfied": true|false, "gaps": ["what is still missing or wrong"],
"next_action": "continue_react"|"switch_tool"|"finalize"|"give_up"}.
Be strict: a fact not backed by a successful tool result is a gap. Keep each gap under 20 words."""


class CritiqueVerdict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    satisfied: bool
    gaps: list[str] = Field(default_factory=list, max_length=MAX_GAPS)
    next_action: NextAction = "continue_react"


def bounded(gaps: Sequence[str]) -> list[str]:
    """At most MAX_GAPS gaps of at most MAX_GAP_CHARS each; what does not fit is counted, not dropped silently."""
    short = [clip(gap, MAX_GAP_CHARS) for gap in _unique(gaps)]
    if len(short) <= MAX_GAPS:
        return short
    return [*short[: MAX_GAPS - 1], f"and {len(short) - MAX_GAPS + 1} more"]


@dataclass(frozen=True)
class Judgement:
    """A verdict with where it came from."""

    verdict: CritiqueVerdict
    source: str  # "rules", "llm" or "rules+llm"
    llm_tokens: int = 0
    llm_called: bool = False
    stage: Literal["in_step", "closing"] = "in_step"
    round: int = 0

    def event(self, run_id: str, step: int) -> CritiqueVerdictMade:
        return CritiqueVerdictMade(
            run_id=run_id,
            step=step,
            stage=self.stage,
            satisfied=self.verdict.satisfied,
            gaps=self.verdict.gaps,
            next_action=self.verdict.next_action,
            source=self.source,
            round=self.round,
        )


class Critique:
    """One per run: it counts its rounds against `max_rounds`."""

    def __init__(self, brain: Brain, config: CritiqueConfig, max_rounds: int) -> None:
        self._brain = brain
        self._config = config
        self._max_rounds = max_rounds
        self.rounds = 0

    @property
    def rounds_left(self) -> bool:
        return self.rounds < self._max_rounds

    def wants_in_step(self, batch: Sequence[ExecutedCall], several_tasks: bool) -> bool:
        if not self.rounds_left or self._config.in_step is InStepCritique.NEVER:
            return False
        if self._config.in_step is InStepCritique.ALWAYS:
            return True
        failed = any(not call.observation.ok for call in batch)
        return failed or (several_tasks and self._config.in_step is InStepCritique.MULTI_TASK)

    def wants_closing(self) -> bool:
        return self._config.closing and self.rounds_left

    async def in_step(
        self, question: str, batch: Sequence[ExecutedCall], open_items: Sequence[str], *, risky: bool = True
    ) -> Judgement:
        """After a batch: did it move towards the goal? Failures and their recovery are the gaps."""
        self.rounds += 1
        gaps = [_failure_gap(call) for call in batch if not call.observation.ok]
        # Switching is advice only where a failed path names somewhere to switch to.
        switch = any(
            call.observation.level in (ErrorLevel.L2, ErrorLevel.L3) and call.observation.fallback_tools
            for call in batch
        )
        rules = CritiqueVerdict(
            satisfied=not gaps,
            gaps=bounded(gaps + [f"not yet done: {item}" for item in open_items] if gaps else []),
            next_action="switch_tool" if switch else "continue_react",
        )
        state = partial(_state_text, question, open_items, batch=batch)
        return replace(await self._with_llm(rules, state, risky), stage="in_step", round=self.rounds)

    async def closing(
        self, question: str, draft: str, gaps: Sequence[str], evidence: Callable[[], str], *, risky: bool = True
    ) -> Judgement:
        """Before a final is accepted: `gaps` are what the Done check and grounding already found.

        `risky`: the run has several tasks, a failure, a rejected draft, JSON output or a policy in play —
        where the LLM critic pays for its call (with `llm: auto`)."""
        self.rounds += 1
        rules = CritiqueVerdict(
            satisfied=not gaps, gaps=bounded(gaps), next_action="continue_react" if gaps else "finalize"
        )
        state = partial(_state_text, question, gaps, draft=draft, evidence=evidence)
        return replace(await self._with_llm(rules, state, risky), stage="closing", round=self.rounds)

    async def _with_llm(self, rules: CritiqueVerdict, state: Callable[[], str], risky: bool) -> Judgement:
        """The rules' verdict, and the LLM critic's where it is asked (`state` is written only then)."""
        if self._config.llm == "never" or (self._config.llm == "auto" and not risky):
            return Judgement(rules, "rules")
        messages = [Message("system", CRITIC_PROMPT), Message("user", state())]
        try:
            completion = await self._brain.complete(messages, purpose="critique")
        except BrainError as exc:
            log.info("critic unavailable, rules only: %s", exc)
            return Judgement(rules, "rules")
        llm = parse_verdict(completion.text)
        if llm is None:
            log.info("critic answered something that is not a verdict; rules only")
            return Judgement(rules, "rules", completion.usage.total, llm_called=True)
        merged = CritiqueVerdict(
            satisfied=rules.satisfied and llm.satisfied,
            gaps=bounded([*rules.gaps, *llm.gaps]),
            next_action=rules.next_action if not rules.satisfied else llm.next_action,
        )
        return Judgement(merged, "rules+llm", completion.usage.total, llm_called=True)


def parse_verdict(text: str) -> CritiqueVerdict | None:
    """The first JSON object in the text, as a verdict; None when there is none."""
    match = re.search(r"\{.*\}", text or "", re.DOTALL)
    if not match:
        return None
    try:
        reply = json.loads(match.group(0))
        if isinstance(reply, dict) and isinstance(reply.get("gaps"), list):
            reply["gaps"] = bounded([str(gap) for gap in reply["gaps"]])  # a chatty critic is cut, not ignored
        return CritiqueVerdict.model_validate(reply)
    except (ValueError, ValidationError, RecursionError):
        return None


def _failure_gap(call: ExecutedCall) -> str:
    error = call.observation.error
    assert error is not None
    advice = {
        ErrorLevel.L0: "retry later",
        ErrorLevel.L1: "correct the arguments",
        ErrorLevel.L2: _switch_advice(call.observation.fallback_tools),
        ErrorLevel.L3: "stop using this tool",
        ErrorLevel.L4: "refuse",
    }[error.level]
    return f"{call.tool} failed with {error.code} ({error.level.name}): {advice}"


def _switch_advice(fallback_tools: Sequence[str]) -> str:
    # Only the tools the observation offered: the others may act, be held by a policy or be stopped.
    if fallback_tools:
        return "switch to " + ", ".join(fallback_tools)
    return "no fallback is offered; try another way or give up"


def _state_text(
    question: str,
    open_items: Sequence[str],
    *,
    batch: Sequence[ExecutedCall] = (),
    draft: str | None = None,
    evidence: Callable[[], str] | None = None,
) -> str:
    lines = [f"User goal: {question}", "Still open: " + ("; ".join(open_items) or "nothing")]
    for call in batch:
        outcome = "ok" if call.observation.ok else f"failed {call.observation.code}"
        lines.append(f"Last call: {call.tool}({json.dumps(call.arguments, ensure_ascii=False)}) → {outcome}")
    if evidence is not None:
        lines.append(f"Tool results so far:\n{evidence()}")
    if draft is not None:
        lines.append(f"Draft final answer:\n{draft}")
    return "\n".join(lines)


def _unique(items: Sequence[str]) -> list[str]:
    seen: list[str] = []
    for item in items:
        if item and item not in seen:
            seen.append(item)
    return seen
