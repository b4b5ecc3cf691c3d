"""Finalisation: the output constraints a draft answer must meet before anyone sees it.

Every fact cites the tool call it came from (`[n]`, the tag each successful observation carries, or
seed 000's `（来源：get_weather）`); a number that appears in no observation and not in the question is a
grounding failure; in JSON mode the answer must validate against the configured schema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import cached_property
from typing import Any

import jsonschema

from agent.result import Citation

_TAG = re.compile(r"\[(\d{1,4})\]")
_NAMED = re.compile(r"\[([A-Za-z_][\w-]{0,63})\]|[（(]\s*(?:来源|source)\s*[:：]\s*([\w-]{1,64})\s*[)）]", re.I)
# Not after an ASCII letter, digit or point ("p50", "v1.2"); CJK text runs straight into figures ("上海31°C").
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![A-Za-z0-9_.])[-+]?\d+(?:\.\d+)?")
_LIST_MARKER = re.compile(r"^\s*\d{1,2}[.)、]\s", re.M)
_SENTENCE = re.compile(r"(?<=[。！？!?；;\n])|(?<=[.])(?=\s)")


@dataclass(frozen=True)
class Source:
    """A successful observation that an answer may cite."""

    number: int
    tool: str
    tool_call_id: str
    step: int
    arguments: dict[str, Any]
    data: Any

    @property
    def tag(self) -> str:
        return f"[{self.number}]"

    @cached_property
    def numbers(self) -> set[Decimal]:
        # Cached: every draft answer is checked against every source, and payloads can be large.
        return numbers_in(json.dumps([self.arguments, self.data], ensure_ascii=False, default=str))

    def citation(self) -> Citation:
        return Citation(
            marker=self.tag, tool=self.tool, tool_call_id=self.tool_call_id, step=self.step, arguments=self.arguments
        )

    def summary(self, limit: int = 160) -> str:
        text = json.dumps(self.data, ensure_ascii=False, default=str)
        return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class AnswerCheck:
    citations: list[Citation] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def numbers_in(text: str) -> set[Decimal]:
    found: set[Decimal] = set()
    for match in _NUMBER.finditer(text):
        try:
            found.add(Decimal(match.group(0).replace(",", "")).normalize())
        except InvalidOperation:
            continue
    return found


def check_answer(answer: str, sources: Sequence[Source], question: str) -> AnswerCheck:
    """Resolve the answer's citations and find its ungrounded numbers and uncited facts."""
    check = AnswerCheck()
    by_number = {s.number: s for s in sources}
    by_tool: dict[str, list[Source]] = {}
    for source in sources:
        by_tool.setdefault(source.tool.casefold(), []).append(source)

    def cited_in(text: str) -> list[Source]:
        cited: list[Source] = []
        for match in _TAG.finditer(text):
            source = by_number.get(int(match.group(1)))
            if source is None:
                check.problems.append(f"{match.group(0)} is not the tag of any successful tool result")
            else:
                cited.append(source)
        for match in _NAMED.finditer(text):
            name = (match.group(1) or match.group(2) or "").casefold()
            named = by_tool.get(name)
            if named:
                cited.extend(named)
            elif match.group(2):
                check.problems.append(f"the answer cites {name}, which returned nothing usable")
        return cited

    question_numbers = numbers_in(question)
    known = set(question_numbers)
    for source in sources:
        known |= source.numbers
    body = _LIST_MARKER.sub(" ", answer)
    all_cited: list[Source] = []
    for sentence in _SENTENCE.split(body):
        cited = cited_in(sentence)
        all_cited.extend(cited)
        plain = _NAMED.sub(" ", _TAG.sub(" ", sentence))
        for number in sorted(numbers_in(plain) - question_numbers):
            shown = format(number, "f")
            if number not in known:
                check.problems.append(f"the number {shown} appears in no tool result")
            elif not cited:
                check.problems.append(f"the number {shown} is stated without a citation")
            elif not any(number in s.numbers for s in cited):
                tags = ", ".join(s.tag for s in cited)
                check.problems.append(f"the number {shown} is not in the result it cites ({tags})")
    if sources and not all_cited:
        check.problems.append("the answer cites no tool result")
    unique: dict[int, Source] = {s.number: s for s in all_cited}
    check.citations = [unique[n].citation() for n in sorted(unique)]
    check.problems = list(dict.fromkeys(check.problems))
    return check


def validate_json_output(text: str, schema: dict[str, Any]) -> tuple[Any, list[str]]:
    """Parse a JSON answer and validate it; returns the value and the problems (empty when valid)."""
    candidate = text.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", candidate, re.DOTALL)
    if fenced:
        candidate = fenced.group(1)
    try:
        value = json.loads(candidate)
    except ValueError as exc:
        return None, [f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"]
    validator = jsonschema.Draft202012Validator(schema)
    problems = [
        f"{'/'.join(str(p) for p in error.absolute_path) or '(root)'}: {error.message}"
        for error in sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    ]
    return value, problems[:10]
