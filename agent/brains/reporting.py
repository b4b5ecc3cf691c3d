"""ReportingBrain: one run's view of its brain, which reports every LLM request as an `LLMCallFinished` event.

The engine gives each run one, so the planner, the critic, the closing repair and the step's decision are
all reported alike — how long each took and what it cost — without any of them knowing.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence

from agent.brains.base import Brain, LLMUnavailable
from agent.messages import Completion, Decision, Message, Usage
from agent.tools.base import ToolSpec
from agent.trace import LLMCallFinished, LLMPurpose

_PURPOSES: dict[str, LLMPurpose] = {"plan": "plan", "critique": "critique", "repair_json": "repair_json"}


class ReportingBrain:
    """Wraps `inner`; `report` receives one `LLMCallFinished` per request, `step` says which step asks."""

    def __init__(
        self,
        inner: Brain,
        run_id: str,
        report: Callable[[LLMCallFinished], Awaitable[None]],
        step: Callable[[], int],
    ) -> None:
        self._inner = inner
        self._run_id = run_id
        self._report = report
        self._step = step
        self.name = inner.name
        self.replayed = inner.replayed

    async def decide(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Decision:
        started = time.perf_counter()
        try:
            decision = await self._inner.decide(messages, tools)
        except LLMUnavailable as exc:
            await self._finished("decide", started, None, len(exc.retry_notes))
            raise
        await self._finished("decide", started, decision.usage, len(decision.retry_notes))
        return decision

    async def complete(self, messages: Sequence[Message], *, purpose: str) -> Completion:
        started = time.perf_counter()
        named = _PURPOSES.get(purpose, "other")
        try:
            completion = await self._inner.complete(messages, purpose=purpose)
        except LLMUnavailable as exc:
            await self._finished(named, started, None, len(exc.retry_notes))
            raise
        await self._finished(named, started, completion.usage, len(completion.retry_notes))
        return completion

    async def aclose(self) -> None:
        """The brain is shared by every run: its owner closes it, never one run."""

    async def _finished(self, purpose: LLMPurpose, started: float, usage: Usage | None, retries: int) -> None:
        await self._report(
            LLMCallFinished(
                run_id=self._run_id,
                step=self._step(),
                purpose=purpose,
                ok=usage is not None,
                latency_ms=int((time.perf_counter() - started) * 1000),
                prompt_tokens=usage.prompt_tokens if usage else 0,
                completion_tokens=usage.completion_tokens if usage else 0,
                retries=retries,
            )
        )
