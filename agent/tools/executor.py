"""ToolExecutor: runs one decision's calls concurrently, each with its own timeout, and grades them.

N calls → N observations aligned by `tool_call_id`; a failure of one never drags down the others.
L0 failures are retried here under the RecoveryPolicy; every retry is reported before it happens.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.errors import ErrorCode, ToolError
from agent.grading import ErrorLevel, GradingTable
from agent.messages import ToolCallRequest
from agent.observation import Observation, failure, normalise
from agent.plain import plain_json, plain_text
from agent.recovery import RecoveryPolicy
from agent.text import exception_line
from agent.tools.base import Tool
from agent.tools.fallbacks import Fallbacks
from agent.tools.toolbox import Toolbox
from agent.trace import ToolAttempt

log = logging.getLogger(__name__)

OnRetry = Callable[[ToolCallRequest, int, Observation, float], Awaitable[None]]


@dataclass(frozen=True)
class ExecutedCall:
    """One call as it ended: the graded observation plus what only the trace keeps."""

    request: ToolCallRequest
    arguments: dict[str, Any] | None  # validated arguments, None when they never got that far
    observation: Observation
    raw: Any
    retries: int = 0
    latency_ms: int = 0
    attempts: tuple[ToolAttempt, ...] = field(default_factory=tuple)

    @property
    def tool(self) -> str:
        return self.request.name


class ToolExecutor:
    def __init__(
        self,
        tools: Sequence[Tool] | Toolbox,
        table: GradingTable,
        policy: RecoveryPolicy,
        *,
        fallbacks: Fallbacks | None = None,
    ) -> None:
        self._tools = tools if isinstance(tools, Toolbox) else Toolbox(tools)
        self._table = table
        self._policy = policy
        self._fallbacks = fallbacks or Fallbacks()

    @property
    def names(self) -> list[str]:
        return self._tools.names

    @property
    def toolbox(self) -> Toolbox:
        return self._tools

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    async def run_batch(
        self,
        calls: Sequence[ToolCallRequest],
        *,
        disabled: frozenset[str] = frozenset(),
        on_retry: OnRetry | None = None,
    ) -> list[ExecutedCall]:
        """Execute every call concurrently; the result list is in the order of `calls`."""
        return list(await asyncio.gather(*(self._run_one(call, disabled, on_retry) for call in calls)))

    async def _run_one(self, call: ToolCallRequest, disabled: frozenset[str], on_retry: OnRetry | None) -> ExecutedCall:
        tool = self._tools.get(call.name)
        if tool is None and (refused := self._tools.refusal(call.name)) is not None:
            return ExecutedCall(call, call.arguments, normalise(refused, self._table), raw=None)
        if tool is None:
            listed = ", ".join(self._tools.names) or "none"
            obs = failure(ErrorCode.UNKNOWN_TOOL, f"there is no tool named {call.name!r}; tools: {listed}", self._table)
            return ExecutedCall(call, call.arguments, obs, raw=None)
        if call.name in disabled:
            obs = failure(ErrorCode.TOOL_DISABLED, f"{call.name} was stopped earlier in this run", self._table)
            return ExecutedCall(call, call.arguments, self._with_fallbacks(call.name, obs, disabled), raw=None)
        if call.arguments is None:
            problem = call.arguments_error or "the arguments were not a JSON object"
            obs = failure(ErrorCode.INVALID_ARGS, problem, self._table)
            return ExecutedCall(call, None, obs, raw=call.raw_arguments)
        try:
            arguments = tool.validate(call.arguments)
        except ToolError as exc:
            return ExecutedCall(call, call.arguments, normalise(exc, self._table), raw=None)

        attempts: list[ToolAttempt] = []
        started = time.perf_counter()
        delay = 0.0
        while True:
            attempt_started = time.perf_counter()
            raw = await self._attempt(tool, arguments)
            obs = normalise(raw, self._table)
            attempts.append(
                ToolAttempt(
                    attempt=len(attempts) + 1,
                    ok=obs.ok,
                    code=obs.code,
                    latency_ms=_ms_since(attempt_started),
                    delay_before_s=round(delay, 3),
                )
            )
            retries = len(attempts) - 1
            if not self._policy.should_auto_retry(obs, retries):
                break
            delay = self._policy.delay_before_retry(obs, retries + 1)
            if on_retry is not None:
                await on_retry(call, retries + 1, obs, delay)
            await asyncio.sleep(delay)

        obs = self._policy.after_exhaustion(obs, len(attempts))
        obs = self._with_fallbacks(call.name, obs, disabled)
        return ExecutedCall(
            call,
            arguments,
            obs,
            # A failure's raw result may be what made it fail (2,000 levels deep, bytes that are not UTF-8).
            raw=_raw_for_trace(raw) if obs.ok else plain_json(_raw_for_trace(raw)),
            retries=len(attempts) - 1,
            latency_ms=_ms_since(started),
            attempts=tuple(attempts),
        )

    async def _attempt(self, tool: Tool, arguments: dict[str, Any]) -> Any:
        """One try. Exceptions become values here so that one call never cancels its siblings."""
        try:
            return await asyncio.wait_for(tool.call(arguments), timeout=tool.timeout_s)
        except TimeoutError:
            return ToolError(ErrorCode.TIMEOUT, f"{tool.spec.name} gave no answer within {tool.timeout_s:g}s")
        except ToolError as exc:
            return exc
        except Exception as exc:  # a tool raising anything is a graded failure, not a crash of the run
            log.warning("tool %s crashed: %s", tool.spec.name, exception_line(exc))
            log.debug("traceback of the %s crash", tool.spec.name, exc_info=True)
            return exc

    def _with_fallbacks(self, name: str, obs: Observation, disabled: frozenset[str]) -> Observation:
        """An L2/L3 failure names the tools to try instead, if there are any; otherwise the grading table's
        suggested action stands alone (never a `switch_tool` with nothing to switch to)."""
        if obs.ok or obs.level not in (ErrorLevel.L2, ErrorLevel.L3):
            return obs
        offered = self._fallbacks.offered(name, available=set(self._tools.names) - disabled)
        return Observation(
            ok=False,
            error=obs.error,
            hint=obs.hint,
            suggested_action=obs.suggested_action or ("switch_tool" if offered else None),
            fallback_tools=offered,
        )


def _ms_since(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)


def _raw_for_trace(raw: Any) -> Any:
    if isinstance(raw, ToolError):
        return plain_json({"exception": "ToolError", "code": raw.code, "message": raw.message, "details": raw.details})
    if isinstance(raw, BaseException):
        return {"exception": type(raw).__name__, "message": plain_text(str(raw))}
    if raw is None or isinstance(raw, dict | list | str | int | float):
        return raw  # as parsed; mended with the observation when that needed it (`Rendered.mended`)
    return plain_json(raw)  # bytes, or an object of the tool's own: the trace keeps it as data it can store
