"""AgentConfig: the run's configuration as frozen value objects (parsed from the YAML by the caller)."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agent.escalation import DEFAULT_ESCALATE_ON
from agent.limits import Limits
from agent.policy import ToolPolicy
from agent.result import TerminationReason

# The actions every brain has besides the tools (seed 003's `final` and `give_up`).
RESERVED_TOOL_NAMES = frozenset({"final", "final_answer", "give_up", "giveup"})


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class BuiltinToolEntry(_Frozen):
    """`- builtin: calculator` (with optional `options:` for the built-in's back-end)."""

    builtin: str
    options: dict[str, Any] = Field(default_factory=dict)
    timeout_s: float | None = Field(None, gt=0)
    fallbacks: list[str] = Field(default_factory=list)
    # The tool changes something in the world (sends, books, pays, files a ticket): it is never suggested
    # to the model as a fallback, and no tool may declare it as one (agent/tools/fallbacks.py).
    acting: bool = False
    # Safe to run twice: a call whose outcome is unknown (Parley stopped during it) is run again on resume. The
    # built-ins only read, so they are, unless declared acting (or `idempotent: false`).
    idempotent: bool = True

    @property
    def tool_name(self) -> str:
        return self.builtin


class HttpSpec(_Frozen):
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = "GET"
    url: str
    headers: dict[str, str] = Field(default_factory=dict)
    timeout_s: float = Field(10.0, gt=0)

    @model_validator(mode="before")
    @classmethod
    def _upper_method(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("method"), str):
            data = {**data, "method": data["method"].upper()}
        return data


class HttpToolEntry(_Frozen):
    """A team's own API, declared in YAML (format fixed in DESIGN.md)."""

    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    description: str
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    http: HttpSpec
    fallbacks: list[str] = Field(default_factory=list)
    acting: bool = False  # changes something in the world: never a fallback (as on BuiltinToolEntry)
    # Safe to run twice (as on BuiltinToolEntry); a team's API is not, unless its entry says so.
    idempotent: bool = False

    @property
    def tool_name(self) -> str:
        return self.name

    @model_validator(mode="after")
    def _not_reserved(self) -> HttpToolEntry:
        if self.name.casefold() in RESERVED_TOOL_NAMES:
            raise ValueError(f"the tool name {self.name!r} is reserved for the agent's own actions")
        return self


class McpSpec(_Frozen):
    """One MCP server: a Streamable HTTP `url` or a stdio `command` Parley starts (exactly one of them)."""

    url: str | None = None
    command: list[str] | None = Field(None, min_length=1)
    name: str | None = Field(None, pattern=r"^[A-Za-z0-9_-]{1,32}$")  # its tools are offered as <name>_<tool>
    headers: dict[str, str] = Field(default_factory=dict)  # `${VAR}` read from the environment at start
    env: dict[str, str] = Field(default_factory=dict)  # a stdio server's extra environment (`${VAR}` too)
    allow: list[str] | None = None  # only these tools are offered (the server's own names)
    block: list[str] = Field(default_factory=list)  # these tools are never offered
    timeout_s: float = Field(10.0, gt=0)  # every call, and connecting
    # Tools whose calls may be repeated safely after a timeout or a dropped connection, besides those the
    # server marks `readOnlyHint`: `true` for all of them, or a list of names.
    idempotent: bool | list[str] = False

    @model_validator(mode="after")
    def _one_transport(self) -> McpSpec:
        if (self.url is None) == (self.command is None):
            raise ValueError("an mcp entry needs exactly one of url (Streamable HTTP) and command (stdio)")
        if self.allow is not None and self.block:
            raise ValueError("an mcp entry takes allow or block, not both")
        if self.headers and self.url is None:
            raise ValueError("headers are sent to a url; a stdio server takes env instead")
        return self

    @property
    def server(self) -> str:
        """The server's name in pins, logs and `parley mcp trust`: its `name`, else its URL or command."""
        if self.name:
            return self.name
        return self.url if self.url is not None else " ".join(self.command or ())


class McpServerEntry(_Frozen):
    """`- mcp: {url: …}`: every tool an MCP server offers (filtered by allow / block), with its own schema."""

    mcp: McpSpec


ToolEntry = BuiltinToolEntry | HttpToolEntry | McpServerEntry
SingleToolEntry = BuiltinToolEntry | HttpToolEntry


def single_tools(entries: Sequence[ToolEntry]) -> list[SingleToolEntry]:
    """The entries that each define one tool by name (MCP servers' tools are only known once listed)."""
    return [entry for entry in entries if not isinstance(entry, McpServerEntry)]


class InStepCritique(StrEnum):
    """When the in-step critique runs (each run counts against `limits.max_critique_rounds`)."""

    NEVER = "never"
    ON_FAILURE = "on_failure"  # after a batch with a failure
    MULTI_TASK = "multi_task"  # after a failure, or after any batch when the question has several sub-tasks
    ALWAYS = "always"


class CritiqueConfig(_Frozen):
    in_step: InStepCritique = InStepCritique.ON_FAILURE
    closing: bool = True
    # Ask the brain for a verdict besides the rule-based checks: always, never, or (auto) where it pays —
    # several tasks, a failed call or a rejected draft, JSON output, a policy in play.
    llm: Literal["always", "auto", "never"] = "auto"

    @field_validator("llm", mode="before")
    @classmethod
    def _from_bool(cls, value: Any) -> Any:
        return {True: "always", False: "never"}.get(value, value) if isinstance(value, bool) else value


class ObservationConfig(_Frozen):
    hints: bool = False  # add a short `_hint` summary to each observation
    suggested_actions: bool = True


class DoneConfig(_Frozen):
    # auto: the LLM plans risky questions (several tasks, JSON output, a policy in play), the rules the rest;
    # llm: the LLM always (the rules stand in when it fails); rules: never the LLM.
    planner: Literal["llm", "rules", "auto"] = "auto"


class OutputConfig(_Frozen):
    format: Literal["text", "json"] = "text"
    json_schema: dict[str, Any] | None = Field(None, alias="schema")

    @model_validator(mode="after")
    def _schema_for_json(self) -> OutputConfig:
        if self.format == "json" and not self.json_schema:
            raise ValueError("output.format json needs output.schema (a JSON Schema)")
        return self


class BrainConfig(_Frozen):
    protocol: Literal["tools", "json_react"] = "tools"
    temperature: float = 0.0
    timeout_s: float = Field(60.0, gt=0)
    max_tokens: int | None = Field(None, gt=0)


class AgentConfig(_Frozen):
    """The whole YAML configuration the engine understands."""

    limits: Limits = Field(default_factory=Limits)
    brain: BrainConfig = Field(default_factory=BrainConfig)
    critique: CritiqueConfig = Field(default_factory=CritiqueConfig)
    observation: ObservationConfig = Field(default_factory=ObservationConfig)
    done: DoneConfig = Field(default_factory=DoneConfig)
    output: OutputConfig = Field(default_factory=OutputConfig)
    errors: dict[str, dict[str, Any]] = Field(default_factory=dict)
    tools: list[ToolEntry] = Field(default_factory=list)
    policies: list[ToolPolicy] = Field(default_factory=list)  # tool calls held for a person's approval
    # Runs that end this way go to people (`review.escalate_on` in the YAML; see agent/escalation.py).
    escalate_on: tuple[TerminationReason, ...] = DEFAULT_ESCALATE_ON

    def idempotent_tools(self) -> frozenset[str]:
        """The tools a call of which may run again when its outcome is unknown: declared idempotent, not acting,
        and held by no policy (what a person must approve is never run twice without one). An MCP server's tools are
        not among them: a call in flight when its process stopped is told as an unknown outcome, never repeated."""
        held = {policy.tool for policy in self.policies}
        return frozenset(
            entry.tool_name
            for entry in single_tools(self.tools)
            if entry.idempotent and not entry.acting and entry.tool_name not in held
        )

    @field_validator("escalate_on", mode="before")
    @classmethod
    def _reasons(cls, value: Any) -> Any:
        return (value,) if isinstance(value, str) else value
