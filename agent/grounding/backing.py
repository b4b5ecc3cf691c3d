"""Backing: how one figure of an answer is backed — or why it is not.

A figure its words give as a count of items ("4 of the 6 students", "세 개") is first of all that: one of the
counts of a list in a result it rests on (`tally`), whatever else happens to equal it. Otherwise, in order: a
result it rests on states it (`facts`) — the one its clause names, where the answer's tags do not
say (`attribution.choose`); it is a count, sum or average over a list in one result; it is the asker's own
figure, the year, today's date. Once all are backed, what none of these backs may derive from the figures around
it or from one of them and a value of its result (`unstated`). A value a superlative speaks of must be the
largest or smallest of its kind — of its field, or of the ratio its words compare ("the fullest", "per m²"); a
rise or fall its words say must go the way its results do (`comparisons`, whose checks of each figure run here).
"""

from __future__ import annotations

import calendar
import itertools
from collections.abc import Collection, Iterable, Iterator, Sequence
from decimal import Decimal

from agent.grounding.attribution import Names, choose
from agent.grounding.citations import Citations
from agent.grounding.comparisons import Comparisons
from agent.grounding.dates import WrittenDate, quarter_of, said_weekday, split_moment, weekday_of
from agent.grounding.derivation import Aggregate, aggregates_of, find_aggregate
from agent.grounding.facts import Fact, SourceFacts, facts_of, returned
from agent.grounding.figures import Figure, Reading
from agent.grounding.language import says_decrease
from agent.grounding.mention import Known, Mention
from agent.grounding.records import records_of
from agent.grounding.structure import BlockKind, Layout
from agent.grounding.tally import tallies
from agent.grounding.unstated import MAX_SOURCE_OPERANDS
from agent.result import GroundedFigure, GroundingRule
from agent.source import Source

MAX_ASKED_SCAN = 8  # the asker's values compared one by one; more are looked up in a set

# Read for every figure: `Enum.MEMBER` costs a class lookup each time in Python 3.11.
_EXACT, _PERCENT, _SCALED, _ROUNDED = (
    GroundingRule.EXACT,
    GroundingRule.PERCENT,
    GroundingRule.SCALED,
    GroundingRule.ROUNDED,
)
_APPARATUS = (BlockKind.FOOTNOTE, BlockKind.SOURCES)


class Backing:
    """Backs the mentions of one answer against one run's results."""

    def __init__(
        self,
        sources: Sequence[Source],
        names: Names,
        inputs: dict[int, tuple[Source, ...]],
        known: Known,
        text: str,
        layout: Layout,
        citations: Citations,
        comparisons: Comparisons,
    ) -> None:
        """`inputs`: the results each result's call used; `text`: the answer, citations masked; `comparisons`:
        the checks of what a figure says against the others of its kind, run on each figure backed."""
        self.sources = sources
        self.names = names
        self.inputs = inputs
        self.known = known
        self.masked = text
        self.layout = layout
        self.citations = citations
        self.comparisons = comparisons
        self._facts_cache: dict[int, SourceFacts] = {}
        self._tagged_in: dict[int, set[int]] | None = None  # block → the results its exact tags name
        self._ordered: dict[tuple[int, frozenset[int]], tuple[list[Source], list[Source], _Unpointed]] = {}
        self._tools_of: dict[frozenset[int], set[str]] = {}
        self._where: dict[int, str] = {}  # how a figure's backing names its result, by result
        self._periods = comparisons.periods  # the tools asked for two periods: most runs ask none
        # The asker's values. A question gives a handful: comparing with each costs less than hashing a Decimal
        # (equal Decimals hash alike, so equality says what a set would); a long list of them is a set.
        values = tuple(dict.fromkeys(a.value for asked in known.figures for a in asked.readings))
        self._asked_values: Collection[Decimal] = values if len(values) <= MAX_ASKED_SCAN else frozenset(values)

    def ground(self, mention: Mention) -> None:
        """Back `mention` by what states it, or leave it ungrounded with why (a swap, a false superlative)."""
        if mention.written is not None:
            self._ground_date(mention)
            return
        figure = mention.figure
        assert figure is not None
        if mention.count is not None and self._ground_count(mention, figure):
            return
        pointed = mention.pointer.numbers
        first, rest = self._pointed_first(mention.rests_on, pointed) if pointed else ((), mention.rests_on)
        asked = not mention.strict and self._asked(figure)
        if asked:
            # The asker's own figure ("our twenty regions") is theirs, unless the result its words name states it.
            first, rest = [s for s in first if s.number in pointed], ()
        stating, settled = self._stating(figure, first, rest, mention)
        if asked and not stating:
            self._ground_known(mention, figure)
            return
        if stating:
            # A tag names the results a figure may be in; the clause's names still say which one ("Shanghai 16 °C
            # [1][2]" is Beijing's 16 given to Shanghai). Settled, the search ended at the one `choose` takes.
            found, taken_from = (stating[-1], None) if settled else self._choose(stating, mention)
            if found is not None:
                chosen, reading, fact = found
                rule = _rule(figure, reading, fact)
                self._bind(mention, chosen, rule, f"{figure.text} ← {fact.shown()}", (reading, fact))
                comparisons = self.comparisons
                comparisons.check_superlative(mention, chosen, fact)
                comparisons.check_item(mention, chosen, fact)
                comparisons.check_direction(mention, fact)
                if self._periods:
                    comparisons.check_trend(mention, chosen, fact)
                if mention.owner and figure.unit is None and self._ground_aggregate(mention, figure):
                    mention.owner = ""  # "3 are late: A (6 h), B (12 h), C (3 h)": a count, not C's 3 h
                return
            mention.taken_from = taken_from
            return
        if self._ground_aggregate(mention, figure) or self._ground_calls(mention, figure):
            return
        self._ground_known(mention, figure)

    def _choose(
        self, stating: list[tuple[Source, Reading, Fact]], mention: Mention
    ) -> tuple[tuple[Source, Reading, Fact] | None, Source | None]:
        """Of the results that state a figure, the one it is bound to (`choose`) with how it states it — or None
        and the result it was taken from."""
        chosen, taken_from = choose([s for s, _, _ in stating], mention.pointer, self.names, self._tools)
        if chosen is None:
            return None, taken_from
        return next(item for item in stating if item[0] is chosen), None

    def _pointed_first(
        self, candidates: list[Source], pointed: frozenset[int]
    ) -> tuple[list[Source], Iterable[Source]]:
        """`candidates` in two parts: the results `pointed` to, then the others (only those not pointed to are
        tried after them: `_stating`). The figures of a sentence share their candidates and mostly their
        pointer: each split is made once per answer."""
        key = (id(candidates), pointed)
        kept = self._ordered.get(key)
        if kept is None or kept[0] is not candidates:  # the list itself is kept too: an id may be reused
            first = [s for s in candidates if s.number in pointed]
            kept = self._ordered[key] = (candidates, first, _Unpointed(candidates, pointed))
        return kept[1], kept[2]

    def _tools(self, numbers: frozenset[int]) -> set[str]:
        """The tools of the results `numbers`."""
        tools = self._tools_of.get(numbers)
        if tools is None:
            tools = self._tools_of[numbers] = {s.tool for s in self.sources if s.number in numbers}
        return tools

    def _facts(self, source: Source) -> SourceFacts:
        facts = self._facts_cache.get(source.number)
        if facts is None:
            facts = self._facts_cache[source.number] = facts_of(source)
        return facts

    def _stating(
        self, figure: Figure, first: Sequence[Source], rest: Iterable[Source], mention: Mention
    ) -> tuple[list[tuple[Source, Reading, Fact]], bool]:
        """The candidates (`first`, then `rest`) that state `figure`, with how: their numbers first, their
        strings only if need be — and whether the search was settled: it stops at the first one that settles it
        (the answer's tag, the result its words name, or any result where they name none), which is then the
        last. A figure its words say went down may also be its negative (`_negatives`), tried in each result
        after the figure as written."""
        stating: list[tuple[Source, Reading, Fact]] = []
        readings, approximation, pointed = figure.readings, figure.approximation, mention.pointer.numbers
        negatives: tuple[Reading, ...] | None = None  # made on first need: most figures are found as written
        for strings in (False, True):
            for source in itertools.chain(first, rest):
                facts = self._facts(source)
                # Every result's numbers were tried before any string is read: only its strings are left.
                find = facts.in_strings if strings else facts.in_numbers
                found = find(readings, approximation)
                if found is None:
                    if negatives is None:
                        negatives = _negatives(figure, mention.clause)
                    if negatives:
                        found = find(negatives, approximation)
                if found is not None:
                    stating.append((source, *found))
                    if not pointed or source.number in pointed:
                        return stating, True
            if stating:
                return stating, False
        return stating, False

    def _asked(self, figure: Figure) -> bool:
        asked = self._asked_values
        if not asked:
            return False
        # `in` a tuple compares each by identity, then equality: what `==` says of a figure's Decimals (never NaN).
        # A loop, not `any`: no generator for every figure.
        for reading in figure.readings:  # noqa: SIM110
            if reading.value in asked:
                return True
        return False

    def _ground_aggregate(self, mention: Mention, figure: Figure) -> bool:
        pointed, named = mention.pointer.numbers, self.names.anywhere
        ordered = sorted(mention.rests_on, key=lambda s: (s.number not in pointed, s.number in named))
        for source in mention.rests_on if mention.strict else ordered:
            listed = aggregates(source)
            if not listed:
                continue
            found = find_aggregate(listed, figure, mention.clause)
            if found is not None:
                self._bind(mention, source, GroundingRule.AGGREGATE, f"{figure.text} ← {found[1].how}", None)
                return True
        return False

    def _ground_count(self, mention: Mention, figure: Figure) -> bool:
        """ "4 of the 6 students passed", "창가 테이블은 세 개가 비어 있어요": a figure its words give as a count of
        items is one of the counts of a list in a result it rests on — or wrong, whatever value happens to equal
        it. False when no list is one it may count (its words count something else), or its words give it to an
        item (the largest, or one they name: "H3 has six seats")."""
        claim = mention.count
        assert claim is not None
        if claim.whole is None and (
            mention.start in self.comparisons.directions() or self._an_items_value(mention, figure)
        ):
            return False
        pointed = mention.pointer.numbers
        ordered = sorted(mention.rests_on, key=lambda s: s.number not in pointed)
        thresholds = self._thresholds(mention)
        missed: str = ""
        for source in ordered:
            for tally in tallies(source.data, mention.clause, claim, thresholds):
                how = next((tally.counts[r.value] for r in figure.readings if r.value in tally.counts), None)
                if how is not None:
                    self._bind(mention, source, GroundingRule.AGGREGATE, f"{figure.text} ← {how}", None)
                    return True
                missed = missed or f"{tally.name} in {source.tag}"
        if not missed:
            return False
        mention.miscounted = missed
        return True

    def _an_items_value(self, mention: Mention, figure: Figure) -> bool:
        """Is `figure` the value of an item its clause names ("H3 has six seats")?"""
        start, end = mention.span
        for source in mention.rests_on:
            for record in records_of(source):
                if any(value == figure.value for _, value in record.values) and self.names.named(
                    start, end, record.names
                ):
                    return True
        return False

    def _thresholds(self, mention: Mention) -> list[Reading]:
        """The values a count may be bounded by: its sentence's other figures, the question's, its results' own
        (not their lists' items': "pass_mark": 5.0)."""
        claim = mention.count
        assert claim is not None
        found = [*claim.bounds, *(asked.readings[0] for asked in self.known.figures)]
        for source in mention.rests_on[:4]:
            for fact in returned(source, MAX_SOURCE_OPERANDS, items=False):
                found.append(Reading(fact.returned, Decimal(1), fact.unit))
        return found

    def _ground_calls(self, mention: Mention, figure: Figure) -> bool:
        """ "上海是两个城市中更热的一个", "all 20 regions": how many results one tool gave, each about one thing."""
        if figure.unit is not None or figure.percent or figure.value < 2 or figure.readings[0].precision != 1:
            return False
        counts: dict[str, list[Source]] = {}
        for source in self.sources:
            counts.setdefault(source.tool, []).append(source)
        for tool, made in counts.items():
            if len(made) == figure.value:
                how = f"{figure.text} ← the number of {tool} results"
                mention.grounded = GroundedFigure(
                    figure=figure.text, rule=GroundingRule.AGGREGATE, how=how, sources=[s.tag for s in made]
                )
                return True
        return False

    def _ground_known(self, mention: Mention, figure: Figure) -> None:
        for asked in self.known.figures:
            if any(r.value == a.value for r in figure.readings for a in asked.readings):
                mention.grounded = GroundedFigure(
                    figure=figure.text, rule=GroundingRule.QUESTION, how="given in the question", sources=[]
                )
                return
        if figure.value == self.known.year and figure.unit is None:
            mention.grounded = GroundedFigure(
                figure=figure.text, rule=GroundingRule.QUESTION, how="the current year", sources=[]
            )

    def _ground_date(self, mention: Mention) -> None:
        written = mention.written
        assert written is not None
        said = said_weekday(self.masked, written)
        for source in mention.rests_on:
            for stated in facts_of(source).dates:
                if written.matches(stated):
                    self._bind(mention, source, GroundingRule.DATE, f"{written.text} ← {stated.text}", None)
                    self._check_weekday(mention, said, written, stated)
                    return
        split = split_moment(written)
        if split is not None:
            day, time = split
            for source in mention.rests_on:
                dates = facts_of(source).dates
                days = [d for d in dates if day.matches(d)]
                if days and any(time.matches(d) for d in dates):  # {"date": …, "time": "21:30"}
                    self._bind(mention, source, GroundingRule.DATE, f"{written.text} ← its date and its time", None)
                    self._check_weekday(mention, said, day, days[0])
                    return
        quarter = quarter_of(written)
        if quarter is not None:  # {"year": 2026, "quarter": 3}: a quarter a result gives as numbers
            for source in mention.rests_on:
                if _states_quarter(source, *quarter):
                    self._bind(mention, source, GroundingRule.DATE, f"{written.text} ← year and quarter", None)
                    return
            if any(quarter_of(d) for source in mention.rests_on for d in facts_of(source).dates):
                return  # a result is about another quarter: that this one is today's does not make it right
        for stated in self.known.dates:
            if written.matches(stated):
                how = f"{written.text}: the question's or today's date"
                mention.grounded = GroundedFigure(figure=written.text, rule=GroundingRule.QUESTION, how=how, sources=[])
                return

    @staticmethod
    def _check_weekday(mention: Mention, said: int | None, written: WrittenDate, stated: WrittenDate) -> None:
        """ "Montag, den 10. März 2026" where 10 March 2026 is a Tuesday: the date is right, its day is not."""
        day = weekday_of(written, stated) if said is not None else None
        if day is not None and day != said:
            mention.grounded, mention.weekday = None, calendar.day_name[day]

    def _bind(
        self, mention: Mention, source: Source, rule: GroundingRule, how: str, backing: tuple[Reading, Fact] | None
    ) -> None:
        mention.bound = source
        mention.backing = backing
        parley = mention.parley = not mention.strict and not self._tagged(mention, source)
        where = self._where.get(source.number)
        if where is None:  # " in [3] (its call used [1], [2])": the same for every figure of a result
            inputs = self.inputs.get(source.number, ())
            used = f" (its call used {', '.join(s.tag for s in inputs)})" if inputs else ""
            where = self._where[source.number] = f" in {source.tag}{used}"
        mention.grounded = GroundedFigure(
            figure=mention.text,
            rule=rule,
            how=f"{how}{where}, cited by Parley" if parley else f"{how}{where}",
            sources=[source.tag],
            cited_by="parley" if parley else "answer",
        )

    def _tagged(self, mention: Mention, source: Source) -> bool:
        """Does the answer carry a tag for `source` where a reader of this figure sees it — in its paragraph, its
        bullet or its row? A footnote's line or a list of sources is apparatus: Parley adds nothing there."""
        block = self.layout.sentences[mention.sentence].block
        if self.layout.blocks[block].kind in _APPARATUS:
            return True
        if self._tagged_in is None:
            self._tagged_in = {}
            for cite in self.citations.cites:
                if cite.exact:
                    cited = self.layout.sentences[cite.sentence].block
                    self._tagged_in.setdefault(cited, set()).update(s.number for s in cite.sources)
        return source.number in self._tagged_in.get(block, ())


def _rule(figure: Figure, reading: Reading, fact: Fact) -> GroundingRule:
    if fact.rule is not _EXACT:
        return fact.rule
    if figure.percent and reading.unit is None:
        return _PERCENT
    if reading is not figure.readings[0]:  # (the first reading's value is the figure's: never NaN, so equal)
        return _SCALED if len(figure.readings) > 1 and not figure.percent else _ROUNDED
    if fact.value != reading.value:
        return _ROUNDED
    return _EXACT


def _negatives(figure: Figure, clause: str) -> tuple[Reading, ...]:
    """ "Fell 3.2 %", "down €12,000": a positive figure its words say went down may stand for a negative value
    (`growth_pct: -3.2`), tried after the figure as written — "grew 3.2 %" never matches -3.2."""
    if figure.value <= 0 or not says_decrease(clause):
        return ()
    return tuple(r._replace(value=-r.value) for r in figure.readings)


def _states_quarter(source: Source, year: int | None, quarter: int) -> bool:
    values = returned(source, MAX_SOURCE_OPERANDS * 4)
    named = [(f.key.casefold(), f.returned) for f in values]
    has_quarter = any(("quarter" in key or key in ("q", "qtr")) and value == quarter for key, value in named)
    return has_quarter and (year is None or any("year" in key and value == year for key, value in named))


def aggregates(source: Source) -> tuple[Aggregate, ...]:
    """The counts, sums and averages over the result's lists, read once."""
    return source.memo("aggregates", lambda: aggregates_of(source.data))


class _Unpointed:
    """The candidates a figure's words do not point to, listed on first need: the result they point to states
    most figures, and the others are then never tried."""

    def __init__(self, candidates: Sequence[Source], pointed: frozenset[int]) -> None:
        self._candidates = candidates
        self._pointed = pointed
        self._listed: list[Source] | None = None

    def __iter__(self) -> Iterator[Source]:
        if self._listed is None:
            self._listed = [s for s in self._candidates if s.number not in self._pointed]
        return iter(self._listed)
