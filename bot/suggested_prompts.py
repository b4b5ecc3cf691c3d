"""Suggested prompts: what Slack's assistant pane offers when someone opens Parley there.

Configured under `assistant:` in parley.yaml, or, when the file gives none, drawn from the configured tools:
one plain question per tool, filled with the example its own argument schema gives (JSON Schema `examples`,
`default`, `enum`, or the "e.g. …" of the argument's description). A tool that gives no example gets no prompt:
Parley never suggests a question it would have to make up.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agent import ToolSpec, shorten
from bot.wording import InAssistant

# Slack shows at most four suggested prompts (assistant.threads.setSuggestedPrompts).
MAX_PROMPTS = 4
# Slack documents no length limits; these keep a prompt a one-line button and a question a question.
MAX_TITLE_CHARS = 75
MAX_MESSAGE_CHARS = 2000
# A thread's title in the assistant pane's history: the first question, shortened.
THREAD_TITLE_CHARS = 60

# "e.g. `47 * 12` or …", "e.g. 上海 or Shanghai.": the first example a description gives.
_EXAMPLE = re.compile(r"e\.g\.,?\s+(?:`([^`]+)`|([^,;.`]+?)(?=\s+or\s|[,;.]|$))")
_IDENTIFIER = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)+$")


class SuggestedPrompt(BaseModel):
    """One prompt: `title` is what the button shows, `message` what is asked when someone clicks it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    title: str = Field(max_length=MAX_TITLE_CHARS)
    message: str = Field(max_length=MAX_MESSAGE_CHARS)

    @field_validator("title")
    @classmethod
    def _one_line(cls, value: str) -> str:
        return _not_blank(" ".join(value.split()))

    @field_validator("message")
    @classmethod
    def _a_question(cls, value: str) -> str:
        return _not_blank(value.strip())


class AssistantConfig(BaseModel):
    """`assistant:` in parley.yaml. No `prompts` key: prompts drawn from the tools; `prompts: []`: none."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    title: str = Field(InAssistant.PROMPTS_TITLE, max_length=MAX_TITLE_CHARS)
    prompts: tuple[SuggestedPrompt, ...] | None = None

    @field_validator("title")
    @classmethod
    def _one_line(cls, value: str) -> str:
        return _not_blank(" ".join(value.split()))

    @field_validator("prompts")
    @classmethod
    def _at_most_four(cls, value: tuple[SuggestedPrompt, ...] | None) -> tuple[SuggestedPrompt, ...] | None:
        if value is not None and len(value) > MAX_PROMPTS:
            raise ValueError(f"Slack shows at most {MAX_PROMPTS} suggested prompts (got {len(value)})")
        return value


class PromptSet(BaseModel):
    """What the pane offers: a heading and up to four prompts (none: Parley sets no prompts)."""

    model_config = ConfigDict(frozen=True)

    title: str
    prompts: tuple[SuggestedPrompt, ...]


def prompt_set(config: AssistantConfig, tools: Sequence[ToolSpec]) -> PromptSet:
    """The configured prompts, or one per tool that gives an example (the first four)."""
    prompts = config.prompts if config.prompts is not None else drawn_from_tools(tools)
    return PromptSet(title=config.title, prompts=prompts[:MAX_PROMPTS])


def drawn_from_tools(tools: Sequence[ToolSpec]) -> tuple[SuggestedPrompt, ...]:
    found: list[SuggestedPrompt] = []
    for spec in tools:
        prompt = prompt_for(spec)
        if prompt is not None and all(prompt.message != other.message for other in found):
            found.append(prompt)
    return tuple(found)


def prompt_for(spec: ToolSpec) -> SuggestedPrompt | None:
    """A plain question this tool answers, from its own example arguments; None when it gives none."""
    example = example_arguments(spec.parameters)
    if example is None:
        return None
    known = InAssistant.TOOL_PROMPTS.get(spec.name)
    if known is not None and _fills(known, example):
        title, message = (part.format(**example) for part in known)
    else:
        description = _first_sentence(spec.description) or spec.name
        message = InAssistant.TOOL_PROMPT.format(description=description, example=", ".join(example.values()))
        title = description
    return SuggestedPrompt(title=shorten(title, MAX_TITLE_CHARS), message=shorten(message, MAX_MESSAGE_CHARS))


def example_arguments(parameters: Mapping[str, Any]) -> dict[str, str] | None:
    """An example value for each required argument (the first argument when none is required), or None."""
    properties = parameters.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        return None
    required = parameters.get("required")
    names = [n for n in required if n in properties] if isinstance(required, list) and required else []
    names = names or [next(iter(properties))]
    example: dict[str, str] = {}
    for name in names:
        value = _example_of(properties[name])
        if value is None:
            return None
        example[name] = value
    return example


def thread_title(question: str) -> str:
    """The assistant thread's title: its first question on one line, shortened."""
    return shorten(question, THREAD_TITLE_CHARS)


def _example_of(schema: Any) -> str | None:
    if not isinstance(schema, Mapping):
        return None
    for candidates in (schema.get("examples"), [schema.get("default")], schema.get("enum")):
        first = candidates[0] if isinstance(candidates, list) and candidates else None
        if isinstance(first, str | int | float) and not isinstance(first, bool) and str(first).strip():
            return _plain(str(first))
    description = schema.get("description")
    match = _EXAMPLE.search(description) if isinstance(description, str) else None
    if match is None:
        return None
    return _plain(match.group(1) or match.group(2))


def _plain(value: str) -> str:
    """`satellites_launched` → `satellites launched`: an identifier in the words people would use."""
    value = " ".join(value.split())
    return value.replace("_", " ") if _IDENTIFIER.match(value) else value


def _first_sentence(description: str) -> str:
    first = re.split(r"(?<=[.!?:])\s", " ".join(description.split()), maxsplit=1)[0]
    return first.rstrip(".:!? ")


def _not_blank(value: str) -> str:
    if not value:
        raise ValueError("must not be empty")
    return value


def _fills(template: tuple[str, str], example: Mapping[str, str]) -> bool:
    try:
        for part in template:
            part.format(**example)
    except (KeyError, IndexError):
        return False
    return True
