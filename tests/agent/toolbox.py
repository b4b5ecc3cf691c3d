"""Test tools: real `Tool` implementations whose behaviour is scripted per call (no mocks of our code)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent import Agent, AgentConfig, MemoryRecorder, ReplayBrain, ReplayScript, ToolSpec


@dataclass(frozen=True)
class Hang:
    """Sleep this long before answering (longer than the tool's timeout: a hang)."""

    seconds: float
    then: Any = None


class ScriptedTool:
    """Answers call n with `script[n]` (the last entry repeats): a value, an exception to raise, or a Hang.

    `script` may also be a function of the arguments.
    """

    def __init__(
        self,
        name: str,
        script: Sequence[Any] | Callable[[dict[str, Any]], Any],
        *,
        timeout_s: float = 1.0,
        parameters: Mapping[str, Any] | None = None,
    ) -> None:
        self._spec = ToolSpec(name, f"test tool {name}", dict(parameters or {"type": "object"}))
        self._script = script
        self._timeout_s = timeout_s
        self.calls: list[dict[str, Any]] = []

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    @property
    def timeout_s(self) -> float:
        return self._timeout_s

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        return dict(arguments)

    async def call(self, arguments: dict[str, Any]) -> Any:
        self.calls.append(arguments)
        if callable(self._script):
            step = self._script(arguments)
        else:
            step = self._script[min(len(self.calls), len(self._script)) - 1]
        if isinstance(step, Hang):
            await asyncio.sleep(step.seconds)
            step = step.then
        if isinstance(step, BaseException):
            raise step
        return step


WEATHER = {
    "上海": {"city": "上海", "temp_c": 28, "condition": "多云"},
    "北京": {"city": "北京", "temp_c": 22, "condition": "晴"},
}


def weather_lookup(arguments: dict[str, Any]) -> Any:
    from agent import ToolError

    city = str(arguments.get("city", "")).strip()
    if city in WEATHER:
        return WEATHER[city]
    raise ToolError("CITY_NOT_FOUND", f"unknown city {city!r}", details={"did_you_mean": "上海"})


def replay(decisions: list[dict[str, Any]], **extra: Any) -> ReplayBrain:
    return ReplayBrain(ReplayScript.model_validate({"decisions": decisions, **extra}))


def make_agent(
    brain: Any, tools: Sequence[Any], *, config: Mapping[str, Any] | None = None
) -> tuple[Agent, MemoryRecorder]:
    """An Agent with fast retries (the bounds stay the defaults unless `config` changes them)."""
    raw = dict(config or {})
    raw["limits"] = {"retry_backoff_base_s": 0.01, "retry_backoff_max_s": 0.05, **raw.get("limits", {})}
    recorder = MemoryRecorder()
    return Agent(brain, list(tools), AgentConfig.model_validate(raw), recorder=recorder), recorder


async def eventually(predicate: Callable[[], bool], *, timeout_s: float = 5.0) -> None:
    """Poll with a deadline (never a bare sleep)."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"condition not met within {timeout_s}s")
        await asyncio.sleep(0.005)
