"""Citations: every way models say where a fact comes from, read into the results it points at.

- Parley's own tags: `[1]`, `[1, 2]`, `[1][2]`, and `【1】` (how Chinese and Japanese models write them): they
  name calls exactly.
- Markdown footnotes: `[^1]` in the text and `[^1]: get_weather, Shanghai` below it. The footnote's line says
  which result it means (a tool, and names or arguments that tell its calls apart); a line that says nothing
  usable falls back to Parley's tag of the same number.
- A tool named in the text: "(source: get_weather)", "（来源：get_weather）", "(Quelle: get_weather)",
  "According to get_metrics, …", "get_weather によると": the tool's calls, narrowed by a qualifier written
  with it ("get_weather (上海)", "get_weather(city=北京)") — otherwise any of them; which one a figure rests on
  is then for the sentence's names to say (`attribution`).
- A list of sources after the answer ("Sources: get_weather (上海), get_weather (北京)"): it cites them for
  the whole answer.

A group of tags that ends a paragraph or a bullet ("… Beijing is 16 °C. [1][2]") cites the whole block.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from agent.grounding.language import SOURCE_LABELS
from agent.grounding.names import NameIndex, identity_of
from agent.grounding.structure import BlockKind, Layout
from agent.source import Source

_NUMBERS = r"\d{1,4}(?:\s*[,，、]\s*\d{1,4})*"
_TAG = re.compile(rf"\[({_NUMBERS})\]|【({_NUMBERS})】")
_TAG_SEPARATOR = re.compile(r"\s*[,，、]\s*")  # "[1, 2]", "【1、2】"
_TAG_RUN = re.compile(rf"(?:\[{_NUMBERS}\]|【{_NUMBERS}】)(?:[\s,，]*(?:\[{_NUMBERS}\]|【{_NUMBERS}】))*")
_FOOTNOTE_REF = re.compile(r"\[\^([^\]\s]{1,16})\](?!:)")
_FOOTNOTE_LABEL = re.compile(r"\s*\[\^[^\]\s]{1,16}\]:")
_QUALIFIER = re.compile(r"\s*[（(]([^()（）]{1,120})[)）]")
_LABELLED = re.compile(
    r"[（(]\s*(?:"
    + "|".join(re.escape(label) for label in SOURCE_LABELS)
    + r")\s*[:：]\s*([A-Za-z_][\w.-]{0,63})\s*[)）]",
    re.IGNORECASE,
)
_BLOCK_TAIL = re.compile(r"^[\s.。!！?？*_)）]*$")  # what may follow a block's closing group of tags


@dataclass(frozen=True)
class Cite:
    """One citation in the answer: where it stands (masked before figures are read) and what it points at."""

    start: int
    end: int
    sources: tuple[Source, ...]
    exact: bool  # Parley's tags, or a footnote that tells one call: a figure must be in what it names
    sentence: int  # the sentence it stands in
    closes_block: bool = False  # a group of tags that ends its paragraph or bullet: it cites the whole block
    whole_answer: bool = False  # in a list of sources after the answer


@dataclass
class Citations:
    """The answer's citations, sentence by sentence, and the problems reading them found (unknown tags)."""

    cites: list[Cite]
    problems: list[str]
    _by_sentence: dict[int, list[Cite]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._by_sentence = {}
        for cite in self.cites:  # each sentence is asked for its own and its neighbours'
            self._by_sentence.setdefault(cite.sentence, []).append(cite)

    def in_sentence(self, index: int) -> list[Cite]:
        return list(self._by_sentence.get(index, ()))


def read_citations(text: str, layout: Layout, sources: Sequence[Source]) -> Citations:
    """Every citation of `text` (the blanked answer), resolved to the sources it points at."""
    by_number = {source.number: source for source in sources}
    by_tool: dict[str, list[Source]] = {}
    for source in sources:
        by_tool.setdefault(source.tool.casefold(), []).append(source)
    footnotes = {
        block.label: text[block.start : block.end] for block in layout.blocks if block.kind is BlockKind.FOOTNOTE
    }
    tools = _tool_pattern(tuple(by_tool))
    if tools is not None and _tool_names(tuple(by_tool)).search(text) is None:
        tools = None  # no tool named anywhere (most answers): no sentence needs the scan
    cites: list[Cite] = []
    problems: list[str] = []
    for number, sentence in enumerate(layout.sentences):
        block = layout.block_of(sentence)
        whole_answer = block.kind is BlockKind.SOURCES
        segment = text[sentence.start : sentence.end]
        if block.kind is BlockKind.FOOTNOTE:  # the definition's label ("[^1]:") is no figure
            label = _FOOTNOTE_LABEL.match(segment)
            if label is not None:
                cites.append(Cite(sentence.start, sentence.start + label.end(), (), False, number))
        # Each kind of citation has a mark without which it is not there: most sentences are done at a glance.
        tags = _TAG_RUN.finditer(segment) if "[" in segment or "【" in segment else ()
        for match in tags:
            cited = _tagged(match.group(0), by_number, problems)
            start, end = sentence.start + match.start(), sentence.start + match.end()
            closes = block.kind is BlockKind.PROSE and bool(_BLOCK_TAIL.match(text[end : block.end]))
            cites.append(Cite(start, end, tuple(cited), True, number, closes, whole_answer))
        references = _FOOTNOTE_REF.finditer(segment) if "[^" in segment else ()
        for match in references:  # a definition's own label ("[^1]:") is not a reference
            cited, exact = _footnote(match.group(1), footnotes, by_number, by_tool, tools)
            start, end = sentence.start + match.start(), sentence.start + match.end()
            closes = block.kind is BlockKind.PROSE and bool(_BLOCK_TAIL.match(text[end : block.end]))
            cites.append(Cite(start, end, tuple(cited), exact, number, closes, whole_answer))
        if tools is not None:
            for match in tools.finditer(segment):
                start, end = sentence.start + match.start(), sentence.start + match.end()
                named = by_tool[match.group(0).casefold()]
                if block.kind is BlockKind.FOOTNOTE:  # "[^2]: get_weather, Beijing": the line says which call
                    cited = _narrowed(segment, named)
                else:
                    cited, end = _qualified(text, end, sentence.end, named)
                start, end = _enclosing(text, start, end, sentence.start, sentence.end)
                cites.append(Cite(start, end, tuple(cited), False, number, False, whole_answer))
        labelled = _LABELLED.finditer(segment) if "(" in segment or "（" in segment else ()
        for match in labelled:
            name = match.group(1).casefold()
            if name not in by_tool:
                start, end = sentence.start + match.start(), sentence.start + match.end()
                cites.append(Cite(start, end, (), False, number, False, whole_answer))
                problems.append(f"the answer cites {name}, which returned nothing usable")
    return Citations(sorted(cites, key=lambda c: c.start), list(dict.fromkeys(problems)))


@lru_cache(maxsize=64)
def _tool_pattern(tools: tuple[str, ...]) -> re.Pattern[str] | None:
    """Where the text names one of `tools` (a run's tools, the same for each of its drafts)."""
    if not tools:
        return None
    names = "|".join(re.escape(name) for name in sorted(tools, key=len, reverse=True))
    return re.compile(rf"(?<![\w-])(?:{names})(?![\w-])", re.IGNORECASE)


@lru_cache(maxsize=64)
def _tool_names(tools: tuple[str, ...]) -> re.Pattern[str]:
    """`_tool_pattern` without its boundaries: it finds at least every place that one does, in any part of a text."""
    return re.compile("|".join(re.escape(name) for name in tools), re.IGNORECASE)


def _tagged(group: str, by_number: dict[int, Source], problems: list[str]) -> list[Source]:
    cited: list[Source] = []
    for tag in _TAG.finditer(group):
        for number in _TAG_SEPARATOR.split(tag.group(1) or tag.group(2)):
            source = by_number.get(int(number))
            if source is None:
                problems.append(f"[{int(number)}] is not the tag of any successful tool result")
            elif source not in cited:
                cited.append(source)
    return cited


def _footnote(
    label: str,
    footnotes: dict[str, str],
    by_number: dict[int, Source],
    by_tool: dict[str, list[Source]],
    tools: re.Pattern[str] | None,
) -> tuple[list[Source], bool]:
    """What `[^label]` points at: the calls its definition names, else Parley's tag of that number."""
    definition = footnotes.get(label, "")
    body = definition.split(":", 1)[-1] if definition else ""
    numbers = [int(n) for tag in _TAG.finditer(body) for n in re.findall(r"\d+", tag.group(0))]
    tagged = [by_number[n] for n in numbers if n in by_number]
    if tagged:
        return list(dict.fromkeys(tagged)), len(set(tagged)) == 1
    named = [s for m in (tools.finditer(body) if tools is not None else ()) for s in by_tool[m.group(0).casefold()]]
    if named:
        narrowed = _narrowed(body, list({s.number: s for s in named}.values()))
        return narrowed, len(narrowed) == 1
    if label.isdigit() and int(label) in by_number:
        return [by_number[int(label)]], True
    return [], False


def _qualified(text: str, end: int, limit: int, named: list[Source]) -> tuple[list[Source], int]:
    """A tool's calls, narrowed by what is written with its name ("get_weather (上海)"), and where that ends."""
    qualifier = _QUALIFIER.match(text, end, limit)
    if qualifier is None or len(named) == 1:
        return named, end
    narrowed = _narrowed(qualifier.group(1), named)
    return narrowed, qualifier.end()


def _narrowed(qualifier: str, named: list[Source]) -> list[Source]:
    """The calls whose names or arguments the qualifier gives; all of them when it gives none."""
    words = NameIndex(qualifier)
    chosen = [source for source in named if any(words.spans(name) for name in identity_of(source))]
    return chosen or named


def _enclosing(text: str, start: int, end: int, low: int, high: int) -> tuple[int, int]:
    """The parenthesis a tool's name stands in ("(source: get_weather)"), or the name alone."""
    opening = max(text.rfind("(", low, start), text.rfind("（", low, start))
    if opening < 0 or re.search(r"[)）]", text[opening:start]):
        return start, end
    closing = [i for i in (text.find(")", end, high), text.find("）", end, high)) if i >= 0]
    if not closing or min(closing) - end > 120:
        return start, end
    return opening, min(closing) + 1
