"""Evaluation cases: a question, what a good run of it looks like, and optionally the model's recorded decisions.

A case file is YAML (`cases: [...]`), validated here; its JSON Schema (`case_file_schema`) is published for editors
in `config/eval/cases.schema.json`. A file that cannot be used is a `CaseFileError` naming the case and the field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agent import ConfigError, OutcomeKind, ReplayScript, TerminationReason, ToolEntry, exception_line

SCHEMA_FILE = "cases.schema.json"


class CaseFileError(ConfigError):
    """A case file that cannot be used; `str()` names the file, the case and the field."""


class Expect(BaseModel):
    """What a good run of the case does. Every field is optional; an empty `expect:` asks only that it ran."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    outcome: OutcomeKind | None = Field(None, description="answered | partial | escalated | refused | held")
    reason: TerminationReason | None = Field(None, description="the termination reason, e.g. answered, gave_up")
    figures: list[str] = Field(default_factory=list, description="must appear in the answer, each grounded")
    not_figures: list[str] = Field(default_factory=list, description="must not appear in the answer")
    tools: list[str] = Field(default_factory=list, description="tools that must be called")
    not_tools: list[str] = Field(default_factory=list, description="tools that must never be called")
    max_steps: int | None = Field(None, ge=1, description="the run takes at most this many steps")


class ToolReturn(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: str
    arguments: dict[str, Any] | None = None
    ok: bool
    error: str | None = None
    returned: str = ""


class Provenance(BaseModel):
    """Where a case imported from feedback came from (`parley eval import`): for the person who curates it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    verdict: str
    answer: str = ""
    outcome: str = ""
    tool_results: list[ToolReturn] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class Case(BaseModel):
    """One question and its expectations. `tools:` replaces the configuration's tool set for this case (a suite
    switches on the built-in tools' faults this way); `replay:` plays back recorded decisions instead of the LLM."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, max_length=100, pattern=r"^\S+$")
    question: str = Field(min_length=1)
    expect: Expect = Field(default_factory=Expect)
    replay: Path | None = Field(None, description="a recorded script, relative to the case file")
    tools: list[ToolEntry] | None = None
    feedback: Provenance | None = None


class CaseFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    cases: list[Case] = Field(min_length=1)

    @field_validator("cases")
    @classmethod
    def _unique_ids(cls, cases: list[Case]) -> list[Case]:
        seen: set[str] = set()
        for case in cases:
            if case.id in seen:
                raise ValueError(f"two cases have the id {case.id!r}")
            seen.add(case.id)
        return cases


@dataclass(frozen=True)
class LoadedCase:
    """A case as it runs: its recorded script read (when it has one)."""

    case: Case
    script: ReplayScript | None = None


def load_cases(path: Path) -> list[LoadedCase]:
    """The cases of `path`, each with its replay script read; `CaseFileError` for the first problem."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CaseFileError(f"case file not found: {path}") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise CaseFileError(f"cannot read the case file {path}: {exception_line(exc)}") from None
    try:
        parsed = CaseFile.model_validate(raw)
    except ValidationError as exc:
        raise CaseFileError(f"{path}: {_where(raw, exc)}") from None
    loaded = []
    for case in parsed.cases:
        script = None
        if case.replay is not None:
            script_path = case.replay if case.replay.is_absolute() else path.parent / case.replay
            try:
                script = ReplayScript.load(script_path)
            except ConfigError as exc:
                raise CaseFileError(f"{path}: case {case.id!r}: replay: {exc}") from None
            if not script.answers(case.question):
                raise CaseFileError(
                    f"{path}: case {case.id!r}: replay: {script_path} records the answer to {script.question!r}"
                )
        loaded.append(LoadedCase(case=case, script=script))
    return loaded


def _where(raw: Any, exc: ValidationError) -> str:
    """`case 'zephyr-spend': expect.outcome: Input should be …` — the case by its id when it has one."""
    first = exc.errors()[0]
    loc = list(first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")
    if len(loc) >= 2 and loc[0] == "cases" and isinstance(loc[1], int):
        index = loc[1]
        cases = raw.get("cases") if isinstance(raw, dict) else None
        entry = cases[index] if isinstance(cases, list) and index < len(cases) else None
        name = entry.get("id") if isinstance(entry, dict) else None
        who = f"case {name!r}" if isinstance(name, str) else f"case #{index + 1}"
        field = ".".join(str(p) for p in loc[2:]) or "the case"
        return f"{who}: {field}: {message}"
    field = ".".join(str(p) for p in loc) or "the file"
    return f"{field}: {message}"


def case_file_schema() -> dict[str, Any]:
    """The JSON Schema of a case file, for editors (yaml-language-server, VS Code)."""
    schema = CaseFile.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "Parley evaluation cases"
    return schema


def schema_text() -> str:
    return json.dumps(case_file_schema(), indent=2, ensure_ascii=False) + "\n"
