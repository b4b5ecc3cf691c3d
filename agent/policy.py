"""Policies: tool calls a person must approve before they run (the `policies:` key of the configuration).

    policies:
      - tool: transfer_funds
        requires_approval: true                        # every call is held
      - tool: send_email
        hold_when:                                     # held when any condition holds
          - {argument: recipient, not_in_domain: example.com}
      - tool: transfer_funds
        hold_when: [{argument: amount, above: 1000}]
        reason: Transfers over 1000 need a reviewer's approval

Conditions are data, not code (nothing is evaluated). A condition that cannot be checked — the argument
is missing, or not a number where a number is compared — holds the call: a policy fails closed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence, Set
from decimal import Decimal, InvalidOperation
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agent.grading import ErrorLevel
from agent.messages import ToolCallRequest
from agent.result import Escalation, EscalationKind, HeldCall

NUMERIC = ("above", "at_least", "below", "at_most")


class HoldCondition(BaseModel):
    """One test on one argument; exactly one operator is given."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    argument: str = Field(min_length=1)
    above: Decimal | None = None
    at_least: Decimal | None = None
    below: Decimal | None = None
    at_most: Decimal | None = None
    equals: Any = None
    one_of: list[Any] | None = None
    not_one_of: list[Any] | None = None
    not_in_domain: str | None = None  # an e-mail address or URL whose domain is not this one (or a subdomain)
    matches: str | None = None  # a regular expression searched in the argument's text

    @model_validator(mode="after")
    def _one_operator(self) -> HoldCondition:
        given = [name for name in self._operators() if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(
                f"a hold condition on {self.argument!r} needs exactly one operator (got {given or 'none'})"
            )
        if self.matches is not None:
            try:
                re.compile(self.matches)
            except re.error as exc:
                raise ValueError(f"matches: not a regular expression: {exc}") from None
        return self

    @staticmethod
    def _operators() -> tuple[str, ...]:
        return (*NUMERIC, "equals", "one_of", "not_one_of", "not_in_domain", "matches")

    def describe(self) -> str:
        operator = next(name for name in self._operators() if getattr(self, name) is not None)
        return f"{self.argument} {operator.replace('_', ' ')} {getattr(self, operator)}"

    def holds(self, arguments: dict[str, Any]) -> bool:
        if self.argument not in arguments:
            return True  # cannot be checked: held
        value = arguments[self.argument]
        if self.equals is not None:
            return value == self.equals
        if self.one_of is not None:
            return value in self.one_of
        if self.not_one_of is not None:
            return value not in self.not_one_of
        if self.not_in_domain is not None:
            return not _in_domain(value, self.not_in_domain)
        if self.matches is not None:
            return re.search(self.matches, str(value)) is not None
        number = _number(value)
        if number is None:
            return True
        if self.above is not None:
            return number > self.above
        if self.at_least is not None:
            return number >= self.at_least
        if self.below is not None:
            return number < self.below
        return number <= self.at_most  # type: ignore[operator]


class ToolPolicy(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: str = Field(min_length=1)
    requires_approval: bool = False
    hold_when: list[HoldCondition] = Field(default_factory=list)
    reason: str | None = None

    @model_validator(mode="after")
    def _holds_something(self) -> ToolPolicy:
        # `requires_approval: false` alone says "never held": it lifts the hold an MCP server's
        # `destructiveHint` puts on a tool by default.
        if not self.requires_approval and not self.hold_when and "requires_approval" not in self.model_fields_set:
            raise ValueError(f"the policy for {self.tool!r} needs requires_approval: true or hold_when conditions")
        return self

    def hold_reason(self, arguments: dict[str, Any]) -> str | None:
        if self.requires_approval:
            return self.reason or f"every {self.tool} call needs a reviewer's approval"
        held = [condition.describe() for condition in self.hold_when if condition.holds(arguments)]
        if not held:
            return None
        return self.reason or f"{self.tool} needs a reviewer's approval when {' or '.join(held)}"


class Policies:
    """The configured policies of every tool, asked before a call runs."""

    def __init__(self, policies: Sequence[ToolPolicy]) -> None:
        self._by_tool: dict[str, list[ToolPolicy]] = {}
        for policy in policies:
            self._by_tool.setdefault(policy.tool, []).append(policy)

    def hold_reason(
        self, tool: str, arguments: dict[str, Any] | None, *, unnamed: Callable[[str], str | None] | None = None
    ) -> str | None:
        """Why this call must wait for a person, or None. Unusable arguments are not held: the executor
        refuses them without running anything. `unnamed` holds tools that no policy names (a destructive
        MCP tool); a policy naming the tool decides alone, either way."""
        if arguments is None:
            return None
        if tool not in self._by_tool:
            return unnamed(tool) if unnamed is not None else None
        reasons = [r for policy in self._by_tool.get(tool, ()) if (r := policy.hold_reason(arguments))]
        return "; ".join(reasons) or None

    def held(
        self,
        calls: Sequence[ToolCallRequest],
        *,
        approved: Set[str] = frozenset(),
        unnamed: Callable[[str], str | None] | None = None,
    ) -> list[HeldCall]:
        """The calls a policy holds for a person; a call people already approved in this run is not held."""
        held = []
        for call in calls:
            reason = self.hold_reason(call.name, call.arguments, unnamed=unnamed)
            if reason is not None and call_signature(call.name, call.arguments) not in approved:
                held.append(HeldCall(id=call.id, tool=call.name, arguments=dict(call.arguments or {}), reason=reason))
        return held


def call_signature(tool: str, arguments: dict[str, Any] | None) -> str:
    """A call's identity for approvals: the tool and its arguments, whatever their order."""
    return tool + json.dumps(arguments or {}, sort_keys=True, ensure_ascii=False, default=str)


def held_escalation(held: Sequence[HeldCall]) -> Escalation:
    """Why people must look at a held run: the policies' reasons and the exact calls they hold."""
    first = held[0]
    return Escalation(
        kind=EscalationKind.HELD_ACTION,
        reason="approval_required",
        level=ErrorLevel.L4,
        message="; ".join(dict.fromkeys(call.reason for call in held)),
        tool=first.tool,
        arguments=first.arguments,
        tool_call_id=first.id,
        held_calls=list(held),
    )


def _number(value: Any) -> Decimal | None:
    if isinstance(value, bool):
        return None
    try:
        number = Decimal(str(value).strip())
    except (InvalidOperation, ValueError):
        return None
    return number if number.is_finite() else None


def _in_domain(value: Any, domain: str) -> bool:
    text = str(value).strip().casefold()
    host = text.rsplit("@", 1)[1] if "@" in text else re.sub(r"^[a-z]+://", "", text).split("/", 1)[0]
    host = host.split(":", 1)[0].rstrip(".")
    domain = domain.casefold().lstrip("@").rstrip(".")
    return host == domain or host.endswith("." + domain)
