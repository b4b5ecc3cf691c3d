"""Agent: the ReAct loop — Decide → Execute → Observe → Check — within hard bounds.

Every run ends with exactly one TerminationReason and either a cited answer or a DegradedFinal.
Nothing the model, a tool or a recorder does can make a run exceed its limits or raise out of `run`
(except cancellation, which is recorded and then re-raised).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Coroutine, Sequence
from typing import Any

from agent.brains.base import GIVE_UP, Brain, BrainError, LLMUnavailable
from agent.brains.reporting import ReportingBrain
from agent.closing import Closing
from agent.config import AgentConfig
from agent.context import Exchange, Transcript
from agent.critique import Critique
from agent.errors import ErrorCode, InvalidQuestion
from agent.grading import ErrorLevel, GradingTable
from agent.grounding import warm_up
from agent.journal import (
    OUTCOME_UNKNOWN_MESSAGE,
    CallIntent,
    Interrupted,
    Journal,
    JournalRefused,
    with_unknown_outcomes,
)
from agent.limits import Limits
from agent.messages import Decision, DecisionKind, RetryNote, ToolCallRequest
from agent.observation import Observation, failure, render, serialise, with_hint
from agent.plain import plain_decision, plain_json, plain_text
from agent.planner import plan
from agent.policy import Policies, call_signature, held_escalation
from agent.recovery import RecoveryPolicy
from agent.repeat import CallOutcome, RepeatDetector
from agent.result import Escalation, HeldCall, RunResult, TerminationReason
from agent.run_state import Outcome, RunState
from agent.snapshot import RunSnapshot
from agent.source import Source
from agent.stop import StopRequest
from agent.text import exception_line
from agent.tools.base import Tool, ToolSpec
from agent.tools.executor import ExecutedCall, ToolExecutor
from agent.tools.fallbacks import Fallbacks
from agent.tools.toolbox import Toolbox
from agent.trace import (
    DoneItemTicked,
    LLMRetry,
    MemoryRecorder,
    PlanMade,
    Recorder,
    RetryScheduled,
    RunFinished,
    RunHeld,
    RunResumed,
    RunStarted,
    RunTakenOver,
    StepDecided,
    ToolCallFinished,
    TraceEvent,
)

log = logging.getLogger(__name__)


def check_question(question: str, limits: Limits) -> str:
    """The question as it will run (invalid UTF-8 replaced, trimmed), or InvalidQuestion saying why not."""
    text = question.encode("utf-8", "replace").decode("utf-8").strip()
    if not text:
        raise InvalidQuestion("the question is empty")
    if len(text) > limits.max_question_chars:
        raise InvalidQuestion(f"the question is {len(text)} characters long; the limit is {limits.max_question_chars}")
    return text


class Agent:
    """Runs questions through the loop. One Agent serves many concurrent runs; each run has its own state."""

    def __init__(
        self,
        brain: Brain,
        tools: Sequence[Tool] | Toolbox,
        config: AgentConfig | None = None,
        *,
        recorder: Recorder | None = None,
        grading: GradingTable | None = None,
        policy: RecoveryPolicy | None = None,
        config_hash: str = "",
    ) -> None:
        self.config = config or AgentConfig()
        limits = self.config.limits
        self._brain = brain
        self._recorder = recorder or MemoryRecorder()
        self._table = GradingTable.from_mapping(self.config.errors, base=grading)
        self._policy = policy or RecoveryPolicy(
            max_auto_retries=limits.max_auto_retries,
            backoff_base_s=limits.retry_backoff_base_s,
            backoff_max_s=limits.retry_backoff_max_s,
        )
        fallbacks = Fallbacks.from_config(self.config.tools, self.config.policies)
        self._executor = ToolExecutor(tools, self._table, self._policy, fallbacks=fallbacks)
        self._policies = Policies(self.config.policies)
        self._idempotent = self.config.idempotent_tools()
        self._config_hash = config_hash

    @property
    def brain(self) -> Brain:
        return self._brain

    @property
    def toolbox(self) -> Toolbox:
        """Every tool a run may call now (fixed ones, and MCP servers' as they come and go)."""
        return self._executor.toolbox

    @property
    def tool_names(self) -> list[str]:
        return self._executor.names

    @property
    def tool_specs(self) -> list[ToolSpec]:
        """What each tool of a run says about itself (name, description, argument schema), in order."""
        return [tool.spec for name in self._executor.names if (tool := self._executor.get(name)) is not None]

    @property
    def error_codes(self) -> frozenset[str]:
        """Every error code the grading table knows (the built-in ones and the configured ones)."""
        return frozenset(self._table.codes())

    def check_question(self, question: str) -> str:
        """The question as it will run, or InvalidQuestion saying why it cannot."""
        return check_question(question, self.config.limits)

    def warm_up(self) -> None:
        """Pay the engine's first-use costs now (the fact-checker's language data and patterns), so that a server
        does not pay them in its first run, stalling everything else it serves (`agent.grounding.warm`)."""
        warm_up()

    async def run(
        self,
        question: str,
        *,
        run_id: str | None = None,
        history: Sequence[Exchange] = (),
        recorder: Recorder | None = None,
        stop: StopRequest | None = None,
        journal: Journal | None = None,
    ) -> RunResult:
        """Run one question to its end (or until `stop` is requested). Raises only InvalidQuestion (before anything
        starts), and with a `journal`, `JournalRefused` when this process may not go on with the run (nothing more
        is recorded)."""
        text = self.check_question(question)
        state = self._new_state(run_id or uuid.uuid4().hex, text, history, recorder)
        state.journal = journal
        await self._emit(
            state,
            RunStarted(
                run_id=state.run_id,
                question=text,
                brain=self._brain.name,
                replayed=self._brain.replayed,
                tools=self.tool_names,
                limits=self.config.limits,
                config_hash=self._config_hash,
            ),
        )
        return await self._bounded(state, self._drive(state), stop)

    async def resume(
        self,
        snapshot: RunSnapshot,
        *,
        approved_by: str,
        recorder: Recorder | None = None,
        stop: StopRequest | None = None,
        journal: Journal | None = None,
    ) -> RunResult:
        """Go on with a run a policy held, after `approved_by` approved it (in this process or another).

        The held calls run exactly as they were held — the snapshot's arguments, nothing the model says
        now — then the loop continues from the next step, with a fresh wall-clock budget. A stored snapshot
        is read back with `RunSnapshot.model_validate`, which refuses one that lacks a field.
        """
        state = self._new_state(snapshot.run_id, snapshot.question, (), recorder)
        state.restore(snapshot)
        state.journal = journal
        state.approved_by = approved_by
        state.approved |= {call_signature(call.tool, call.arguments) for call in snapshot.held}
        await self._emit(
            state,
            RunResumed(
                run_id=state.run_id,
                step=snapshot.step,
                approved_by=approved_by,
                held=list(snapshot.held),
            ),
        )
        return await self._bounded(state, self._go_on(state, snapshot), stop)

    async def take_over(
        self,
        interrupted: Interrupted,
        *,
        recorder: Recorder | None = None,
        journal: Journal | None = None,
        stop: StopRequest | None = None,
    ) -> RunResult:
        """Go on with a run whose process stopped (a crash, a deploy), from its last checkpoint.

        The calls of the interrupted step that had started and left no result run again only when their tool is
        idempotent; every other one is written back as a failed observation, `OUTCOME_UNKNOWN`, and never run
        again (its tool is stopped for the run). The wall-clock budget is what the run had left.
        """
        snapshot = interrupted.snapshot
        state = self._new_state(snapshot.run_id, snapshot.question, (), recorder)
        state.restore(snapshot)
        state.journal = journal
        rerun = [intent.id for intent in interrupted.intents if intent.tool in self._idempotent]
        unknown = [intent.id for intent in interrupted.intents if intent.tool not in self._idempotent]
        await self._emit(
            state,
            RunTakenOver(
                run_id=state.run_id, step=snapshot.step, by=interrupted.resumed_by, rerun=rerun, unknown=unknown
            ),
        )
        work = self._pick_up(state, snapshot.step, interrupted.intents)
        unknown_calls = [intent for intent in interrupted.intents if intent.id in unknown]
        return await self._bounded(state, work, stop, spent_s=interrupted.spent_s, unknown=unknown_calls)

    def _new_state(
        self, run_id: str, question: str, history: Sequence[Exchange], recorder: Recorder | None
    ) -> RunState:
        limits = self.config.limits
        # Every LLM request of the run (plan, decisions, critiques, repairs) is reported through the run's own
        # recorder; `state` is bound below, before any request is made.
        brain = ReportingBrain(self._brain, run_id, lambda event: self._emit(state, event), lambda: state.steps)
        state = RunState(
            run_id=run_id,
            question=question,
            transcript=Transcript.start(question, history=history, output_schema=self.config.output.json_schema),
            detector=RepeatDetector(limits.repeat_threshold, limits.repeat_error_threshold, limits.alternation_cycles),
            critique=Critique(brain, self.config.critique, limits.max_critique_rounds),
            recorder=recorder or self._recorder,
            brain=brain,
        )
        return state

    async def _bounded(
        self,
        state: RunState,
        work: Coroutine[Any, Any, Outcome],
        stop: StopRequest | None = None,
        *,
        spent_s: float = 0.0,
        unknown: Sequence[CallIntent] = (),
    ) -> RunResult:
        """Run `work` within what is left of the wall-clock budget (`spent_s` used already, by a process that
        stopped), or until `stop`; exactly one RunFinished, whatever happens — unless the journal refused the run."""
        limits = self.config.limits
        try:
            async with asyncio.timeout(max(0.0, limits.run_timeout_s - spent_s)):
                outcome = await (work if stop is None else _unless_stopped(work, stop))
        except TimeoutError:
            outcome = Outcome.stop(TerminationReason.RUN_TIMEOUT, f"{limits.run_timeout_s:g}")
        except JournalRefused:
            log.warning("run %s: this process may not go on with it; it stops here", state.run_id)
            raise
        except Exception as exc:  # our own bug, whatever the model said: the run still ends, honestly
            log.exception("run %s failed inside the engine", state.run_id)
            detail = f"Parley failed internally ({type(exc).__name__}; the error is in its log)"
            outcome = Outcome.stop(TerminationReason.IRRECOVERABLE_ERROR, detail)
        except asyncio.CancelledError:
            result = state.result(Outcome.stop(TerminationReason.CANCELLED, ""), self._brain, self.config.escalate_on)
            await asyncio.shield(self._emit(state, RunFinished(run_id=state.run_id, result=result)))
            raise
        try:
            result = with_unknown_outcomes(state.result(outcome, self._brain, self.config.escalate_on), unknown)
        except Exception as exc:  # the outcome could not be described: describe the failure instead
            log.exception("run %s: its result could not be built", state.run_id)
            state.last_draft = []
            detail = f"Parley failed internally ({type(exc).__name__}; the error is in its log)"
            result = state.result(
                Outcome.stop(TerminationReason.IRRECOVERABLE_ERROR, detail), self._brain, self.config.escalate_on
            )
        await self._emit(state, RunFinished(run_id=state.run_id, result=result))
        return result

    # --- the loop -------------------------------------------------------------------------------------

    async def _drive(self, state: RunState) -> Outcome:
        specs = [tool.spec for name in self.tool_names if (tool := self._executor.get(name)) is not None]
        planned = await plan(
            state.brain,
            state.question,
            specs,
            planner=self.config.done.planner,
            json_output=self.config.output.format == "json",
            policies=bool(self.config.policies),
        )
        state.checklist = planned.checklist
        state.count_llm(planned.tokens if planned.llm_called else None)
        await self._emit(
            state,
            PlanMade(run_id=state.run_id, items=planned.checklist.items, source=planned.source, note=planned.note),
        )
        await self._checkpoint(state)
        return await self._loop(state, first_step=1)

    async def _go_on(self, state: RunState, held_run: RunSnapshot) -> Outcome:
        """The approved calls run (exactly as held), are written back and checked; then the loop goes on."""
        step = held_run.step
        calls = [ToolCallRequest(call.id, call.tool, dict(call.arguments)) for call in held_run.held]
        await self._intend(state, step, calls)
        batch = await self._executor.run_batch(calls, disabled=frozenset(state.disabled))
        for executed in batch:
            await self._write_back(state, step, executed)
        state.held = []
        await self._tick(state, step, batch)
        stop = await self._check(state, step, batch)
        if stop is not None:
            return stop
        await self._checkpoint(state)
        return await self._loop(state, first_step=step + 1)

    async def _pick_up(self, state: RunState, checkpointed: int, intents: Sequence[CallIntent]) -> Outcome:
        """A taken-over run: the step it stopped in is finished first (its calls in flight run again or are
        written back as unknown), then the loop goes on."""
        if not intents:
            return await self._loop(state, first_step=checkpointed + 1)
        step = state.steps = checkpointed + 1
        calls = [intent.request() for intent in intents]
        rerun = [call for call in calls if call.name in self._idempotent]
        await self._intend(state, step, rerun)
        again = iter(await self._executor.run_batch(rerun, disabled=frozenset(state.disabled)) if rerun else [])
        batch = [next(again) if call.name in self._idempotent else self._unknown(call) for call in calls]
        state.transcript.add_tool_calls("", calls)
        for executed in batch:
            await self._write_back(state, step, executed)
        await self._tick(state, step, batch)
        stop = await self._check(state, step, batch)
        if stop is not None:
            return stop
        await self._checkpoint(state)
        return await self._loop(state, first_step=step + 1)

    def _unknown(self, call: ToolCallRequest) -> ExecutedCall:
        """A call in flight when its process stopped, of a tool that may not run twice: its outcome is unknown."""
        obs = failure(ErrorCode.OUTCOME_UNKNOWN, OUTCOME_UNKNOWN_MESSAGE, self._table, retryable=False)
        return ExecutedCall(call, call.arguments, obs, raw=None)

    async def _loop(self, state: RunState, *, first_step: int) -> Outcome:
        closing = Closing(self.config, state, state.brain, self._emit)
        for step in range(first_step, self.config.limits.max_steps + 1):
            state.steps = step
            try:
                decision, held = await self._decide(state, step)
            except BrainError as exc:
                return Outcome.stop(TerminationReason.LLM_UNAVAILABLE, plain_text(str(exc)))
            if decision.kind is DecisionKind.GIVE_UP:
                return Outcome.stop(TerminationReason.GAVE_UP, decision.text or "no reason given")
            if decision.kind is DecisionKind.FINAL:
                verdict = await closing.consider(decision.text, step)
                if verdict.outcome is not None:
                    return verdict.outcome
            elif decision.kind is DecisionKind.INVALID:
                stop = await self._invalid_reply(state, decision)
                if stop is not None:
                    return stop
            else:
                stop = await self._act(state, step, decision, held)
                if stop is not None:
                    return stop
            if state.stalled_for(step) >= self.config.limits.no_progress_steps:
                return Outcome.stop(TerminationReason.NO_PROGRESS, str(self.config.limits.no_progress_steps))
            await self._checkpoint(state)
        return Outcome.stop(TerminationReason.MAX_STEPS, str(self.config.limits.max_steps))

    async def _decide(self, state: RunState, step: int) -> tuple[Decision, list[HeldCall]]:
        """The model's decision for `step`, and the calls of it a policy holds; the rest run, and a journaled
        run's `StepDecided` names them (`intended`) so that their intents may be recorded with it."""
        tools = [self._executor.get(name) for name in self.tool_names if name not in state.disabled]
        specs = [tool.spec for tool in tools if tool is not None]
        if state.failed_calls or state.rejected_drafts:  # something to give up on: offer seed 003's give_up
            specs.append(GIVE_UP)
        started = time.perf_counter()
        try:
            decision = await state.brain.decide(list(state.transcript.messages), specs)
        except LLMUnavailable as exc:
            state.count_llm(0)
            await self._note_llm_retries(state, exc.retry_notes)
            raise
        state.count_llm(decision.usage.total)
        await self._note_llm_retries(state, decision.retry_notes)
        decision = state.with_unique_call_ids(plain_decision(decision), step)
        held = self._policies.held(
            decision.tool_calls, approved=state.approved, unnamed=self._executor.toolbox.hold_reason
        )
        intended = [call.id for call in _runnable(decision, held)] if state.journal is not None else []
        await self._emit(
            state,
            StepDecided(
                run_id=state.run_id,
                step=step,
                decision=decision.kind,
                thought=decision.thought,
                tool_calls=list(decision.tool_calls),
                intended=intended,
                text=decision.text,
                prompt_tokens=decision.usage.prompt_tokens,
                completion_tokens=decision.usage.completion_tokens,
                latency_ms=int((time.perf_counter() - started) * 1000),
            ),
        )
        return decision, held

    async def _note_llm_retries(self, state: RunState, notes: Sequence[RetryNote]) -> None:
        for note in notes:
            state.llm_retries += 1
            await self._emit(
                state,
                LLMRetry(
                    run_id=state.run_id, attempt=note.attempt, problem=plain_text(note.problem), delay_s=note.delay_s
                ),
            )

    async def _invalid_reply(self, state: RunState, decision: Decision) -> Outcome | None:
        """A reply that broke the protocol is an observation the model sees, and it counts as a step."""
        obs = failure(ErrorCode.INVALID_RESPONSE, decision.text or "unusable reply", self._table)
        raw_text = plain_text(decision.raw) if isinstance(decision.raw, str) else ""
        state.transcript.add_invalid_reply(raw_text, serialise(obs))
        # Keyed by what was wrong: the same broken reply twice is a loop; two different slips are not.
        outcome = CallOutcome("(reply)", decision.text, ErrorCode.INVALID_RESPONSE)
        reason = state.detector.observe_step([outcome])
        return Outcome.stop(reason, "the model's replies could not be used") if reason else None

    async def _act(self, state: RunState, step: int, decision: Decision, held: list[HeldCall]) -> Outcome | None:
        async def on_retry(call: ToolCallRequest, attempt: int, obs: Observation, delay: float) -> None:
            await self._emit(
                state,
                RetryScheduled(
                    run_id=state.run_id,
                    step=step,
                    tool_call_id=call.id,
                    tool=call.name,
                    attempt=attempt,
                    code=obs.code or "",
                    delay_s=round(delay, 3),
                ),
            )

        runnable = _runnable(decision, held)
        if runnable:
            await self._intend(state, step, runnable)
        batch = (
            await self._executor.run_batch(runnable, disabled=frozenset(state.disabled), on_retry=on_retry)
            if runnable
            else []
        )
        state.transcript.add_tool_calls(decision.thought, decision.tool_calls)
        for executed in batch:
            await self._write_back(state, step, executed)
        await self._tick(state, step, batch)
        if held:
            return await self._hold(state, step, held)
        return await self._check(state, step, batch)

    async def _hold(self, state: RunState, step: int, held: list[HeldCall]) -> Outcome:
        """Stop before the held calls run: the run waits for a person, its state saved to resume from."""
        state.held = held
        state.escalation = held_escalation(held)
        await self._emit(
            state,
            RunHeld(
                run_id=state.run_id,
                step=step,
                held=held,
                snapshot=state.snapshot(),
            ),
        )
        return Outcome.stop(TerminationReason.POLICY_VIOLATION, state.escalation.message)

    async def _write_back(self, state: RunState, step: int, executed: ExecutedCall) -> None:
        obs = executed.observation
        if self.config.observation.hints:
            obs = with_hint(obs, executed.tool)
        number = len(state.sources) + 1
        rendered = render(
            obs,
            max_chars=self.config.limits.max_observation_chars,
            cite=f"[{number}]" if obs.ok else None,
            include_hint=self.config.observation.hints,
            include_suggested_action=self.config.observation.suggested_actions,
        )
        content = rendered.text
        if obs.ok:  # the answer may rest on what the model was shown, not on what was cut from it
            state.add_source(
                Source(
                    number=number,
                    tool=executed.tool,
                    tool_call_id=executed.request.id,
                    step=step,
                    arguments=executed.arguments or {},
                    data=rendered.shown,
                )
            )
        state.transcript.add_observation(executed.request, content)
        state.tool_calls += 1
        state.retries += executed.retries
        state.note_outcome(executed.tool, executed.arguments, obs)
        await self._emit(
            state,
            ToolCallFinished(
                run_id=state.run_id,
                step=step,
                tool_call_id=executed.request.id,
                tool=executed.tool,
                arguments=executed.arguments,
                ok=obs.ok,
                code=obs.code,
                level=obs.level,
                retryable=obs.error.retryable if obs.error else None,
                message=obs.error.message if obs.error else None,
                cite=f"[{number}]" if obs.ok else None,
                shown=rendered.shown if obs.ok else None,
                retries=executed.retries,
                latency_ms=executed.latency_ms,
                observation=content,
                raw=plain_json(executed.raw) if rendered.mended else executed.raw,
                attempts=list(executed.attempts),
            ),
        )

    async def _tick(self, state: RunState, step: int, batch: Sequence[ExecutedCall]) -> None:
        ids = {call.request.id for call in batch if call.observation.ok}
        evidence = [ev for ev in state.evidence if ev.tool_call_id in ids]
        for item, call_id in state.checklist.tick_from(evidence):
            state.last_progress_step = step
            await self._emit(
                state, DoneItemTicked(run_id=state.run_id, step=step, item=item.description, tool_call_id=call_id)
            )
        if evidence and not state.checklist.open_evidence() and state.checklist.progress == 0:
            state.last_progress_step = step  # a checklist without evidence items progresses with any result

    async def _check(self, state: RunState, step: int, batch: Sequence[ExecutedCall]) -> Outcome | None:
        """After the observations are written back: escalate, stop paths, brake loops, critique."""
        if any(not call.observation.ok for call in batch):
            state.transcript.add_failure_note()  # after the batch: tool results must follow their call
        for call in batch:
            error = call.observation.error
            if error is not None and error.level is ErrorLevel.L4:
                state.escalation = Escalation(
                    reason="policy_violation",
                    level=error.level,
                    message=error.message,
                    tool=call.tool,
                    arguments=call.arguments,
                    tool_call_id=call.request.id,
                )
                return Outcome.stop(TerminationReason.POLICY_VIOLATION, error.message)
            if error is not None and error.level is ErrorLevel.L3 and self._executor.get(call.tool) is not None:
                state.disabled.add(call.tool)
        if state.disabled and state.disabled >= set(self.tool_names):
            stopped = ", ".join(sorted(state.disabled))
            return Outcome.stop(TerminationReason.IRRECOVERABLE_ERROR, f"no usable tool remained ({stopped})")
        if state.all_tools_failed(self.tool_names):
            return Outcome.stop(TerminationReason.ALL_TOOLS_FAILED, state.failure_summary())
        outcomes = [CallOutcome(c.tool, c.arguments or c.request.raw_arguments, c.observation.code) for c in batch]
        loop = state.detector.observe_step(outcomes)
        if loop is not None:
            return Outcome.stop(loop, _loop_detail(loop, state, batch))
        critique = state.critique
        if critique.wants_in_step(batch, state.checklist.has_several_tasks):
            risky = state.failed_calls > 0 or state.checklist.has_several_tasks
            judgement = await critique.in_step(state.question, batch, state.checklist.gaps_for(None), risky=risky)
            state.count_llm(judgement.llm_tokens if judgement.llm_called else None)
            verdict = judgement.verdict
            await self._emit(state, judgement.event(state.run_id, step))
            if not verdict.satisfied:
                spin = state.detector.observe_gaps(verdict.gaps)
                if spin is not None:
                    return Outcome.stop(spin, "; ".join(verdict.gaps[:3]))
                state.transcript.add_quality_check(verdict.gaps)
        return None

    # --- bookkeeping -----------------------------------------------------------------------------------

    async def _checkpoint(self, state: RunState) -> None:
        """A step ended: the run as it stands is saved to resume from (`JournalRefused` stops the run)."""
        if state.journal is not None:
            await state.journal.checkpoint(state.snapshot())

    async def _intend(self, state: RunState, step: int, calls: Sequence[ToolCallRequest]) -> None:
        """The calls about to run are recorded first (or, named by the step's `StepDecided`, were recorded with
        it: the journal confirms they are in the store); a call that cannot be recorded is not made."""
        if state.journal is not None and calls:
            await state.journal.intend(step, [CallIntent.of(call) for call in calls])

    async def _emit(self, state: RunState, event: TraceEvent) -> None:
        """A recorder that fails is logged loudly; the run and the user's answer go on."""
        try:
            await state.recorder.record(event)
        except Exception as exc:
            state.recording_failures += 1
            reason = exception_line(exc)
            log.error("recording %s of run %s failed; the run continues: %s", event.kind, state.run_id, reason)
            log.debug("recording failure of run %s", state.run_id, exc_info=True)


def _runnable(decision: Decision, held: Sequence[HeldCall]) -> list[ToolCallRequest]:
    """The calls of a decision that run now: those no policy holds."""
    ids = {call.id for call in held}
    return [call for call in decision.tool_calls if call.id not in ids]


async def _unless_stopped(work: Coroutine[Any, Any, Outcome], stop: StopRequest) -> Outcome:
    """`work`'s outcome, or, once a stop is requested, `STOPPED_BY_USER`: the work is cancelled there and then (an
    LLM or tool call in flight is abandoned; what the run found before it stays in its state). A stop requested
    before the run starts (or resumes) runs nothing."""
    if stop.requested:
        work.close()
        return Outcome.stop(TerminationReason.STOPPED_BY_USER, stop.by)
    running = asyncio.ensure_future(work)
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({running, stopped}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped.cancel()
        if not running.done():
            running.cancel()
        await asyncio.gather(running, stopped, return_exceptions=True)
    if stop.requested and not (running.done() and not running.cancelled() and running.exception() is None):
        return Outcome.stop(TerminationReason.STOPPED_BY_USER, stop.by)
    return running.result()


def _loop_detail(reason: TerminationReason, state: RunState, batch: Sequence[ExecutedCall]) -> str:
    if reason is TerminationReason.REPEAT_SAME_ERROR:
        repeated = state.detector.repeated_error()
        return f"{repeated[0]} for {repeated[1]}" if repeated else "same error"
    return ", ".join(f"{c.tool}" for c in batch)
