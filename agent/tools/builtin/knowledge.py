"""KnowledgeBase: one entity's facts from a key–value YAML file, behind the `knowledge_lookup` tool.

Keys match after trimming, NFC, case-folding and treating spaces and dashes as `_`. An unknown key is
`NOT_FOUND` with the closest existing keys — the recovery seed 003's demo A needed after a spurious
`cost_per_satellite_musd_unit` lookup.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from agent.errors import ConfigError, ErrorCode, ToolError
from agent.tools.base import FunctionTool, Tool
from agent.tools.builtin.options import BuiltinOptions, load_data_file

NAME = "knowledge_lookup"
DEFAULT_FILE = "knowledge.yaml"
DEFAULT_TIMEOUT_S = 2.0
_MAX_SUGGESTIONS = 3
_SEPARATORS = re.compile(r"[\s\-]+")
_UNIT_SUFFIXES = ("_unit", "_units")

Scalar = str | int | float | bool


@dataclass(frozen=True)
class Fact:
    key: str
    value: Scalar
    unit: str | None = None


class KnowledgeBase:
    """The facts of one entity, as its fact sheet states them."""

    def __init__(self, facts: Mapping[str, Fact], *, entity: str, source: str) -> None:
        self._facts = {canonical_key(key): fact for key, fact in facts.items()}
        self.entity = entity
        self.source = source

    @classmethod
    def from_data(cls, data: Any, *, origin: str) -> KnowledgeBase:
        """Parse `{entity, source, facts: {key: value | {value, unit}}}`; ConfigError says what is wrong."""
        if not isinstance(data, dict) or not isinstance(data.get("facts"), dict):
            raise ConfigError(f"{origin}: expected a mapping with `facts:` (key: value, or key: {{value, unit}})")
        facts: dict[str, Fact] = {}
        for key, spec in data["facts"].items():
            value, unit = (spec.get("value"), spec.get("unit")) if isinstance(spec, dict) else (spec, None)
            if not isinstance(value, Scalar):
                raise ConfigError(f"{origin}: fact {key!r} needs a plain value (text or number)")
            facts[str(key)] = Fact(str(key), value, None if unit is None else str(unit))
        entity = str(data.get("entity") or "unknown entity")
        return cls(facts, entity=entity, source=str(data.get("source") or f"{entity} fact sheet"))

    @property
    def keys(self) -> list[str]:
        return [fact.key for fact in self._facts.values()]

    def lookup(self, key: str) -> dict[str, Any]:
        """The fact under `key`, with its unit and source; `ToolError(NOT_FOUND)` with suggestions otherwise."""
        wanted = canonical_key(key)
        if not wanted:
            raise ToolError(ErrorCode.INVALID_ARGS, "the key is empty")
        fact = self._facts.get(wanted)
        if fact is None:
            raise self._not_found(key, wanted)
        answer: dict[str, Any] = {"key": fact.key, "value": fact.value}
        if fact.unit:
            answer["unit"] = fact.unit
        answer["entity"] = self.entity
        answer["source"] = self.source
        return answer

    def _not_found(self, key: str, wanted: str) -> ToolError:
        closest = difflib.get_close_matches(wanted, list(self._facts), n=_MAX_SUGGESTIONS, cutoff=0.5)
        suggestions = [self._facts[k].key for k in closest]
        message = f"no such key {key.strip()!r} in the {self.source}"
        base = next((wanted.removesuffix(s) for s in _UNIT_SUFFIXES if wanted.endswith(s)), None)
        unit_of = self._facts.get(base) if base else None
        if unit_of is not None and unit_of.unit:
            message += f"; units are not separate keys: {unit_of.key!r} is in {unit_of.unit}"
        elif suggestions:
            message += f"; closest keys: {', '.join(suggestions)}"
        details: dict[str, Any] = {"closest_keys": suggestions}
        if len(self._facts) <= 20:
            details["available_keys"] = self.keys
        return ToolError(ErrorCode.NOT_FOUND, message, details=details)


def canonical_key(key: str) -> str:
    """How keys compare: trimmed, NFC, case-folded, spaces and dashes as `_`."""
    text = unicodedata.normalize("NFC", key).strip().casefold()
    return _SEPARATORS.sub("_", text)


class KnowledgeArgs(BaseModel):
    key: str = Field(
        min_length=1,
        max_length=200,
        description="The fact's key, e.g. `satellites_launched` or `cost_per_satellite_musd`. "
        "Units come with the value; there are no separate unit keys.",
    )


def knowledge_tool(base: KnowledgeBase, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> FunctionTool:
    async def knowledge_lookup(args: KnowledgeArgs) -> dict[str, Any]:
        return base.lookup(args.key)

    listed = ", ".join(base.keys[:20])
    return FunctionTool(
        NAME,
        f"Look up one fact about {base.entity} in the {base.source} by its key. Keys: {listed}.",
        KnowledgeArgs,
        knowledge_lookup,
        timeout_s=timeout_s,
    )


class KnowledgeOptions(BuiltinOptions):
    file: str = DEFAULT_FILE


def build_knowledge_lookup(options: Mapping[str, Any], data_dir: Path) -> Tool:
    parsed = KnowledgeOptions.parse(options, builtin=NAME)
    data = load_data_file(data_dir, parsed.file, builtin=NAME)
    return knowledge_tool(KnowledgeBase.from_data(data, origin=f"builtin {NAME!r}: {parsed.file}"))
