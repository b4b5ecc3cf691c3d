"""Grounding: which figures and dates of a draft answer the cited tool results back, and how — or why not.

A figure is bound to the citation that follows it in its sentence ("28 °C [1]" rests on [1]); a figure
after the sentence's last citation rests on all of the sentence's citations, and one in a sentence that
cites nothing on the previous sentence's. It is grounded when

- a source it rests on states it the way people show it (`SourceFacts.find`: as returned, rounded or
  truncated to the digits shown, with a scale word, as a percentage, in another unit of the same kind), or
- it derives from grounded figures of its sentence and the sentence before (`derivation`), or
- the asker gave it (or it is today's year, or today's date).

A figure that is in another result than the one it cites is a swapped fact, never grounded. Dates are
matched the same way against the dates in the results. Each sentence keeps its own verdict, so a partial
answer can repeat the sentences that passed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

from agent.grounding.dates import WrittenDate, read_dates
from agent.grounding.derivation import MAX_OPERANDS, Operand, find_derivation
from agent.grounding.facts import Fact, facts_of
from agent.grounding.figures import Figure, Reading, decimal_mark, normalise_digits, read_figures
from agent.grounding.language import ABBREVIATIONS, DECREASE, long_scale
from agent.result import Citation, GroundedFigure, GroundingRule
from agent.source import Source

_TAG_GROUP = re.compile(r"\[(\d{1,4}(?:\s*[,，、]\s*\d{1,4})*)\](?:[\s,，]*\[(\d{1,4}(?:\s*[,，、]\s*\d{1,4})*)\])*")
_ONE_TAG = re.compile(r"\[(\d{1,4}(?:\s*[,，、]\s*\d{1,4})*)\]")
_NAMED = re.compile(
    r"\[([A-Za-z_][\w-]{0,63})\]|[（(]\s*(?:来源|出典|source|quelle)\s*[:：]\s*([\w-]{1,64})\s*[)）]", re.I
)
_LIST_MARKER = re.compile(r"^[ \t]*(?:[-*+>#]+[ \t]*|\*\*)*\d{1,2}[.)、](?:\*\*)?[ \t]", re.M)
_URL = re.compile(r"https?://\S+")
# Semicolons do not end a sentence: "87 ms; p99 1.5 s [1]" is one statement with one citation.
_SENTENCE_END = re.compile(r"[。！？!?\n]+|(?<=(\S))\.(?=\s+\S)")
_WORD_BEFORE = re.compile(r"(\S+)$")
MAX_DERIVED = 200  # figures tried as derivations per answer: an answer repeating one number cannot stall a run


@dataclass
class SentenceCheck:
    """One sentence of the answer and what is wrong with it (nothing, when it passed)."""

    start: int
    end: int
    text: str
    cited: list[Source] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # for the model (they quote the figures)
    unbacked: list[tuple[int, int, str]] = field(default_factory=list)  # spans in `text` and why, for people
    facts: int = 0  # figures and dates it states

    def without_unbacked(self) -> str:
        """The sentence with every unbacked figure or date replaced by "…": it may be shown, they may not."""
        text = self.text
        for start, end, _ in sorted(self.unbacked, reverse=True):
            text = text[:start] + "…" + text[end:]
        return text

    @property
    def verified(self) -> bool:
        return not self.problems and (bool(self.cited) or self.facts == 0)


@dataclass
class Grounding:
    """The verdict on a whole answer: what it cites, what is wrong, how each figure is backed, sentence by sentence."""

    cited: list[Source] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    grounded: list[GroundedFigure] = field(default_factory=list)
    sentences: list[SentenceCheck] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def citations(self) -> list[Citation]:
        """The cited results as the answer's footnotes, in tag order."""
        return [source.citation() for source in sorted(self.cited, key=lambda s: s.number)]


@dataclass
class _Mention:
    """A figure or date in a sentence, with the sources it rests on."""

    figure: Figure | None
    written: WrittenDate | None
    sentence: int
    rests_on: list[Source]
    leaning: bool  # rests on the previous sentence's citations (its own cites nothing)
    grounded: GroundedFigure | None = None
    backing: tuple[Reading, Fact, str] | None = None  # the reading a result's fact matched, and its tag
    derived_operand: Operand | None = None

    @property
    def operand(self) -> Operand | None:
        """This figure as an operand of a derivation: as shown, and as its source has it (only when asked)."""
        figure = self.figure
        if figure is None or self.grounded is None:
            return None
        if self.derived_operand is not None:
            return self.derived_operand
        if self.backing is None:  # the asker's own figure, or the year
            return Operand(figure.text, (figure.value,), figure.unit, figure.percent, ())
        reading, fact, tag = self.backing
        factor = figure.readings[0].precision / reading.precision if reading.precision else 1
        values = (figure.value, fact.value * factor) if fact.value * factor != figure.value else (figure.value,)
        return Operand(figure.text, values, figure.unit, figure.percent, (tag,))

    offset: int = 0  # the sentence's start in the answer: figures and dates are read sentence by sentence

    @property
    def text(self) -> str:
        if self.figure is not None:
            return self.figure.text
        assert self.written is not None
        return self.written.text

    @property
    def start(self) -> int:
        """Where it stands in the whole answer."""
        item = self.figure if self.figure is not None else self.written
        assert item is not None
        return self.offset + item.start


def check(answer: str, sources: Sequence[Source], question: str, *, today: date | None = None) -> Grounding:
    """Check every figure and date of `answer` against the sources it cites (see the module docstring)."""
    result = Grounding()
    by_number = {s.number: s for s in sources}
    by_tool: dict[str, list[Source]] = {}
    for source in sources:
        by_tool.setdefault(source.tool.casefold(), []).append(source)

    text = normalise_digits(answer)
    blank = _blanked(text)
    mark = decimal_mark(blank)
    english = not long_scale(blank)
    asked = _Known.of(question, today or date.today())

    mentions: list[_Mention] = []
    for index, (start, end) in enumerate(_sentences(blank)):
        sentence = SentenceCheck(start, end, answer[start:end].strip())
        groups = _citation_groups(blank, start, end, by_number, by_tool, sentence.problems)
        sentence.cited = list({s.number: s for _, _, group in groups for s in group}.values())
        body = _mask(blank, [(a, b) for a, b, _ in groups], start, end)
        dates = read_dates(body)
        if dates:
            body = _mask(body, [(d.start, d.end) for d in dates], 0, len(body))
        figures = read_figures(body, mark=mark, trillion_is_billion=english)
        items: list[WrittenDate | Figure] = [*dates, *figures]
        for item in items:
            after = [group for a, _, group in groups if a >= start + item.end]
            mentions.append(
                _Mention(
                    figure=item if isinstance(item, Figure) else None,
                    written=item if isinstance(item, WrittenDate) else None,
                    sentence=index,
                    # A date sets the scene of its sentence ("in October 2026, 64 nodes [1] ran 720 h [2]").
                    rests_on=after[0] if after and isinstance(item, Figure) else sentence.cited,
                    leaning=not sentence.cited,
                    offset=start,
                )
            )
        sentence.facts = len(dates) + len(figures)
        result.sentences.append(sentence)
        for source in sentence.cited:
            if source not in result.cited:
                result.cited.append(source)
    for mention in mentions:
        if mention.leaning:  # a lead-in or a conclusion: it rests on the citations around it
            around = result.sentences[max(0, mention.sentence - 1) : mention.sentence + 2]
            mention.rests_on = list({s.number: s for sentence in around for s in sentence.cited}.values())

    for mention in mentions:
        _ground_directly(mention, asked)
    for _ in range(2):  # a second pass lets a derived figure be an operand of the next ("12 …, that is 75 %")
        pending = [m for m in mentions if m.grounded is None and m.figure is not None][:MAX_DERIVED]
        if not pending:
            break
        by_sentence: dict[int, list[_Mention]] = {}
        for mention in mentions:
            if mention.grounded is not None and mention.figure is not None:
                by_sentence.setdefault(mention.sentence, []).append(mention)
        for mention in pending:
            operands = by_sentence.get(mention.sentence - 1, []) + by_sentence.get(mention.sentence, [])
            _derive(mention, operands, text)
    for mention in mentions:
        sentence = result.sentences[mention.sentence]
        if mention.grounded is not None:
            result.grounded.append(mention.grounded)
        else:
            problem = _problem(mention, sources)
            sentence.problems.append(problem)
            offset = len(answer[sentence.start : sentence.end]) - len(answer[sentence.start : sentence.end].lstrip())
            start = mention.start - sentence.start - offset
            sentence.unbacked.append((start, start + len(mention.text), _for_people(problem)))
    if sources and not result.cited:
        result.problems.append("the answer cites no tool result")
    for sentence in result.sentences:
        result.problems.extend(sentence.problems)
    result.problems = list(dict.fromkeys(result.problems))
    return result


# --- the answer's structure ------------------------------------------------------------------------------


def _blanked(text: str) -> str:
    """List numbering and URLs become spaces: they are not figures (positions stay where they were)."""
    return _mask(_mask(text, [m.span() for m in _LIST_MARKER.finditer(text)], 0, len(text)), _url_spans(text), 0, None)


def _url_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _URL.finditer(text)]


def _mask(text: str, spans: Sequence[tuple[int, int]], start: int, end: int | None) -> str:
    """`text[start:end]` with each span (positions in `text`) replaced by spaces."""
    end = len(text) if end is None else end
    pieces: list[str] = []
    at = start
    for a, b in sorted(spans):
        a, b = max(a, at), min(b, end)
        if a < b:
            pieces += [text[at:a], " " * (b - a)]
            at = b
    pieces.append(text[at:end])
    return "".join(pieces)


def _sentences(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        if match.group(0) == "." and not _ends_sentence(text, match.start()):
            continue
        if text[start : match.end()].strip():
            spans.append((start, match.end()))
        start = match.end()
    if text[start:].strip():
        spans.append((start, len(text)))
    return spans


def _ends_sentence(text: str, point: int) -> bool:
    """A point followed by a space ends a sentence unless it ends a number, an initial or an abbreviation."""
    word = _WORD_BEFORE.search(text, max(0, point - 32), point)
    if word is None:
        return True
    before = word.group(1).strip("(\"'“”*")
    if before[-1:].isdigit() or (len(before) == 1 and before.isalpha()):
        return False
    return before.casefold() not in ABBREVIATIONS


def _citation_groups(
    text: str,
    start: int,
    end: int,
    by_number: dict[int, Source],
    by_tool: dict[str, list[Source]],
    problems: list[str],
) -> list[tuple[int, int, list[Source]]]:
    """The sentence's citations: runs of `[n]` tags ("[1][2]", "[1, 2]") and named sources, with spans."""
    groups: list[tuple[int, int, list[Source]]] = []
    segment = text[start:end]
    for match in _TAG_GROUP.finditer(segment):
        cited: list[Source] = []
        for tag in _ONE_TAG.finditer(match.group(0)):
            for number in re.split(r"\s*[,，、]\s*", tag.group(1)):
                source = by_number.get(int(number))
                if source is None:
                    problems.append(f"[{int(number)}] is not the tag of any successful tool result")
                elif source not in cited:
                    cited.append(source)
        groups.append((start + match.start(), start + match.end(), cited))
    for match in _NAMED.finditer(segment):
        name = (match.group(1) or match.group(2) or "").casefold()
        named = by_tool.get(name)
        if named:
            groups.append((start + match.start(), start + match.end(), list(named)))
        elif match.group(2):
            problems.append(f"the answer cites {name}, which returned nothing usable")
    return sorted(groups, key=lambda g: g[0])


# --- grounding one mention ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Known:
    """What the asker gave, and today: figures and dates that need no tool."""

    figures: tuple[Figure, ...]
    dates: tuple[WrittenDate, ...]
    year: int

    @classmethod
    def of(cls, question: str, today: date) -> _Known:
        text = normalise_digits(question)
        dates = read_dates(text)
        body = _mask(text, [(d.start, d.end) for d in dates], 0, None)
        today_dates = (WrittenDate(today.isoformat(), 0, 0, ((today.year, today.month, today.day, None, None),)),)
        figures = tuple(read_figures(body, mark=decimal_mark(body)))
        return cls(figures, (*dates, *today_dates), today.year)


def _ground_directly(mention: _Mention, known: _Known) -> None:
    if mention.written is not None:
        _ground_date(mention, known)
        return
    figure = mention.figure
    assert figure is not None
    for source in mention.rests_on:
        found = facts_of(source).find(figure.readings, figure.approximation)
        if found is not None:
            reading, fact = found
            rule = _rule(figure, reading, fact)
            how = f"{figure.text} ← {fact.shown()} in {source.tag}"
            mention.grounded = GroundedFigure.model_construct(
                figure=figure.text, rule=rule, how=how, sources=[source.tag]
            )
            mention.backing = (reading, fact, source.tag)
            return
    for asked in known.figures:
        if any(r.value == a.value for r in figure.readings for a in asked.readings):
            mention.grounded = GroundedFigure.model_construct(
                figure=figure.text, rule=GroundingRule.QUESTION, how="given in the question"
            )
            return
    if figure.value == known.year and figure.unit is None:
        mention.grounded = GroundedFigure.model_construct(
            figure=figure.text, rule=GroundingRule.QUESTION, how="the current year"
        )


def _ground_date(mention: _Mention, known: _Known) -> None:
    written = mention.written
    assert written is not None
    for source in mention.rests_on:
        for stated in facts_of(source).dates:
            if written.matches(stated):
                how = f"{written.text} ← {stated.text} in {source.tag}"
                mention.grounded = GroundedFigure.model_construct(
                    figure=written.text, rule=GroundingRule.DATE, how=how, sources=[source.tag]
                )
                return
    for stated in known.dates:
        if written.matches(stated):
            mention.grounded = GroundedFigure.model_construct(
                figure=written.text, rule=GroundingRule.QUESTION, how=f"{written.text}: the question's or today's date"
            )
            return


def _rule(figure: Figure, reading: Reading, fact: Fact) -> GroundingRule:
    if fact.rule is not GroundingRule.EXACT:
        return fact.rule
    if figure.percent and reading.unit is None:
        return GroundingRule.PERCENT
    if reading is not figure.readings[0] or figure.value != reading.value:
        return GroundingRule.SCALED if len(figure.readings) > 1 and not figure.percent else GroundingRule.ROUNDED
    if fact.value != reading.value:
        return GroundingRule.ROUNDED
    return GroundingRule.EXACT


def _derive(mention: _Mention, around: Sequence[_Mention], text: str) -> None:
    """Ground `mention` as a derivation of the grounded figures `around` it (this sentence and the one before)."""
    figure = mention.figure
    assert figure is not None
    closest = sorted(around, key=lambda other: abs(other.start - mention.start))[:MAX_OPERANDS]
    nearest = sorted(closest, key=lambda other: other.start)  # in reading order, as the formula is written
    window = [operand for other in nearest if (operand := other.operand) is not None]
    if len(window) < 2:
        return
    decrease = bool(DECREASE.search(_clause(text, figure)))
    derivation = find_derivation(figure, window, decrease=decrease)
    if derivation is None:
        return
    tags = ", ".join(derivation.tags) or "the question"
    mention.grounded = GroundedFigure.model_construct(
        figure=figure.text,
        rule=GroundingRule.DERIVED,
        how=f"{derivation.formula} from {tags}",
        sources=list(derivation.tags),
    )
    mention.derived_operand = Operand(figure.text, (figure.value,), figure.unit, figure.percent, derivation.tags)


def _clause(text: str, figure: Figure) -> str:
    """The words around a figure, up to the nearest clause marks: where "fell" or "下降" would be said."""
    return text[max(0, figure.start - 80) : figure.end + 40]


def _problem(mention: _Mention, sources: Sequence[Source]) -> str:
    what = f"the number {mention.figure.number}" if mention.figure is not None else f"the date {mention.text}"
    elsewhere = _found_elsewhere(mention, sources)
    if elsewhere and (mention.leaning or not mention.rests_on):
        return f"{what} is stated without a citation"
    if elsewhere:
        return f"{what} is not in the result it cites ({', '.join(s.tag for s in mention.rests_on)})"
    return f"{what} appears in no tool result"


def _for_people(problem: str) -> str:
    """The problem without the figure in it: a figure that failed is never shown to the asker."""
    what = "a date" if problem.startswith("the date") else "a figure"
    if problem.endswith("without a citation"):
        return f"{what} is stated without saying which result it comes from"
    if "is not in the result it cites" in problem:
        return f"{what} does not match the result it cites"
    return f"{what} matches no tool result"


def _found_elsewhere(mention: _Mention, sources: Sequence[Source]) -> bool:
    if mention.written is not None:
        return any(mention.written.matches(d) for s in sources for d in facts_of(s).dates)
    figure = mention.figure
    assert figure is not None
    return any(facts_of(s).find(figure.readings, figure.approximation) for s in sources)
