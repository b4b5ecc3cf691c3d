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
   or average over a list in one (`derivation.aggregates_of`) — a figure its words give as a count of items
   ("4 of the 6", "세 개") only as one of those counts (`tally`) — or the asker's own figure, the year, or today's
   date (`backing`); else a derivation of grounded figures around it or of their results' values
   (`unstated`, with `derivation`). What a superlative or a rise or fall says of it must hold against the
   others of its kind (`comparisons`).
5. A grounded figure given to a name nothing the run saw names is a wrong-entity claim (`entities`).

Each sentence keeps its own verdict, so a partial answer can quote the sentences that passed.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from datetime import date
from operator import attrgetter

from agent.grounding.attribution import NOWHERE, Attachment, Names, Pointer, attached, attachment, pointers
from agent.grounding.backing import Backing, aggregates
from agent.grounding.citations import Cite, read_citations
from agent.grounding.comparisons import Comparisons, extremes
from agent.grounding.dates import WrittenDate, read_dates
from agent.grounding.entities import UnknownNames, known_names
from agent.grounding.facts import facts_of, inputs_of, read_inputs, returned
from agent.grounding.figures import Figure, decimal_mark, normalise_digits, read_figures, reads_by_mark
from agent.grounding.language import LONG_SCALE_BILLIONS, long_scale, number_word_languages
from agent.grounding.mention import Mention, known
from agent.grounding.names import aliases_in, identities, identity_of, returned_identities
from agent.grounding.records import records_of
from agent.grounding.structure import Block, BlockKind, Layout, blanked, clause_at, clauses, layout, mask
from agent.grounding.tables import cell_figures
from agent.grounding.tally import bounded, count_claims
from agent.grounding.unstated import Unstated
from agent.grounding.verdict import Grounding, SentenceCheck
from agent.grounding.words import read_number_words
from agent.source import Source

_WORD_BEFORE = re.compile(r"([^\W\d_]{3,}) $")
MAX_UNIT_CHARS = 4  # a capitalised word this short right after a figure is its unit ("412 Go", "3 TB")
_START = attrgetter("start")
_PROSE = BlockKind.PROSE  # read for every sentence: `Enum.MEMBER` costs a class lookup each time in Python 3.11


def prepare(source: Source) -> None:
    """Read what a result states — its figures, its dates, its names — once, as it arrives: checking a draft
    answer later finds them read (the loop calls this while the model is still writing)."""
    facts_of(source).dates  # noqa: B018 (reading the dates reads the result's strings too)
    returned_identities(source)
    identity_of(source)
    read_inputs(source)
    _said(source)
    records_of(source)  # the items of its lists, by what each is about
    aggregates(source)  # and what they add up to
    extremes(source)
    returned(source, 0)
    source.tag  # noqa: B018 (its tag, which every figure it backs is cited by, is made once too)


def check(answer: str, sources: Sequence[Source], question: str, *, today: date | None = None) -> Grounding:
    """Check every figure and date of `answer` against `sources` (see the module docstring)."""
    return _Checker(answer, sources, question, today or date.today()).run()


class _Checker:
    """One check of one answer: reads it, says what each figure rests on, backs each (`Backing`), concludes."""

    def __init__(self, answer: str, sources: Sequence[Source], question: str, today: date) -> None:
        self.answer = answer
        self.sources = list(sources)
        self.text = blanked(normalise_digits(answer))
        self.layout: Layout = layout(self.text)
        self.citations = read_citations(self.text, self.layout, self.sources)
        self.masked = mask(self.text, [(c.start, c.end) for c in self.citations.cites], 0, None)
        self.mark: str | None = None  # the decimal mark, decided in `_read_all` when a figure needs it
        # Only "billion" reads otherwise on the long scale: a text without it (nor a table, whose headers may say
        # it) need not be judged.
        rows = any(block.kind is BlockKind.TABLE_ROW for block in self.layout.blocks)
        says_billion = any(word in self.text for word in LONG_SCALE_BILLIONS)
        self.short_scale = not long_scale(self.text) if rows or says_billion else True
        self.languages = number_word_languages(self.masked)
        self._said: str | None = None  # what the calls and results say, casefolded, read on first need
        self.identities = identities(self.sources)
        apparatus = [(b.start, b.end) for b in self.layout.blocks if b.kind in (BlockKind.FOOTNOTE, BlockKind.SOURCES)]
        self.names = Names(self.text, self.identities, aliases_in(question), apparatus)
        self.dates, self.figures = self._read_all()
        self.claims = count_claims(self.masked, self.figures)  # "4 of the 6", "세 개": figures given as counts
        self._date_starts = [d.start for d in self.dates]
        self._figure_starts = [f.start for f in self.figures]
        self.known = known(question, today)
        self.inputs = inputs_of(self.sources)  # "calculator(47 * 12)" used [1]'s 47 and [2]'s 12
        spans = [(f.start, f.end) for f in self.figures if not _is_year(f)]
        self.comparisons = Comparisons(self.sources, self.names, self.masked, self.layout, spans)
        self.backing = Backing(
            self.sources,
            self.names,
            self.inputs,
            self.known,
            self.masked,
            self.layout,
            self.citations,
            self.comparisons,
        )
        self.unstated = Unstated(self.sources, self.names, self.masked, self.layout)
        self.result = Grounding(answer=answer)
        self.mentions: list[Mention] = []
        self._clause_cache: dict[int, list[tuple[int, int]]] = {}

    def run(self) -> Grounding:
        carried: tuple[int, ...] = ()
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
            carried = tuple(named) if named else (carried if block.kind is BlockKind.PROSE else ())
        for mention in self.mentions:
            self.backing.ground(mention)
        self.unstated.derive_all(self.mentions)
        self.comparisons.compare_all(self.mentions)
        self._wrong_entities()
        self._conclude()
        return self.result

    # --- reading ---------------------------------------------------------------------------------------------

    def _read_all(self) -> tuple[list[WrittenDate], list[Figure]]:
        """The answer's dates and figures (in digits, in words, in table cells), read once, in order."""
        # A header's words ("Revenue (USD millions)", "Q1 | Q2", "料金（1泊）") say what its column's figures are;
        # they are none.
        heads = [(b.start, b.end) for b in self.layout.blocks if b.kind is BlockKind.TABLE_HEAD]
        # Digits that name what a result is about ("5.1.3", "Room 312", "LH 438") are neither figures nor dates.
        unread = [*heads, *self.names.identifiers]
        read = mask(self.masked, unread, 0, None) if unread else self.masked
        dates = read_dates(read)
        text = mask(read, [(d.start, d.end) for d in dates], 0, None) if dates else read
        rows = [block for block in self.layout.blocks if block.kind is BlockKind.TABLE_ROW]
        prose = mask(text, [(row.start, row.end) for row in rows], 0, None) if rows else text
        if rows or reads_by_mark(prose):
            named = self.names.identifiers  # "5.1.3" and "2.4" say nothing of how figures are written
            self.mark = decimal_mark(mask(self.text, named, 0, None) if named else self.text)
        figures = read_figures(prose, mark=self.mark, trillion_is_billion=self.short_scale)
        for row in rows:
            body = text[row.start : row.end]
            cells = cell_figures(body, row.start, row, mark=self.mark, short_scale=self.short_scale)
            figures += [f._replace(start=f.start + row.start, end=f.end + row.start) for f in cells]
        taken = [(f.start, f.end) for f in figures]
        figures += read_number_words(mask(text, taken, 0, None), self.languages, taken)
        figures.sort(key=lambda f: f.start)
        figures = [f for f in figures if not self._in_a_name(f)]
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
        carried: tuple[int, ...],
    ) -> None:
        dates = self.dates[bisect_left(self._date_starts, start) : bisect_left(self._date_starts, end)]
        figures = self.figures[bisect_left(self._figure_starts, start) : bisect_left(self._figure_starts, end)]
        check.facts = len(dates) + len(figures)
        if not check.facts:
            return
        parts = self._clauses(index)
        figure_points = pointers(self.names, (start, end), parts, [f.start for f in figures], self.masked, carried)
        exact = [cite for cite in own if cite.exact]
        untagged = self._candidates(index, own, block) if not exact else []
        items: list[tuple[Figure | WrittenDate, Pointer]] = [(d, NOWHERE) for d in dates]
        items += zip(figures, figure_points, strict=True)
        claims = self.claims
        for item, pointer in items:
            after = [cite for cite in exact if cite.start >= item.start]
            if after and isinstance(item, Figure):  # a date sets the scene of its whole sentence
                rests_on, strict = list(after[0].sources), True
            elif exact:  # after the sentence's last tag: its tags first, then any result ("28 °C [1], Beijing 16 °C")
                rests_on, strict = _unique([*(s for cite in exact for s in cite.sources), *self.sources]), False
            else:
                rests_on, strict = untagged, False
            clause = clause_at(parts, item.start, (start, end))
            count = claims.get(item.start) if claims else None  # (no date starts where a figure does)
            self.mentions.append(
                Mention(
                    figure=item if isinstance(item, Figure) else None,
                    written=item if isinstance(item, WrittenDate) else None,
                    sentence=index,
                    rests_on=rests_on,
                    strict=strict,
                    clause=self.masked[clause[0] : clause[1]],
                    span=clause,
                    pointer=pointer,
                    count=bounded(count, figures, clause) if count is not None else None,
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
        if not preferred:
            return self.sources  # nothing cited anywhere near: every result, in order
        return _unique([*preferred, *self.sources])

    def _block_of(self, sentence: int) -> Block:
        return self.layout.block_of(self.layout.sentences[sentence])

    # --- what is wrong ---------------------------------------------------------------------------------------

    def _wrong_entities(self) -> None:
        """A grounded figure given to a name that nothing the run saw names."""
        checked = [m for m in self.mentions if m.grounded is not None and m.figure is not None]
        if not checked:
            return
        identities = self.identities
        known = known_names(
            self.known.question,
            lambda: [_said(s) for s in self.sources],
            lambda: [name for names in identities.values() for name in names],
        )
        unknown = UnknownNames(self.bare, known, german=self.languages[:1] == ["de"])
        seen: set[tuple[int, int]] = set()
        spans: dict[tuple[int, int], tuple[int, int]] = {}  # by clause: the figures of a clause share it
        for mention in checked:
            span = spans.get(mention.span)
            if span is None:
                span = spans[mention.span] = self._entity_span(mention)
            if span in seen:
                continue
            seen.add(span)
            start, end = span
            sentence = self.layout.sentences[mention.sentence].start
            for at, _, name in unknown.within(start, end, sentence):
                if len(name) <= MAX_UNIT_CHARS and self._follows_figure(at):
                    continue  # "412 Go", "3 TB", "40 kWh": a unit nobody listed, not a name
                mention.grounded, mention.wrong_entity = None, True
                self.result.sentences[mention.sentence].problems.append(
                    f"the number {mention.text} is given to {name}, which no question, tool call or result names"
                )
                self._mark(mention, "a figure is given to a name that no result mentions")
                break

    def _entity_span(self, mention: Mention) -> tuple[int, int]:
        """Where the name a figure is given to stands: its clause, or — when its clause names nothing — the
        clause before it too ("y el Costa Brava Sound, 5.120 entradas", "Chez Assurances Rivoli, 1 340 …")."""
        start, end = mention.span
        if self.names.within(start, end):
            return start, end
        parts = self._clauses(mention.sentence)
        before = [begin for begin, stop in parts if stop <= start]
        return (before[-1], end) if before else (start, end)

    def _in_a_name(self, figure: Figure) -> bool:
        """ "le chargeur 65 W", "Écran 27 pouces": a number that is part of a name a result gives is no figure."""
        if figure.unit is not None or not figure.number.isdigit():
            return False
        before = self.masked[max(0, figure.start - 2) : figure.start]
        if not before.endswith(" ") and before != " \n":  # ("$" also matches before a last newline)
            return False  # no space right before it (most figures): `_WORD_BEFORE` cannot match
        word = _WORD_BEFORE.search(self.masked, max(0, figure.start - 24), figure.start)
        if word is None:
            return False
        if self._said is None:
            self._said = "\n".join(_said(source) for source in self.sources).casefold()
        return f"{word.group(1)} {figure.number}".casefold() in self._said

    def _follows_figure(self, at: int) -> bool:
        before = self.bare[max(0, at - 2) : at]
        return any(m.figure is not None and m.end in (at, at - 1) for m in self.mentions) and not before.strip()

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
                bound = mention.bound
                if bound is not None:
                    result.backed.append((mention.clause, bound))
                    if bound not in sentence.cited:
                        sentence.cited.append(bound)
                continue
            if mention.wrong_entity:
                continue  # said already, with the name
            problem = self._problem(mention)
            sentence.problems.append(problem)
            self._mark(mention, _for_people(problem))
        attachments = self._attachments()
        result.attachments = attachments
        result.answer = attached(self.answer, attachments)
        ordered = sorted(attachments, key=lambda a: a.at)
        points = [a.at for a in ordered]
        for sentence in result.sentences:
            inside = ordered[bisect_left(points, sentence.start) : bisect_right(points, sentence.end)]
            if not inside:
                sentence.shown = sentence.text
                continue
            raw = self.answer[sentence.start : sentence.end]
            lead = len(raw) - len(raw.lstrip())
            sentence.shown = _tagged(sentence.text, inside, sentence.start + lead).strip()
        cited = [s for sentence in result.sentences for s in sentence.cited]
        by_tag: dict[str, list[Source]] = {}
        for source in self.sources:
            by_tag.setdefault(source.tag, []).append(source)
        cited += [s for figure in result.grounded for tag in figure.sources for s in by_tag.get(tag, ())]
        cited += [earlier for source in list(cited) for earlier in self.inputs.get(source.number, ())]
        result.cited = _unique(cited)
        if self.sources and not result.cited:
            result.problems.append("the answer cites no tool result")
        result.problems = list(dict.fromkeys([*self.citations.problems, *result.problems]))
        for sentence in result.sentences:
            for problem in sentence.problems:  # each once, also when a sentence repeats one
                if problem not in result.problems:
                    result.problems.append(problem)

    def _attachments(self) -> list[Attachment]:
        """One tag after each run of figures Parley bound to the same result, in each sentence."""
        found: list[Attachment] = []
        by_sentence: dict[int, list[Mention]] = {}
        for mention in self.mentions:
            if mention.grounded is not None and mention.parley and mention.bound is not None and not _year(mention):
                by_sentence.setdefault(mention.sentence, []).append(mention)
        for index, mentions in by_sentence.items():
            ordered = sorted(mentions, key=_START)
            sentence = self.layout.sentences[index]
            prose = self.layout.blocks[sentence.block].kind is _PROSE
            for at, mention in enumerate(ordered):
                following = ordered[at + 1] if at + 1 < len(ordered) else None
                if following is not None and following.bound is mention.bound:
                    continue
                assert mention.bound is not None
                # A run's tag closes the clause of its last figure ("78 % humidity [1]", "北京 22°C [2]，晴"), as
                # models place tags — never a later clause, which may say something no result backs.
                end = 0
                if prose:
                    clause = mention.span
                    if following is None or following.start >= clause[1]:  # "74 % [1] vs 32 % [2]": one clause
                        end = _sentence_end(self.masked, *clause)
                found.append(attachment(self.answer, max(end, mention.end), mention.bound.number))
        return found

    def _mark(self, mention: Mention, why: str) -> None:
        sentence = self.result.sentences[mention.sentence]
        raw = self.answer[sentence.start : sentence.end]
        lead = len(raw) - len(raw.lstrip())
        start = mention.start - sentence.start - lead
        sentence.unbacked.append((start, start + len(mention.text), why))

    def _problem(self, mention: Mention) -> str:
        what = f"the number {mention.figure.number}" if mention.figure is not None else f"the date {mention.text}"
        if mention.superlative:
            return f"{what} is not the {mention.superlative} of its kind in the results, as its sentence says"
        if mention.contradicts:
            said = "went up" if mention.contradicts.startswith("fell") else "went down"
            return f"{what} {said}, its sentence says, but its result says it {mention.contradicts}"
        if mention.weekday:
            return f"{what} is a {mention.weekday}, not the day of the week its sentence gives it"
        if mention.miscounted:
            return f"{what} is not how many of the {mention.miscounted} its sentence counts"
        if mention.owner:
            source = mention.bound
            assert source is not None
            owner = f"{mention.owner}'s in {source.tool} {source.tag}"
            return f"{what} is {owner}, but its sentence gives it to another item"
        if mention.taken_from is not None:
            named = ", ".join(f"[{n}]" for n in sorted(mention.pointer.numbers))
            return (
                f"{what} is stated by {mention.taken_from.tool} {mention.taken_from.tag}, "
                f"but its sentence is about the result {named}"
            )
        if mention.strict and self._found_elsewhere(mention):
            return f"{what} is not in the result it cites ({', '.join(s.tag for s in mention.rests_on)})"
        return f"{what} appears in no tool result"

    def _found_elsewhere(self, mention: Mention) -> bool:
        if mention.written is not None:
            return any(mention.written.matches(d) for s in self.sources for d in facts_of(s).dates)
        figure = mention.figure
        assert figure is not None
        return any(facts_of(s).find(figure.readings, figure.approximation) for s in self.sources)


def _for_people(problem: str) -> str:
    """The problem in words a person uses, without the figure in it: a figure that failed is never shown."""
    what = "a date" if problem.startswith("the date") else "a figure"
    if "is not in the result it cites" in problem:
        return f"{what} does not match the result it cites"
    if "of its kind in the results" in problem:
        return f"{what} is not the largest or smallest its sentence says it is"
    if "went down, its sentence says" in problem:
        return f"{what} is said to have gone down, but its result says it rose"
    if "went up, its sentence says" in problem:
        return f"{what} is said to have gone up, but its result says it fell"
    if "its sentence counts" in problem:
        return f"{what} is not how many items of its result have what its sentence says"
    if "but its sentence gives it to another item" in problem:
        return f"{what} belongs to another item of its result than the one its sentence names"
    if "but its sentence is about" in problem:
        return f"{what} belongs to another result than the one its sentence is about"
    return f"{what} matches no tool result"


def _tagged(text: str, attachments: Sequence[Attachment], offset: int) -> str:
    """`attached(text, …)` with the attachments (in order) of the whole answer, `text` standing at `offset` in it."""
    pieces: list[str] = []
    at = 0
    for item in attachments:
        point = item.at - offset
        pieces += [text[at:point], item.marker]
        at = point
    pieces.append(text[at:])
    return "".join(pieces)


def _sentence_end(text: str, start: int, end: int) -> int:
    """Where the words of `text[start:end]` end: before its closing marks and spaces."""
    while end > start and (text[end - 1].isspace() or text[end - 1] in ".。!！?？;；:：…"):
        end -= 1
    return end


def _year(mention: Mention) -> bool:
    """A bare year ("Q3 2026", "in 2025") sets the scene: checked like any figure, but no tag is added to it."""
    return mention.figure is not None and _is_year(mention.figure)


def _is_year(figure: Figure) -> bool:
    return figure.unit is None and figure.number.isdigit() and len(figure.number) == 4 and 1900 <= figure.value <= 2100


def _said(source: Source) -> str:
    """Everything a call and its result say, as one text to find names in."""
    return source.memo(
        "said", lambda: json.dumps([source.tool, source.arguments, source.data], ensure_ascii=False, default=str)
    )


def _unique(sources: Sequence[Source]) -> list[Source]:
    return list({source.number: source for source in sources}.values())
