"""Backing: how one figure of an answer is backed — or why it is not.

A figure its words give as a count of items ("4 of the 6 students", "세 개") is first of all that: one of the
counts of a list in a result it rests on (`tally`), whatever else happens to equal it. Otherwise, in order: a
result it rests on states it (`facts`) — the one its clause names, where the answer's tags do not
say (`attribution.choose`); it is a count, sum or average over a list in one result; it is the asker's own
figure, the year, today's date; it derives from the figures around it or from one of them and a value of its
result (`derivation`). A value a superlative speaks of must be the largest or smallest of its kind — of its
field, or of the ratio its words compare ("the fullest", "per m²"); a rise or fall its words say must go the
way its results do (`comparisons`).
"""

from __future__ import annotations

import bisect
import calendar
import itertools
import re
from collections.abc import Collection, Iterable, Iterator, Sequence
from decimal import Decimal
from functools import lru_cache

from agent.grounding.attribution import Names, choose
from agent.grounding.citations import Citations
from agent.grounding.comparisons import (
    DENIED,
    RANKED,
    from_to,
    is_extreme,
    may_say_from_to,
    peers,
    per_unit,
    per_unit_key,
    periods,
    said_change,
    value_of,
)
from agent.grounding.dates import (
    WrittenDate,
    minutes_between,
    quarter_of,
    said_weekday,
    split_moment,
    weekday_of,
)
from agent.grounding.derivation import (
    MAX_OPERANDS,
    Aggregate,
    Derivation,
    Operand,
    aggregates_of,
    extremes_of,
    find_aggregate,
    find_derivation,
    inside,
)
from agent.grounding.facts import Fact, SourceFacts, facts_of, returned
from agent.grounding.figures import Figure, Reading, plain
from agent.grounding.language import EXCHANGE, FALL, FROM, RISE, says_decrease
from agent.grounding.mention import Known, Mention
from agent.grounding.records import owners, records_of
from agent.grounding.structure import BlockKind, Layout
from agent.grounding.superlatives import Direction, governed, resolved
from agent.grounding.tally import tallies
from agent.grounding.units import Family
from agent.result import GroundedFigure, GroundingRule
from agent.source import Source

_ITEM = re.compile(r"\s*(?:[-*+•·]|\d{1,2}[.)])\s")  # a bullet of a list ("- ", "* ", "1. ")
MAX_DERIVED = 200  # figures tried as derivations per answer: an answer repeating one number cannot stall a run
MAX_MOMENTS = 16  # dates and times tried as the ends of a duration
MAX_SOURCE_OPERANDS = 6  # values of a result tried as operands the answer did not write out
MAX_ASKED_SCAN = 8  # the asker's values compared one by one; more are looked up in a set
_MAX_TO = 8  # characters between the two figures of "from 189 to 221" (" auf ", "件から")


# A field that is an extreme by name: "temp_max_c", "peak_rps", "p95_max", "lowest_price".
_EXTREME_KEY = re.compile(r"(?:^|_|\b)(?:max|min|maximum|minimum|peak|high|low|highest|lowest|top)(?:$|_|\b)", re.I)


# A field holding a signed change: its sign says up or down ("change_pct_qoq": 3.2 rose).
_CHANGE_KEY = re.compile(r"(?:^|_)(?:change|growth|delta|diff|variation|trend|yoy|qoq|mom|wow|dod)(?:$|_)", re.I)

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
        figures: Sequence[tuple[int, int]],
    ) -> None:
        """`inputs`: the results each result's call used; `text`: the answer, citations masked; `figures`:
        where its figures stand (not its years)."""
        self.sources = sources
        self.names = names
        self.inputs = inputs
        self.known = known
        self.masked = text
        self.layout = layout
        self.citations = citations
        self.figures = figures
        self._facts_cache: dict[int, SourceFacts] = {}
        self._governed: dict[int, Direction] | None = None  # the figures superlatives speak of ("slowest … 912")
        self._peers: dict[tuple[str, str], tuple[Decimal, Decimal] | None] = {}
        self._tagged_in: dict[int, set[int]] | None = None  # block → the results its exact tags name
        self._ordered: dict[tuple[int, frozenset[int]], tuple[list[Source], list[Source], _Unpointed]] = {}
        self._tools_of: dict[frozenset[int], set[str]] = {}
        self._where: dict[int, str] = {}  # how a figure's backing names its result, by result
        self._periods = periods(sources)  # the tools asked for two periods: most runs ask none
        self._unlike_peers: list[tuple[Mention, Direction]] = []  # not the extreme their words call them
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
                self._check_superlative(mention, chosen, fact)
                self._check_item(mention, chosen, fact)
                self._check_direction(mention, fact)
                if self._periods:
                    self._check_trend(mention, chosen, fact)
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

    def _check_superlative(self, mention: Mention, source: Source, fact: Fact) -> None:
        """ "The slowest endpoint … 876 ms": a value a superlative speaks of must be the largest (or smallest) of
        its field — over the items of its result's list, or over the results of the same tool. A field that
        names its extreme ("temp_max_c") is one already."""
        directions = self._governed if self._governed is not None else self._directions()  # (run for every figure)
        direction = directions.get(mention.start)
        if direction is None or _EXTREME_KEY.search(fact.key):
            return
        wants = resolved(direction, fact.unit, fact.key)
        span = extremes(source).get(fact.key)
        if span is None:
            span = self._peer_span(source.tool, fact.key)
        if span is None:
            return  # a value with no others of its kind: no superlative can be wrong about it
        per = self._per_unit(mention, source, fact, wants)
        if per is not None:  # "le plus cher au m²": the amount per m² is compared, not the amount
            if not per:
                mention.grounded, mention.taken_from = None, None
            return
        low, high = span
        allowed = {Direction.LARGEST: (high,), Direction.SMALLEST: (low,)}.get(wants, (low, high))
        if fact.returned in allowed:
            return
        # Decided once the figures are derived: "am vollsten, 285 von 300 (95 %)" compares the ratio, not 285.
        self._unlike_peers.append((mention, wants))

    def _per_unit(self, mention: Mention, source: Source, fact: Fact, wants: Direction) -> bool | None:
        """Where a superlative's words count per one of something ("per m²", "pro Kopf"): is the item the
        extreme of its field over the field its unit names ("price_eur / surface_m2")? None where they do not."""
        statement = self._statement(mention)
        words = per_unit(statement)
        if not words or RANKED.search(statement) or DENIED.search(statement):
            return None
        found = peers(source, self.sources, ((fact.key, fact.returned),))
        denominator = per_unit_key(found[0][found[1]], fact.key, words) if found is not None else None
        if found is None or denominator is None:
            return None
        items, own = found
        if is_extreme(items, own, fact.key, denominator, wants):
            return True
        mention.superlative = f"{wants.value} {fact.key} / {denominator}"
        return False

    def _statement(self, mention: Mention) -> str:
        sentence = self.layout.sentences[mention.sentence]
        return self.masked[sentence.start : sentence.end]

    def compare_all(self, mentions: Sequence[Mention]) -> None:
        """A superlative over a ratio the answer derived from one item's fields ("the fullest, 571 of its 620
        spaces, 92 %"), and a rise or fall between two figures written "from … to …", checked once all are
        backed."""
        governed, masked = self._governed, self.masked
        if governed:  # (a superlative that speaks of a figure: most answers have none)
            ratios = [m for m in mentions if m.derivation is not None and m.grounded is not None]
            for mention, wants in self._unlike_peers:
                # Not the extreme of its field: right only as the numerator of a ratio its sentence derives (or
                # writes out: "402 of its 410") that is.
                as_ratio = any(self._check_ratio(d, mentions, governed) for d in ratios if _over(d, mention))
                if not as_ratio and not self._extreme_over_next(mention, mentions, wants):
                    mention.grounded, mention.superlative, mention.taken_from = None, wants.value, None
            for derived in ratios:
                self._check_ratio(derived, mentions, governed)
        if not may_say_from_to(masked):
            return
        for first, second in itertools.pairwise(mentions):  # the words between two figures rarely say "to"
            end = first.end
            if (
                second.start - end <= _MAX_TO
                and first.span == second.span
                and from_to(masked, first.start, end, second.start, second.end)
            ):
                self._check_from_to(first, second)

    def _check_ratio(self, derived: Mention, mentions: Sequence[Mention], governed: dict[int, Direction]) -> bool:
        """A ratio of one item's fields the answer derived, which a superlative speaks of (or of its numerator):
        is the item the extreme of it? True when it is; False when it is not or nothing says."""
        derivation = derived.derivation
        assert derivation is not None
        if len(derivation.operands) != 2 or " − " in derivation.formula:
            return False
        numerator, denominator = derivation.operands
        if not derivation.formula.endswith(f"= {numerator.text} / {denominator.text}"):
            return False  # a sum, a product, a change: no ratio of one item's fields
        statement = self.layout.sentences[derived.sentence]
        operands = [
            m
            for m in mentions
            if m.sentence == derived.sentence and m.backing is not None and m.text in (numerator.text, denominator.text)
        ]
        over = next((m for m in operands if m.text == numerator.text), None)
        under = next((m for m in operands if m.text == denominator.text), None)
        if over is None or under is None or over.bound is None or over.bound is not under.bound:
            return False
        spoken = next((m for m in (derived, over) if m.start in governed), None)
        if spoken is None or (spoken is over and self._names_field(over)):
            return False  # "the most returns: 100 of 500 orders (20 %)" compares the returns, not their rate
        words = self.masked[statement.start : statement.end]
        if RANKED.search(words) or DENIED.search(words):
            return False
        assert over.backing is not None and under.backing is not None
        top, bottom = over.backing[1], under.backing[1]
        found = peers(over.bound, self.sources, ((top.key, top.returned), (bottom.key, bottom.returned)))
        if found is None:
            return False
        wants = resolved(governed[spoken.start], top.unit, top.key)
        if is_extreme(*found, top.key, bottom.key, wants):
            return True
        spoken.grounded, spoken.superlative = None, f"{wants.value} {top.key} / {bottom.key}"
        return False

    def _extreme_over_next(self, mention: Mention, mentions: Sequence[Mention], wants: Direction) -> bool:
        """ "The fullest, with 402 of its 410 spaces": is the item the extreme of its field over the field of the
        figure right after it in its clause, another of the same item's?"""
        at = next(at for at, m in enumerate(mentions) if m is mention)
        under = mentions[at + 1] if at + 1 < len(mentions) else None
        if under is None or under.span != mention.span or under.backing is None or under.bound is not mention.bound:
            return False
        assert mention.backing is not None and mention.bound is not None
        top, bottom = mention.backing[1], under.backing[1]
        if top.key == bottom.key or self._names_field(mention):
            return False
        found = peers(mention.bound, self.sources, ((top.key, top.returned), (bottom.key, bottom.returned)))
        return found is not None and is_extreme(*found, top.key, bottom.key, wants)

    def _names_field(self, mention: Mention) -> bool:
        """Do the words of its sentence before a figure name the field it is ("the most returns: 100")?"""
        assert mention.backing is not None
        sentence = self.layout.sentences[mention.sentence]
        before = self.masked[sentence.start : mention.start].casefold()
        return any(len(word) > 3 and word in before for word in mention.backing[1].key.casefold().split("_"))

    def _check_from_to(self, first: Mention, second: Mention) -> None:
        """ "Fell from 189 to 221": a change its words say went down (or up) between two figures in order."""
        if first.grounded is None or second.grounded is None:
            return
        one, other = first.figure, second.figure
        if one is None or other is None or one.unit != other.unit or one.percent != other.percent:
            return
        said = said_change(first.clause)
        before, after = one.value, other.value
        if said is None or before == after or (after > before) == said:
            return
        went = "rose" if after > before else "fell"
        second.grounded, second.contradicts = None, f"{went} (from {first.text} to {second.text})"

    def _check_trend(self, mention: Mention, source: Source, fact: Fact) -> None:
        """ "Late trips fell to 221 last week": a figure its words say rose (or fell) to, from the same field of
        the result of the period before."""
        pair = self._periods.get(source.tool)
        if pair is None or source is not pair[1] or mention.grounded is None or _is_change(fact.key):
            return  # most runs ask no tool for two periods: nothing to compare
        said = said_change(self._around(mention))
        before = value_of(pair[0], fact.key)
        after = fact.returned
        if said is None or before is None or before == after or (after > before) == said:
            return
        went = "rose" if after > before else "fell"
        mention.grounded = None
        mention.contradicts = f"{went} ({fact.key}: {plain(before)} in {pair[0].tag}, {plain(after)} in {source.tag})"

    def _around(self, mention: Mention) -> str:
        """The words of a figure's clause next to it, up to the figures beside it: "fell to 221", "1,410個に減り
        ました" — not the "fell" of "fell to 221 out of 1,274" for 1,274."""
        starts = [start for start, _ in self.figures]
        before, after = bisect.bisect_left(starts, mention.start), bisect.bisect_right(starts, mention.start)
        left = max(mention.span[0], mention.start - 24, self.figures[before - 1][1] if before > 0 else 0)
        right = min(mention.span[1], mention.end + 16, starts[after] if after < len(starts) else mention.end + 16)
        return self.masked[left:right]

    def _directions(self) -> dict[int, Direction]:
        """The figures superlatives speak of, by where each starts, read on first need."""
        if self._governed is None:
            sentences = [(s.start, s.end) for s in self.layout.sentences]
            self._governed = governed(self.masked, sentences, self.figures)
        return self._governed

    def _check_item(self, mention: Mention, source: Source, fact: Fact) -> None:
        """ "/checkout is at 412 ms", where one result lists /checkout at 912 ms and /search at 412 ms: a figure
        is the item's its clause (else its sentence, naming one item) names, or it is swapped within its result."""
        records = records_of(source)
        if not records:
            return  # a result that lists no items: nothing in it to swap
        own, others = owners(records, fact.key, fact.returned)
        if not others or mention.grounded is None:
            return
        sentence = self.layout.sentences[mention.sentence]
        for start, end in (mention.span, (sentence.start, sentence.end)):
            if self.names.named(start, end, own):
                return
            named = self.names.named(start, end, others)
            if len(named) > 1 and end == sentence.end and start == sentence.start:
                return  # a sentence naming several items may compare them: only a clause says whose a figure is
            if named:
                mention.grounded, mention.owner = None, min(own)
                return

    def _check_direction(self, mention: Mention, fact: Fact) -> None:
        """ "Down 3.2 %" where the result's change is +3.2: a change its words say went down must be negative."""
        if mention.grounded is None or not _is_change(fact.key) or fact.returned <= 0:
            return
        start, end = mention.span
        near = self.masked[max(start, mention.start - 40) : min(end, mention.end + 12)]
        if says_decrease(near):
            mention.grounded, mention.contradicts = None, f"rose ({fact.key}: {plain(fact.returned)})"

    def _peer_span(self, tool: str, key: str) -> tuple[Decimal, Decimal] | None:
        """The smallest and largest `key` over the results of `tool` (two at least)."""
        if (tool, key) not in self._peers:
            values = [f.returned for s in self.sources if s.tool == tool for f in returned(s, 64) if f.key == key]
            self._peers[(tool, key)] = (min(values), max(values)) if len(values) > 1 else None
        return self._peers[(tool, key)]

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
        if claim.whole is None and (mention.start in self._directions() or self._an_items_value(mention, figure)):
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

    def derive_all(self, mentions: Sequence[Mention]) -> None:
        """Ground, as derivations, the figures nothing states."""
        for _ in range(2):  # a second pass lets a derived figure be an operand of the next ("50 …, that is 25 %")
            pending = [m for m in mentions if m.grounded is None and m.figure is not None and not m.refuted]
            pending = pending[:MAX_DERIVED]
            if not pending:
                return
            by_sentence: dict[int, list[Mention]] = {}
            for mention in mentions:
                if mention.grounded is not None and mention.figure is not None:
                    by_sentence.setdefault(mention.sentence, []).append(mention)
            for mention in pending:
                before = self._items_before(mention.sentence) or [mention.sentence - 1]
                around = [m for index in (*before, mention.sentence) for m in by_sentence.get(index, [])]
                if not self._ground_span(mention, mentions):
                    self._derive(mention, around)

    def _derive(self, mention: Mention, around: Sequence[Mention]) -> None:
        """Ground `mention` as a derivation of the grounded figures `around` it (its sentence and the one before),
        or of the values of their results that the answer did not write out."""
        figure = mention.figure
        assert figure is not None
        named = self._named_tags(mention)
        if named:  # "Berlin and Paris together took 701": no operand of a result its clause leaves out (Rome)
            around = [m for m in around if m.operand is None or _among(m.operand.tags, named)]
        closest = sorted(around, key=lambda other: abs(other.start - mention.start))[:MAX_OPERANDS]
        nearest = sorted(closest, key=lambda other: other.start)  # in reading order, as the formula is written
        written = [operand for other in nearest if (operand := other.operand) is not None]
        decrease = says_decrease(mention.clause)
        exchange = bool(EXCHANGE.search(self.masked[max(0, mention.start - 120) : mention.end + 40]))
        derivation = find_derivation(figure, written, decrease=decrease, exchange=exchange) if written else None
        own = self._own_tag(mention)
        if derivation is not None and self._against_its_words(mention, derivation, nearest):
            derivation = None
        if derivation is not None and not _uses(derivation, own):
            derivation = None  # "Berlin accounts for 47.8 %" is Paris's 377 / 789: not Berlin's share
        # "50 of the 200 are open": 200 − 150, where the result says 150 resolved — one of the answer's figures
        # and a value its own result returned.
        anchors = sorted(
            (m for m in around if m.bound is not None and m.operand is not None and not _weak(m)),
            key=lambda m: abs(m.start - mention.start),
        )
        if named:
            anchors = [m for m in anchors if m.bound is not None and m.bound.tag in named]
        for anchor in anchors[:3]:
            if derivation is not None:
                break
            assert anchor.bound is not None
            # Its own values, not one item's of a list in it: "3 of 6" is no item's 20 / 6.
            facts = returned(anchor.bound, MAX_SOURCE_OPERANDS, items=False)
            values = [_value_operand(anchor.bound, fact) for fact in facts]
            derivation = find_derivation(figure, values, decrease=decrease, exchange=exchange, anchor=anchor.operand)
            if derivation is not None and not _uses(derivation, own):
                derivation = None
        if derivation is None:
            return
        tags = ", ".join(derivation.tags) or "the question"
        mention.grounded = GroundedFigure(
            figure=figure.text,
            rule=GroundingRule.DERIVED,
            how=f"{derivation.formula} from {tags}",
            sources=list(derivation.tags),
        )
        mention.derived_operand = Operand(
            figure.text, (figure.value,), figure.unit, figure.percent, derivation.tags, figure.per
        )
        mention.derivation = derivation

    def _items_before(self, index: int) -> list[int]:
        """The sentences of the list or table that ends right before sentence `index` (a total after bullets
        sums them all), or none when what comes before is prose."""
        sentences = self.layout.sentences
        found: list[int] = []
        at = index - 1
        while at >= 0 and len(found) < MAX_OPERANDS and sentences[at].block != sentences[index].block:
            block = self.layout.block_of(sentences[at])
            if block.kind is not BlockKind.TABLE_ROW and not _ITEM.match(self.masked, block.start):
                break
            found.insert(0, at)
            at -= 1
        return found if len(found) > 1 else []

    def _ground_span(self, mention: Mention, mentions: Sequence[Mention]) -> bool:
        """A duration is the time between two moments: two the answer states and its results back ("left at
        08:15, due at 17:45, so 9 hours 30 minutes"), or two of the results it rests on (departed, eta)."""
        figure = mention.figure
        assert figure is not None
        unit = figure.unit
        if unit is None or unit.family is not Family.DURATION or unit.factor < 60:
            return False
        moments: list[tuple[WrittenDate, tuple[str, ...]]] = [
            (m.written, tuple(m.grounded.sources))
            for m in mentions
            if m.written is not None and m.grounded is not None and 0 <= mention.sentence - m.sentence <= 1
        ]
        pointed = [s for s in mention.rests_on if s.number in mention.pointer.numbers] or mention.rests_on[:4]
        moments += [(stated, (source.tag,)) for source in pointed for stated in facts_of(source).dates[:6]]
        for (first, tags), (second, other) in itertools.combinations(moments[:MAX_MOMENTS], 2):
            for minutes in minutes_between(first, second):
                value = Decimal(minutes) * 60 / unit.factor
                if any(inside(value, reading, figure.approximation) for reading in figure.readings):
                    used = tuple(dict.fromkeys((*tags, *other)))
                    mention.grounded = GroundedFigure(
                        figure=figure.text,
                        rule=GroundingRule.DERIVED,
                        how=f"{figure.text}: from {first.text} to {second.text} ({', '.join(used) or 'the question'})",
                        sources=list(used),
                    )
                    mention.derived_operand = Operand(figure.text, (figure.value,), unit, False, used, None)
                    return True
        return False

    def _against_its_words(self, mention: Mention, derivation: Derivation, nearest: Sequence[Mention]) -> bool:
        """ "From 134 to 128, up 6": a change its words say rose (or fell) is never the difference of a fall (or
        of a rise) between two figures written from one to the other."""
        operands = derivation.operands
        if len(operands) != 2 or " − " not in derivation.formula or any(op.percent for op in operands):
            return False
        at = {m.text: m.start for m in reversed(nearest)}
        if any(op.text not in at for op in operands):
            return False
        first, second = sorted(operands, key=lambda op: at[op.text])
        if not FROM.search(self.masked, max(0, at[first.text] - 24), at[first.text]):
            return False
        said = self.masked[at[first.text] : max(mention.span[1], mention.end)]  # "von 134 auf 128 gestiegen, um 6"
        up, down = bool(RISE.search(said)), bool(FALL.search(said))
        return up != down and (second.values[0] > first.values[0]) != up

    def _own_tag(self, mention: Mention) -> str | None:
        """The tag of the one result a figure's clause names, if it names exactly one."""
        pointer = mention.pointer
        if pointer.level != "clause" or len(pointer.numbers) != 1:
            return None
        return next((s.tag for s in self.sources if s.number in pointer.numbers), None)

    def _named_tags(self, mention: Mention) -> frozenset[str]:
        """The tags of the results a derived figure is about, when its words name two or more (a sum, a
        comparison of named things): its clause's, or its sentence's when its clause names one of them ("Berlin
        and Paris together took 789"). None when its clause names nothing ("all three took 1,078")."""
        pointer = mention.pointer
        if pointer.level != "clause":
            return frozenset()
        numbers: Collection[int] = pointer.numbers
        if len(numbers) == 1:
            sentence = self.layout.sentences[mention.sentence]
            numbers = self.names.within(sentence.start, sentence.end)
        if len(numbers) < 2:
            return frozenset()
        return frozenset(s.tag for s in self.sources if s.number in numbers)

    def _block_index(self, sentence: int) -> int:
        return self.layout.sentences[sentence].block


@lru_cache(maxsize=1024)
def _is_change(key: str) -> bool:
    """Does a field's name say it holds a signed change? (A run's results share a few field names.)"""
    return _CHANGE_KEY.search(key) is not None


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


def _value_operand(source: Source, fact: Fact) -> Operand:
    """A value a result returned, as an operand: "150 (resolved in [1])"."""
    return Operand(
        f"{plain(fact.returned)} ({fact.key} in {source.tag})", (fact.value,), fact.unit, False, (source.tag,)
    )


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


def _uses(derivation: Derivation, own: str | None) -> bool:
    """A figure its clause gives to one result derives from a value of that result itself."""
    return own is None or any(tuple(operand.tags) == (own,) for operand in derivation.operands)


def _over(derived: Mention, numerator: Mention) -> bool:
    """Is `derived` a ratio of `numerator` to another figure of its sentence?"""
    derivation = derived.derivation
    return (
        derivation is not None
        and derived.sentence == numerator.sentence
        and len(derivation.operands) == 2
        and derivation.operands[0].text == numerator.text
    )


def _among(tags: Sequence[str], named: frozenset[str]) -> bool:
    """An operand of the named results (or of the question, with no tag)."""
    return not tags or any(tag in named for tag in tags)


def _weak(mention: Mention) -> bool:
    """A figure that is a result's only by chance — a number in a field's name — anchors no derivation."""
    return mention.backing is not None and mention.backing[1].from_a_name


def extremes(source: Source) -> dict[str, tuple[Decimal, Decimal]]:
    """The smallest and largest value of each field over the items of the result's lists, read once."""
    return source.memo("extremes", lambda: extremes_of(source.data))


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
