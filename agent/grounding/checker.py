"""Check: every figure and date of an answer against the tool results — those it cites, and those it does not.

1. The answer's layout (`structure`: paragraphs, bullets, table rows, footnotes, a list of sources) and its
   citations in every style models write (`citations`).
2. Its figures — in digits (`figures`), in words (`words`), in table cells with their column's unit — and its
   dates (`dates`).
3. The results each figure rests on. Right after it, or in its sentence, Parley's tags (`[1]`, `【1】`, a
   footnote that names one call) say exactly which: the figure must be in one of them. Otherwise a tool named in
   its sentence, its paragraph's closing tags, the answer's list of sources, its neighbours' tags — or, where
   the answer names none, every result: Parley then finds the one that states it, bound by the names of the
   figure's clause (`attribution`), and attaches the citation itself.
4. It is grounded when a result it rests on states it the way people show it (`facts`), when it is a count, sum
   or average over a list in one (`derivation.aggregates_of`), a derivation of grounded figures around it or
   of their results' values (`derivation`), or the asker's own figure, the year, or today's date.
5. A grounded figure given to a name nothing the run saw names is a wrong-entity claim (`entities`).

Each sentence keeps its own verdict, so a partial answer can quote the sentences that passed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from agent.grounding.attribution import NOWHERE, Attachment, Names, Pointer, attached, attachment, choose, pointers
from agent.grounding.citations import Cite, read_citations
from agent.grounding.dates import WrittenDate, read_dates
from agent.grounding.derivation import (
    MAX_OPERANDS,
    Aggregate,
    Operand,
    aggregates_of,
    extremes_of,
    find_aggregate,
    find_derivation,
)
from agent.grounding.entities import known_names, unknown_names
from agent.grounding.facts import Fact, SourceFacts, facts_of, inputs_of, returned
from agent.grounding.figures import Figure, Reading, decimal_mark, normalise_digits, plain, read_figures
from agent.grounding.language import (
    DECREASE,
    EXCHANGE,
    EXTREME,
    HIGHEST,
    LOWEST,
    long_scale,
    number_word_languages,
)
from agent.grounding.names import aliases_in, identities
from agent.grounding.structure import Block, BlockKind, Layout, blanked, clauses, layout, mask
from agent.grounding.tables import cell_figures
from agent.grounding.words import read_number_words
from agent.result import Citation, GroundedFigure, GroundingRule
from agent.source import Source

MAX_DERIVED = 200  # figures tried as derivations per answer: an answer repeating one number cannot stall a run
MAX_SOURCE_OPERANDS = 6  # values of a result tried as operands the answer did not write out
UNBACKED = "[not backed by any result]"


@dataclass
class SentenceCheck:
    """One sentence of the answer and what is wrong with it (nothing, when it passed)."""

    start: int
    end: int
    text: str  # as the model wrote it
    cited: list[Source] = field(default_factory=list)  # what it cites, or Parley cites for it
    problems: list[str] = field(default_factory=list)  # for the model (they quote the figures)
    unbacked: list[tuple[int, int, str]] = field(default_factory=list)  # spans in `text` and why, for people
    facts: int = 0  # figures and dates it states
    shown: str = ""  # as people see it: with the citations Parley attached

    def without_unbacked(self) -> str:
        """The sentence with every unbacked figure or date replaced by a plain marker: it may be shown, they may
        not."""
        text = self.text
        for start, end, _ in sorted(self.unbacked, reverse=True):
            text = text[:start] + UNBACKED + text[end:]
        return text

    @property
    def verified(self) -> bool:
        return not self.problems and (bool(self.cited) or self.facts == 0)


@dataclass
class Grounding:
    """The verdict on a whole answer: what it cites, what is wrong, how each figure is backed, sentence by
    sentence — and the answer as people see it, with the citations Parley attached."""

    answer: str = ""
    cited: list[Source] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    grounded: list[GroundedFigure] = field(default_factory=list)
    sentences: list[SentenceCheck] = field(default_factory=list)
    attachments: list[Attachment] = field(default_factory=list)
    backed: list[tuple[str, Source]] = field(default_factory=list)  # a clause's words, a result one of its figures
    #                                                                  shows: what the answer says each result is about

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def citations(self) -> list[Citation]:
        """The results the answer rests on, as its footnotes in tag order (with the results their calls used)."""
        return [source.citation() for source in sorted(self.cited, key=lambda s: s.number)]


@dataclass
class _Mention:
    """A figure or date in a sentence, the results it may rest on, and how it was backed."""

    figure: Figure | None
    written: WrittenDate | None
    sentence: int
    rests_on: list[Source]
    strict: bool  # the answer's own tags name those results: the figure must be in one of them
    clause: str = ""  # the words of its clause ("are down", "fell", "exchange rate")
    pointer: Pointer = NOWHERE
    grounded: GroundedFigure | None = None
    bound: Source | None = None  # the result it rests on
    backing: tuple[Reading, Fact] | None = None
    derived_operand: Operand | None = None
    taken_from: Source | None = None  # the result that states it, when its words point at another (swapped)
    wrong_entity: bool = False  # it is given to a name nothing the run saw names
    superlative: str = ""  # what its sentence says it is ("largest") when it is not
    parley: bool = False  # Parley found its result (the answer's tags did not name it)

    @property
    def item(self) -> Figure | WrittenDate:
        item = self.figure if self.figure is not None else self.written
        assert item is not None
        return item

    @property
    def text(self) -> str:
        return self.item.text

    @property
    def start(self) -> int:
        """Where it stands in the answer."""
        return self.item.start

    @property
    def end(self) -> int:
        return self.item.end

    @property
    def operand(self) -> Operand | None:
        """This figure as an operand of a derivation: as shown, and as its source has it."""
        figure = self.figure
        if figure is None or self.grounded is None:
            return None
        if self.derived_operand is not None:
            return self.derived_operand
        tags = tuple(self.grounded.sources)
        if self.backing is None:  # the asker's own figure, the year, an aggregate
            return Operand(figure.text, (figure.value,), figure.unit, figure.percent, tags, figure.per)
        reading, fact = self.backing
        factor = figure.readings[0].precision / reading.precision if reading.precision else 1
        values = (figure.value, fact.value * factor) if fact.value * factor != figure.value else (figure.value,)
        return Operand(figure.text, values, figure.unit, figure.percent, tags, figure.per)


def check(answer: str, sources: Sequence[Source], question: str, *, today: date | None = None) -> Grounding:
    """Check every figure and date of `answer` against `sources` (see the module docstring)."""
    return _Checker(answer, sources, question, today or date.today()).run()


class _Checker:
    def __init__(self, answer: str, sources: Sequence[Source], question: str, today: date) -> None:
        self.answer = answer
        self.sources = list(sources)
        self.text = blanked(normalise_digits(answer))
        self.layout: Layout = layout(self.text)
        self.citations = read_citations(self.text, self.layout, self.sources)
        self.masked = mask(self.text, [(c.start, c.end) for c in self.citations.cites], 0, None)
        self.mark = decimal_mark(self.text)
        self.short_scale = not long_scale(self.text)
        self.languages = number_word_languages(self.text)
        self.dates, self.figures = self._read_all()
        self.known = _Known.of(question, today)
        self.identities = identities(self.sources)
        self.inputs = inputs_of(self.sources)  # "calculator(47 * 12)" used [1]'s 47 and [2]'s 12
        self.names = Names(self.text, self.identities, aliases_in(question))
        self.result = Grounding(answer=answer)
        self.mentions: list[_Mention] = []
        self._clause_cache: dict[int, list[tuple[int, int]]] = {}
        self._facts_cache: dict[int, SourceFacts] = {}
        self._superlatives: dict[int, list[tuple[int, str]]] = {}
        self._peers: dict[tuple[str, str], tuple[Decimal, Decimal] | None] = {}

    def run(self) -> Grounding:
        carried: frozenset[int] = frozenset()
        for index, sentence in enumerate(self.layout.sentences):
            block = self.layout.block_of(sentence)
            check = SentenceCheck(sentence.start, sentence.end, self.answer[sentence.start : sentence.end].strip())
            own = self.citations.in_sentence(index)
            check.cited = _unique([s for cite in own if cite.exact for s in cite.sources])
            self.result.sentences.append(check)
            self._read(index, sentence.start, sentence.end, block, own, check, carried)
            if not check.facts:  # "(source: get_weather)" with no figure to say which call: it cites them all
                check.cited = _unique([*check.cited, *(s for cite in own for s in cite.sources)])
            named = self.names.within(sentence.start, sentence.end)
            carried = frozenset(named) if named else (carried if block.kind is BlockKind.PROSE else frozenset())
        for mention in self.mentions:
            self._ground(mention)
        self._derive_all()
        self._wrong_entities()
        self._conclude()
        return self.result

    # --- reading ---------------------------------------------------------------------------------------------

    def _read_all(self) -> tuple[list[WrittenDate], list[Figure]]:
        """The answer's dates and figures (in digits, in words, in table cells), read once, in order."""
        dates = read_dates(self.masked)
        text = mask(self.masked, [(d.start, d.end) for d in dates], 0, None) if dates else self.masked
        rows = [block for block in self.layout.blocks if block.kind is BlockKind.TABLE_ROW]
        prose = mask(text, [(row.start, row.end) for row in rows], 0, None) if rows else text
        figures = read_figures(prose, mark=self.mark, trillion_is_billion=self.short_scale)
        for row in rows:
            body = text[row.start : row.end]
            cells = cell_figures(body, row.start, row, mark=self.mark, short_scale=self.short_scale)
            figures += [f._replace(start=f.start + row.start, end=f.end + row.start) for f in cells]
        taken = [(f.start, f.end) for f in figures]
        figures += read_number_words(mask(text, taken, 0, None), self.languages, taken)
        figures.sort(key=lambda f: f.start)
        # Without its figures and dates ("16°Cです" holds no name "Cです"): where names are looked for.
        self.bare = mask(text, [(f.start, f.end) for f in figures], 0, None)
        return dates, figures

    def _read(
        self,
        index: int,
        start: int,
        end: int,
        block: Block,
        own: list[Cite],
        check: SentenceCheck,
        carried: frozenset[int],
    ) -> None:
        dates = [d for d in self.dates if start <= d.start < end]
        figures = [f for f in self.figures if start <= f.start < end]
        check.facts = len(dates) + len(figures)
        if not check.facts:
            return
        parts = self._clauses(index)
        figure_points = pointers(self.names, (start, end), parts, [f.start for f in figures], self.masked, carried)
        exact = [cite for cite in own if cite.exact]
        untagged = self._candidates(index, own, block) if not exact else []
        items: list[tuple[Figure | WrittenDate, Pointer]] = [(d, NOWHERE) for d in dates]
        items += zip(figures, figure_points, strict=True)
        for item, pointer in items:
            after = [cite for cite in exact if cite.start >= item.start]
            if after and isinstance(item, Figure):  # a date sets the scene of its whole sentence
                rests_on, strict = list(after[0].sources), True
            elif exact:
                rests_on, strict = _unique([s for cite in exact for s in cite.sources]), True
            else:
                rests_on, strict = untagged, False
            clause = next(((a, b) for a, b in parts if a <= item.start < b), (start, end))
            self.mentions.append(
                _Mention(
                    figure=item if isinstance(item, Figure) else None,
                    written=item if isinstance(item, WrittenDate) else None,
                    sentence=index,
                    rests_on=rests_on,
                    strict=strict,
                    clause=self.masked[clause[0] : clause[1]],
                    pointer=pointer,
                )
            )

    def _candidates(self, index: int, own: list[Cite], block: Block) -> list[Source]:
        """What a figure without a tag rests on: its sentence's named tools, its block's closing tags, the list of
        sources, its neighbours' tags — each first, then every result."""
        preferred = [s for cite in own for s in cite.sources]
        if not preferred:
            cites = self.citations.cites
            preferred = [s for c in cites if c.closes_block and self._block_of(c.sentence) is block for s in c.sources]
            preferred += [s for c in cites if c.whole_answer for s in c.sources]
            for near in (index - 1, index + 1):
                if 0 <= near < len(self.layout.sentences) and self._block_of(near) is block:
                    preferred += [s for c in self.citations.in_sentence(near) if c.exact for s in c.sources]
        return _unique([*preferred, *self.sources])

    def _block_of(self, sentence: int) -> Block:
        return self.layout.block_of(self.layout.sentences[sentence])

    # --- grounding -------------------------------------------------------------------------------------------

    def _ground(self, mention: _Mention) -> None:
        if mention.written is not None:
            self._ground_date(mention)
            return
        figure = mention.figure
        assert figure is not None
        pointed = mention.pointer.numbers
        candidates = mention.rests_on
        if pointed:  # the results its words name first
            candidates = [s for s in candidates if s.number in pointed] + [
                s for s in candidates if s.number not in pointed
            ]
        if not mention.strict and self._asked(figure):
            # The asker's own figure ("our twenty regions") is theirs, unless the result its words name states it.
            candidates = [s for s in candidates if s.number in mention.pointer.numbers]
        stating = self._stating(figure, candidates, mention)
        if stating:
            chosen, taken_from = choose([s for s, _, _ in stating], mention.pointer, self.names)
            if mention.strict:
                chosen, taken_from = stating[0][0], None
            if chosen is not None:
                _, reading, fact = next(item for item in stating if item[0] is chosen)
                rule = _rule(figure, reading, fact)
                self._bind(mention, chosen, rule, f"{figure.text} ← {fact.shown()}", (reading, fact))
                self._check_superlative(mention, chosen, fact)
                return
            mention.taken_from = taken_from
            return
        if self._ground_aggregate(mention, figure):
            return
        self._ground_known(mention, figure)

    def _facts(self, source: Source) -> SourceFacts:
        facts = self._facts_cache.get(source.number)
        if facts is None:
            facts = self._facts_cache[source.number] = facts_of(source)
        return facts

    def _stating(
        self, figure: Figure, candidates: Sequence[Source], mention: _Mention
    ) -> list[tuple[Source, Reading, Fact]]:
        """The candidates that state `figure`, with how: their numbers first, their strings only if need be. The
        search stops at the first one that settles it (the answer's tag, the result its words name, or any
        result where they name none)."""
        stating: list[tuple[Source, Reading, Fact]] = []
        for strings in (False, True):
            for source in candidates:
                found = self._facts(source).find(figure.readings, figure.approximation, strings=strings)
                if found is not None:
                    stating.append((source, *found))
                    if mention.strict or not mention.pointer.numbers or source.number in mention.pointer.numbers:
                        return stating
            if stating:
                return stating
        return stating

    def _asked(self, figure: Figure) -> bool:
        return any(r.value == a.value for r in figure.readings for asked in self.known.figures for a in asked.readings)

    def _check_superlative(self, mention: _Mention, source: Source, fact: Fact) -> None:
        """ "The slowest endpoint … 876 ms": a value a superlative speaks of must be the largest (or smallest) of
        its field — over the items of its result's list, or over the results of the same tool."""
        sentence = self.layout.sentences[mention.sentence]
        said = self._superlatives.get(mention.sentence)
        if said is None:
            said = self._superlatives[mention.sentence] = _superlatives(self.masked, sentence.start, sentence.end)
        statement = self.masked.rfind(";", sentence.start, mention.start) + 1  # after any semicolon before it
        words = [kind for at, kind in said if max(statement, sentence.start) <= at < mention.start]
        if not words:
            return
        wants = words[0]
        span = _extremes(source).get(fact.key)
        if span is None:
            span = self._peer_span(source.tool, fact.key)
        if span is None:
            return  # a value with no others of its kind: no superlative can be wrong about it
        low, high = span
        allowed = {"largest": (high,), "smallest": (low,)}.get(wants, (low, high))
        if fact.returned in allowed:
            return
        mention.grounded, mention.superlative = None, wants
        mention.taken_from = None

    def _peer_span(self, tool: str, key: str) -> tuple[Decimal, Decimal] | None:
        """The smallest and largest `key` over the results of `tool` (two at least)."""
        if (tool, key) not in self._peers:
            values = [f.returned for s in self.sources if s.tool == tool for f in returned(s, 64) if f.key == key]
            self._peers[(tool, key)] = (min(values), max(values)) if len(values) > 1 else None
        return self._peers[(tool, key)]

    def _ground_aggregate(self, mention: _Mention, figure: Figure) -> bool:
        pointed, named = mention.pointer.numbers, self.names.anywhere
        ordered = sorted(mention.rests_on, key=lambda s: (s.number not in pointed, s.number in named))
        for source in mention.rests_on if mention.strict else ordered:
            aggregates = _aggregates(source)
            if not aggregates:
                continue
            found = find_aggregate(aggregates, figure, mention.clause)
            if found is not None:
                self._bind(mention, source, GroundingRule.AGGREGATE, f"{figure.text} ← {found[1].how}", None)
                return True
        return False

    def _ground_known(self, mention: _Mention, figure: Figure) -> None:
        for asked in self.known.figures:
            if any(r.value == a.value for r in figure.readings for a in asked.readings):
                mention.grounded = GroundedFigure.model_construct(
                    figure=figure.text, rule=GroundingRule.QUESTION, how="given in the question", sources=[]
                )
                return
        if figure.value == self.known.year and figure.unit is None:
            mention.grounded = GroundedFigure.model_construct(
                figure=figure.text, rule=GroundingRule.QUESTION, how="the current year", sources=[]
            )

    def _ground_date(self, mention: _Mention) -> None:
        written = mention.written
        assert written is not None
        for source in mention.rests_on:
            for stated in facts_of(source).dates:
                if written.matches(stated):
                    self._bind(mention, source, GroundingRule.DATE, f"{written.text} ← {stated.text}", None)
                    return
        for stated in self.known.dates:
            if written.matches(stated):
                how = f"{written.text}: the question's or today's date"
                mention.grounded = GroundedFigure.model_construct(
                    figure=written.text, rule=GroundingRule.QUESTION, how=how, sources=[]
                )
                return

    def _bind(
        self, mention: _Mention, source: Source, rule: GroundingRule, how: str, backing: tuple[Reading, Fact] | None
    ) -> None:
        mention.bound = source
        mention.backing = backing
        mention.parley = not mention.strict and not self._tagged(mention, source)
        by = ", cited by Parley" if mention.parley else ""
        inputs = self.inputs.get(source.number, ())
        used = f" (its call used {', '.join(s.tag for s in inputs)})" if inputs else ""
        mention.grounded = GroundedFigure.model_construct(
            figure=mention.text,
            rule=rule,
            how=f"{how} in {source.tag}{used}{by}",
            sources=[source.tag],
            cited_by="parley" if mention.parley else "answer",
        )

    def _tagged(self, mention: _Mention, source: Source) -> bool:
        """Does the answer carry a tag for `source` where a reader of this figure sees it — in its paragraph, its
        bullet or its row? A footnote's line or a list of sources is apparatus: Parley adds nothing there."""
        block = self._block_of(mention.sentence)
        if block.kind in (BlockKind.FOOTNOTE, BlockKind.SOURCES):
            return True
        return any(
            cite.exact and source in cite.sources and self._block_of(cite.sentence) is block
            for cite in self.citations.cites
        )

    def _derive_all(self) -> None:
        for _ in range(2):  # a second pass lets a derived figure be an operand of the next ("50 …, that is 25 %")
            pending = [m for m in self.mentions if m.grounded is None and m.figure is not None][:MAX_DERIVED]
            if not pending:
                return
            by_sentence: dict[int, list[_Mention]] = {}
            for mention in self.mentions:
                if mention.grounded is not None and mention.figure is not None:
                    by_sentence.setdefault(mention.sentence, []).append(mention)
            for mention in pending:
                around = by_sentence.get(mention.sentence - 1, []) + by_sentence.get(mention.sentence, [])
                self._derive(mention, around)

    def _derive(self, mention: _Mention, around: Sequence[_Mention]) -> None:
        """Ground `mention` as a derivation of the grounded figures `around` it (its sentence and the one before),
        or of the values of their results that the answer did not write out."""
        figure = mention.figure
        assert figure is not None
        closest = sorted(around, key=lambda other: abs(other.start - mention.start))[:MAX_OPERANDS]
        nearest = sorted(closest, key=lambda other: other.start)  # in reading order, as the formula is written
        written = [operand for other in nearest if (operand := other.operand) is not None]
        decrease = bool(DECREASE.search(mention.clause))
        exchange = bool(EXCHANGE.search(self.masked[max(0, mention.start - 120) : mention.end + 40]))
        derivation = (
            find_derivation(figure, written, decrease=decrease, exchange=exchange) if len(written) > 1 else None
        )
        # "50 of the 200 are open": 200 − 150, where the result says 150 resolved — one of the answer's figures
        # and a value its own result returned.
        anchors = sorted(
            (m for m in around if m.bound is not None and m.operand is not None and not _weak(m)),
            key=lambda m: abs(m.start - mention.start),
        )
        for anchor in anchors[:3]:
            if derivation is not None:
                break
            assert anchor.bound is not None
            values = [_value_operand(anchor.bound, fact) for fact in returned(anchor.bound, MAX_SOURCE_OPERANDS)]
            derivation = find_derivation(figure, values, decrease=decrease, exchange=exchange, anchor=anchor.operand)
        if derivation is None:
            return
        tags = ", ".join(derivation.tags) or "the question"
        mention.grounded = GroundedFigure.model_construct(
            figure=figure.text,
            rule=GroundingRule.DERIVED,
            how=f"{derivation.formula} from {tags}",
            sources=list(derivation.tags),
        )
        mention.derived_operand = Operand(
            figure.text, (figure.value,), figure.unit, figure.percent, derivation.tags, figure.per
        )

    # --- what is wrong ---------------------------------------------------------------------------------------

    def _wrong_entities(self) -> None:
        """A grounded figure given to a name that nothing the run saw names."""
        checked = [m for m in self.mentions if m.grounded is not None and m.figure is not None]
        if not checked:
            return
        names = [name for names in self.identities.values() for name in names]
        known = known_names(self.known.question, [_said(s) for s in self.sources], names)
        german = self.languages[:1] == ["de"]
        seen: set[tuple[int, int]] = set()
        for mention in checked:
            start, end = self._clause_span(mention)
            if (start, end) in seen:
                continue
            seen.add((start, end))
            for _, _, name in unknown_names(self.bare, start, end, known, german=german):
                mention.grounded, mention.wrong_entity = None, True
                self.result.sentences[mention.sentence].problems.append(
                    f"the number {mention.text} is given to {name}, which no question, tool call or result names"
                )
                self._mark(mention, "a figure is given to a name that no result mentions")
                break

    def _clause_span(self, mention: _Mention) -> tuple[int, int]:
        sentence = self.layout.sentences[mention.sentence]
        parts = self._clauses(mention.sentence)
        return next(((a, b) for a, b in parts if a <= mention.start < b), (sentence.start, sentence.end))

    def _clauses(self, index: int) -> list[tuple[int, int]]:
        """The clauses of sentence `index`, read once (a table row is one)."""
        found = self._clause_cache.get(index)
        if found is None:
            sentence = self.layout.sentences[index]
            if self.layout.block_of(sentence).kind is BlockKind.TABLE_ROW:
                found = [(sentence.start, sentence.end)]
            else:
                found = clauses(self.masked, sentence.start, sentence.end)
            self._clause_cache[index] = found
        return found

    def _conclude(self) -> None:
        result = self.result
        for mention in self.mentions:
            sentence = result.sentences[mention.sentence]
            if mention.grounded is not None:
                result.grounded.append(mention.grounded)
                if mention.bound is not None:
                    result.backed.append((mention.clause, mention.bound))
                if mention.bound is not None and mention.bound not in sentence.cited:
                    sentence.cited.append(mention.bound)
                continue
            if mention.wrong_entity:
                continue  # said already, with the name
            problem = self._problem(mention)
            sentence.problems.append(problem)
            self._mark(mention, _for_people(problem))
        attachments = self._attachments()
        result.attachments = attachments
        result.answer = attached(self.answer, attachments)
        for sentence in result.sentences:
            inside = [a for a in attachments if sentence.start <= a.at <= sentence.end]
            raw = self.answer[sentence.start : sentence.end]
            lead = len(raw) - len(raw.lstrip())
            shifted = [Attachment(a.at - sentence.start - lead, a.marker) for a in inside]
            sentence.shown = attached(sentence.text, shifted).strip() if shifted else sentence.text
        cited = [s for sentence in result.sentences for s in sentence.cited]
        cited += [
            s
            for m in self.mentions
            if m.grounded is not None
            for tag in m.grounded.sources
            for s in self.sources
            if s.tag == tag
        ]
        cited += [earlier for source in list(cited) for earlier in self.inputs.get(source.number, ())]
        result.cited = _unique(cited)
        if self.sources and not result.cited:
            result.problems.append("the answer cites no tool result")
        result.problems = list(dict.fromkeys([*self.citations.problems, *result.problems]))
        for sentence in result.sentences:
            result.problems.extend(p for p in sentence.problems if p not in result.problems)

    def _attachments(self) -> list[Attachment]:
        """One tag after each run of figures Parley bound to the same result, in each sentence."""
        found: list[Attachment] = []
        by_sentence: dict[int, list[_Mention]] = {}
        for mention in self.mentions:
            if mention.grounded is not None and mention.parley and mention.bound is not None:
                by_sentence.setdefault(mention.sentence, []).append(mention)
        for mentions in by_sentence.values():
            ordered = sorted(mentions, key=lambda m: m.start)
            for at, mention in enumerate(ordered):
                following = ordered[at + 1] if at + 1 < len(ordered) else None
                if following is not None and following.bound is mention.bound:
                    continue
                assert mention.bound is not None
                found.append(attachment(self.answer, mention.end, mention.bound.number))
        return found

    def _mark(self, mention: _Mention, why: str) -> None:
        sentence = self.result.sentences[mention.sentence]
        raw = self.answer[sentence.start : sentence.end]
        lead = len(raw) - len(raw.lstrip())
        start = mention.start - sentence.start - lead
        sentence.unbacked.append((start, start + len(mention.text), why))

    def _problem(self, mention: _Mention) -> str:
        what = f"the number {mention.figure.number}" if mention.figure is not None else f"the date {mention.text}"
        if mention.superlative:
            return f"{what} is not the {mention.superlative} of its kind in the results, as its sentence says"
        if mention.taken_from is not None:
            named = ", ".join(f"[{n}]" for n in sorted(mention.pointer.numbers))
            return (
                f"{what} is stated by {mention.taken_from.tool} {mention.taken_from.tag}, "
                f"but its sentence is about the result {named}"
            )
        if mention.strict and self._found_elsewhere(mention):
            return f"{what} is not in the result it cites ({', '.join(s.tag for s in mention.rests_on)})"
        return f"{what} appears in no tool result"

    def _found_elsewhere(self, mention: _Mention) -> bool:
        if mention.written is not None:
            return any(mention.written.matches(d) for s in self.sources for d in facts_of(s).dates)
        figure = mention.figure
        assert figure is not None
        return any(facts_of(s).find(figure.readings, figure.approximation) for s in self.sources)


@dataclass(frozen=True)
class _Known:
    """What the asker gave, and today: figures and dates that need no tool."""

    question: str
    figures: tuple[Figure, ...]
    dates: tuple[WrittenDate, ...]
    year: int

    @classmethod
    def of(cls, question: str, today: date) -> _Known:
        text = normalise_digits(question)
        dates = read_dates(text)
        body = mask(text, [(d.start, d.end) for d in dates], 0, None)
        today_dates = (WrittenDate(today.isoformat(), 0, 0, ((today.year, today.month, today.day, None, None),)),)
        figures = read_figures(body, mark=decimal_mark(body))
        figures += read_number_words(body, number_word_languages(body), [(f.start, f.end) for f in figures])
        return cls(question, tuple(figures), (*dates, *today_dates), today.year)


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


def _value_operand(source: Source, fact: Fact) -> Operand:
    """A value a result returned, as an operand: "150 (resolved in [1])"."""
    return Operand(
        f"{plain(fact.returned)} ({fact.key} in {source.tag})", (fact.value,), fact.unit, False, (source.tag,)
    )


def _for_people(problem: str) -> str:
    """The problem in words a person uses, without the figure in it: a figure that failed is never shown."""
    what = "a date" if problem.startswith("the date") else "a figure"
    if "is not in the result it cites" in problem:
        return f"{what} does not match the result it cites"
    if "of its kind in the results" in problem:
        return f"{what} is not the largest or smallest its sentence says it is"
    if "but its sentence is about" in problem:
        return f"{what} belongs to another result than the one its sentence is about"
    return f"{what} matches no tool result"


def _superlatives(text: str, start: int, end: int) -> list[tuple[int, str]]:
    """Where a sentence says "largest", "smallest", or either ("slowest": it depends on what is measured)."""
    found = [(m.start(), "largest") for m in HIGHEST.finditer(text, start, end)]
    found += [(m.start(), "smallest") for m in LOWEST.finditer(text, start, end)]
    found += [(m.start(), "largest or smallest") for m in EXTREME.finditer(text, start, end)]
    return sorted(found)


def _said(source: Source) -> str:
    """Everything a call and its result say, as one text to find names in."""
    return source.memo(
        "said", lambda: json.dumps([source.tool, source.arguments, source.data], ensure_ascii=False, default=str)
    )


def _weak(mention: _Mention) -> bool:
    """A figure that is a result's only by chance — a number in a field's name — anchors no derivation."""
    return mention.backing is not None and mention.backing[1].from_a_name


def _extremes(source: Source) -> dict[str, tuple[Decimal, Decimal]]:
    return source.memo("extremes", lambda: extremes_of(source.data))


def _aggregates(source: Source) -> tuple[Aggregate, ...]:
    return source.memo("aggregates", lambda: aggregates_of(source.data))


def _unique(sources: Sequence[Source]) -> list[Source]:
    return list({source.number: source for source in sources}.values())
