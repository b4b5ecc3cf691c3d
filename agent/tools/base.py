"""Tool: a name, a description, an argument schema, an async callable and a timeout."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ValidationError

from agent.errors import ErrorCode, ToolError

DEFAULT_TOOL_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class ToolSpec:
    """What the model is told about a tool (OpenAI `function` shape)."""

    name: str
    description: str
    parameters: dict[str, Any]

    def as_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


@runtime_checkable
class Tool(Protocol):
    """Anything the agent can call. `validate` raises `ToolError(INVALID_ARGS)`; `call` returns raw data."""

    @property
    def spec(self) -> ToolSpec: ...

    @property
    def timeout_s(self) -> float: ...

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]: ...

    async def call(self, arguments: dict[str, Any]) -> Any: ...


class FunctionTool:
    """A Python coroutine behind a pydantic argument model (its JSON Schema is what the model sees)."""

    def __init__(
        self,
        name: str,
        description: str,
        args_model: type[BaseModel],
        fn: Callable[[Any], Awaitable[Any]],
        *,
        timeout_s: float = DEFAULT_TOOL_TIMEOUT_S,
    ) -> None:
        self._spec = ToolSpec(name, description, args_model.model_json_schema())
        self._args_model = args_model
        self._fn = fn
        self._timeout_s = timeout_s

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    @property
    def timeout_s(self) -> float:
        return self._timeout_s

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        try:
            model = self._args_model.model_validate(dict(arguments))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}" for err in exc.errors()
            )
            raise ToolError(ErrorCode.INVALID_ARGS, problems) from None
        return model.model_dump(mode="json")

    async def call(self, arguments: dict[str, Any]) -> Any:
        return await self._fn(self._args_model.model_validate(arguments))
