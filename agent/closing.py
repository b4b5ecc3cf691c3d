"""Closing: what happens when the model offers a final answer. No tool_calls does not mean done.

The draft is checked against the Definition of Done, its citations and numbers (grounding), the closing
critique and, in JSON mode, the output schema. It is accepted, sent back with the gaps (the loop goes on),
or the run ends degraded when the repair budget is spent.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from agent.brains.base import Brain, BrainError
from agent.config import AgentConfig
from agent.finalize import validate_json_output
from agent.grounding import Grounding, check
from agent.messages import Message
from agent.plain import plain_text
from agent.result import TerminationReason
from agent.run_state import Outcome, RunState
from agent.trace import DoneItemTicked, FinalRejected, Rejecter, TraceEvent
from agent.wording import answered_in_part, unbacked

Emit = Callable[[RunState, TraceEvent], Awaitable[None]]

REPAIR_JSON_PROMPT = """Rewrite the answer below as one JSON object that validates against the JSON Schema.
Keep every fact and citation tag; invent nothing. Reply with the JSON only.
Schema: {schema}
Problems found: {problems}"""


@dataclass(frozen=True)
class Verdict:
    """None: the draft was sent back and the loop continues; else how the run ends."""

    outcome: Outcome | None


class Closing:
    def __init__(self, config: AgentConfig, state: RunState, brain: Brain, emit: Emit) -> None:
        self._config = config
        self._state = state
        self._brain = brain
        self._emit = emit

    async def consider(self, draft: str, step: int) -> Verdict:
        state = self._state
        state.transcript.add_draft(draft)
        grounding = check(draft, state.sources, state.question)
        if grounding.ok:
            await self._tick_from_values(grounding, step)
        done_gaps = state.checklist.gaps_for(draft)
        critic_gaps = await self._critique(draft, step, done_gaps + grounding.problems)

        if grounding.problems and state.answer_repairs >= self._config.limits.max_answer_repairs:
            # The detail names no number: an invented figure must not reach the user, even as a quote.
            state.last_draft = grounding.sentences
            statements = sum(1 for sentence in grounding.sentences if sentence.problems) or 1
            return Verdict(Outcome.stop(TerminationReason.UNGROUNDED_ANSWER, unbacked(statements)))
        partial = self._answered_in_part(grounding, draft)
        if partial is not None:
            return Verdict(partial)
        gaps = [*grounding.problems, *done_gaps, *critic_gaps]
        if gaps:
            state.rejected_drafts += 1
            state.last_draft = grounding.sentences
            by: Rejecter = "grounding" if grounding.problems else ("done" if done_gaps else "critique")
            await self._emit(state, FinalRejected(run_id=state.run_id, step=step, by=by, gaps=gaps, draft=draft))
            spin = state.detector.observe_gaps(gaps)
            if spin is not None:
                return Verdict(Outcome.stop(spin, "; ".join(gaps[:3])))
            if grounding.problems:
                state.answer_repairs += 1
                state.transcript.add_repair_request(gaps)
            else:
                state.transcript.add_quality_check(gaps)
            return Verdict(None)

        if self._config.output.format == "json":
            return await self._json_output(draft, step, grounding.citations)
        # What people see carries the citations Parley attached where the model gave none.
        return Verdict(Outcome.answered(grounding.answer, grounding.citations, grounding.grounded))

    def _answered_in_part(self, grounding: Grounding, draft: str) -> Outcome | None:
        """A draft that is backed and complete but for facts its tools failed to return ("Shenzhen could not be
        fetched"): the run ends with it as a partial answer — what was found kept, cited and quoted, what could
        not be fetched named — instead of being sent back for facts no tool returned."""
        state = self._state
        open_items = state.checklist.open_evidence()
        if not open_items or not grounding.ok or state.checklist.unmet_in_answer(draft):
            return None
        failed = {item.description: state.failed_for(item) for item in open_items}
        if not all(failed.values()):
            return None  # an item nothing was tried for: the model may still fetch it
        state.last_draft = grounding.sentences
        why = "; ".join(
            f"{what} ({', '.join(dict.fromkeys(f'{f.tool}: {f.code}' for f in failures))})"
            for what, failures in failed.items()
        )
        return Outcome.stop(TerminationReason.GAVE_UP, answered_in_part(why))

    async def _tick_from_values(self, grounding: Grounding, step: int) -> None:
        """Items no result names in its own words, ticked by the results whose values the answer gives them."""
        state = self._state
        for item, call_id in state.checklist.tick_from_values(grounding.backed, state.evidence):
            state.last_progress_step = step
            await self._emit(
                state, DoneItemTicked(run_id=state.run_id, step=step, item=item.description, tool_call_id=call_id)
            )

    async def _critique(self, draft: str, step: int, known_gaps: list[str]) -> list[str]:
        """The closing critique's own gaps (beyond what the rules already found)."""
        state = self._state
        if not state.critique.wants_closing():
            return []

        def evidence() -> str:  # written only if the LLM critic is asked
            return "\n".join(
                f"{s.tag} {s.tool}({json.dumps(s.arguments, ensure_ascii=False)}) → {s.summary()}"
                for s in state.sources
            )

        risky = (  # where the rules' verdict is weakest: judging an answer, or a run that struggled
            any(item.kind == "answer" and item.answer_terms for item in state.checklist.items)
            or state.failed_calls > 0
            or state.rejected_drafts > 0
            or self._config.output.format == "json"
            or bool(self._config.policies)
        )
        judgement = await state.critique.closing(state.question, draft, known_gaps, evidence, risky=risky)
        state.count_llm(judgement.llm_tokens if judgement.llm_called else None)
        verdict = judgement.verdict
        await self._emit(state, judgement.event(state.run_id, step))
        if verdict.satisfied:
            return []
        return [gap for gap in verdict.gaps if gap not in known_gaps]

    async def _json_output(self, draft: str, step: int, citations: list) -> Verdict:
        """JSON mode: validate; exactly one repair call; then a plain-text degraded answer."""
        state = self._state
        schema = self._config.output.json_schema or {}
        value, problems = validate_json_output(draft, schema)
        if problems:
            await self._emit(
                state, FinalRejected(run_id=state.run_id, step=step, by="output", gaps=problems, draft=draft)
            )
            prompt = REPAIR_JSON_PROMPT.format(
                schema=json.dumps(schema, ensure_ascii=False), problems="; ".join(problems)
            )
            try:
                completion = await self._brain.complete(
                    [Message("system", prompt), Message("user", draft)], purpose="repair_json"
                )
            except BrainError as exc:
                detail = plain_text(f"{problems[0]} (repair failed: {exc})")
                return Verdict(Outcome.stop(TerminationReason.INVALID_OUTPUT, detail))
            state.count_llm(completion.usage.total)
            value, problems = validate_json_output(completion.text, schema)
            if problems:
                return Verdict(Outcome.stop(TerminationReason.INVALID_OUTPUT, "; ".join(problems[:3])))
        answer = json.dumps(value, ensure_ascii=False)
        return Verdict(Outcome.answered(answer, citations))
