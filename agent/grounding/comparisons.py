"""Comparisons: what an answer says of one item against the others of its kind, where the quantity compared is
no single field of the results.

"Harbor Street Garage is the fullest, with 571 of its 620 spaces taken (92 %)": "fullest" compares
occupied / capacity, a ratio of two fields of each garage, and Elm Row Deck's 402 / 410 is larger, though its
402 is not. "Le plus cher au m²" compares price / surface, even where the answer writes the price alone. "Late
trips fell to 221 last week", after 189 the week before: a direction between two results of one tool, asked
for two periods, in the order of their periods.

The items compared are those a superlative over a field compares (`Comparisons.check_superlative`): the items
of the result's list, or the results of the same tool. `Comparisons` holds the checks of one answer: those of
each figure as `backing` binds it (a superlative over its field, a value swapped between items, a change its words
say went the other way), and those of its figures together once all are backed (`compare_all`).
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from functools import lru_cache

from agent.grounding.attribution import Names
from agent.grounding.derivation import extremes_of
from agent.grounding.facts import Fact, returned
from agent.grounding.figures import plain
from agent.grounding.language import (
    DENIED,
    FALL,
    FROM,
    PER_UNITS,
    PER_WORDS,
    RANKED,
    RISE,
    TO,
    TO_AFTER,
    TO_WORDS,
    says_decrease,
)
from agent.grounding.mention import Mention
from agent.grounding.records import owners, records_of
from agent.grounding.structure import Layout
from agent.grounding.superlatives import Direction, governed, resolved
from agent.source import Source

MAX_PEER_VALUES = 64  # values of each result read as one item's fields
_MAX_TO = 8  # characters between the two figures of "from 189 to 221" (" auf ", "件から")

# A field that is an extreme by name: "temp_max_c", "peak_rps", "p95_max", "lowest_price".
_EXTREME_KEY = re.compile(r"(?:^|_|\b)(?:max|min|maximum|minimum|peak|high|low|highest|lowest|top)(?:$|_|\b)", re.I)

# A field holding a signed change: its sign says up or down ("change_pct_qoq": 3.2 rose).
_CHANGE_KEY = re.compile(r"(?:^|_)(?:change|growth|delta|diff|variation|trend|yoy|qoq|mom|wow|dod)(?:$|_)", re.I)

_KEY_WORDS = re.compile(r"[a-z0-9]+")

# What a result's call asked for that orders two results in time: "2026-W14", "2026-04", "2025", "2026Q1".
_PERIOD = re.compile(r"\d{4}(?:-?W\d{2}|-?Q[1-4]|-\d{2}(?:-\d{2})?)?")


def peers(
    source: Source, sources: Sequence[Source], held: Sequence[tuple[str, Decimal]]
) -> tuple[tuple[Mapping[str, Decimal], ...], int] | None:
    """The items an item of `source` holding every field and value of `held` is one of, and which one it is: the
    items of its list (when one of them holds them all), else the results of the same tool (two at least), each
    as its fields. None when there is nothing to compare it with."""
    records = records_of(source)
    holding = [at for at, record in enumerate(records) if all(pair in record.values for pair in held)]
    if len(holding) == 1:
        return tuple(dict(record.values) for record in records), holding[0]
    if holding:
        return None  # several items hold them all: which one the answer means is not said
    tool = [s for s in sources if s.tool == source.tool]
    if len(tool) < 2:
        return None
    items = tuple({f.key: f.returned for f in returned(s, MAX_PEER_VALUES, items=False)} for s in tool)
    own = tool.index(source)
    if not all(items[own].get(key) == value for key, value in held):
        return None
    return items, own


def is_extreme(
    items: Sequence[Mapping[str, Decimal]], own: int, numerator: str, denominator: str, wants: Direction
) -> bool:
    """Is the item `own` the largest (or smallest, or either) of `numerator / denominator` over the items that
    hold both? An item tied with the extreme is one; a quantity with nothing to compare is never wrong."""
    ratios = {
        at: item[numerator] / item[denominator] for at, item in enumerate(items) if _holds(item, numerator, denominator)
    }
    if own not in ratios or len(ratios) < 2:
        return True
    low, high = min(ratios.values()), max(ratios.values())
    allowed = {Direction.LARGEST: (high,), Direction.SMALLEST: (low,)}.get(wants, (low, high))
    return ratios[own] in allowed


def _holds(item: Mapping[str, Decimal], numerator: str, denominator: str) -> bool:
    return numerator in item and bool(item.get(denominator))


def per_unit(statement: str) -> tuple[str, ...]:
    """What an amount is counted per where the words say "per m²", "pro Kopf", "人均": the words that name it in a
    field's name ("m2", "surface", "population") — none where they say no such thing."""
    found = PER_UNITS.search(statement)
    return PER_WORDS[found.lastgroup or ""] if found is not None else ()


def per_unit_key(item: Mapping[str, Decimal], numerator: str, words: Sequence[str]) -> str | None:
    """The one field of the item, besides `numerator`, whose name holds one of `words` ("surface_m2"), or None."""
    named = [key for key in item if key != numerator and any(w in _KEY_WORDS.findall(key.casefold()) for w in words)]
    return named[0] if len(named) == 1 else None


def may_say_from_to(text: str) -> bool:
    """Does `text` hold a word `from_to` needs? Most answers have none: one look at the whole spares each pair."""
    for word in TO_WORDS:  # noqa: SIM110 (a loop, not `any`: no generator for every check)
        if word in text:
            return True
    return False


def from_to(text: str, start: int, end: int, then: int, then_end: int) -> bool:
    """Are the figures at `start`–`end` and `then`–`then_end` in `text` written as the two ends of a change?"""
    gap = TO.match(text, end, then)
    if gap is None or gap.end() != then:
        return False
    if gap.group("after") is not None:
        return TO_AFTER.match(text, then_end) is not None
    return FROM.search(text, max(0, start - 24), start) is not None


@lru_cache(maxsize=1024)
def said_change(words: str) -> bool | None:
    """Do these words say something rose (True) or fell (False)? None when they say neither, both, or deny it."""
    up, down = RISE.search(words) is not None, FALL.search(words) is not None
    if up == down or DENIED.search(words):  # (most words say neither: the denial is looked for after)
        return None
    return up


def periods(sources: Sequence[Source]) -> dict[str, tuple[Source, Source]]:
    """The tools called exactly twice for the same thing but for two periods ("2026-W14", "2026-W15"), each with
    its two results, earlier period first."""
    found: dict[str, tuple[Source, Source]] = {}
    if len(sources) != 2 and all(source.tool == sources[0].tool for source in sources):
        return found  # one tool, called once or for many things (a batch of regions): no two periods
    by_tool: dict[str, list[Source]] = {}
    for source in sources:
        by_tool.setdefault(source.tool, []).append(source)
    for tool, made in by_tool.items():
        if len(made) != 2 or made[0].arguments.keys() != made[1].arguments.keys():
            continue
        first, second = made[0].arguments, made[1].arguments
        differ = [(str(first[k]), str(second[k])) for k in first if first[k] != second[k]]
        if len(differ) != 1:
            continue
        a, b = differ[0]
        if len(a) == len(b) and _PERIOD.fullmatch(a) and _PERIOD.fullmatch(b):
            found[tool] = (made[0], made[1]) if a < b else (made[1], made[0])
    return found


def value_of(source: Source, key: str) -> Decimal | None:
    """The value of `key` outside the result's lists, or None."""
    return next((f.returned for f in returned(source, MAX_PEER_VALUES, items=False) if f.key == key), None)


class Comparisons:
    """Checks what the figures of one answer say of one item against the others of its kind: that a value a
    superlative speaks of is the extreme of its field or ratio, that a figure is the item's its clause names, that
    a rise or fall its words say goes the way its results do. `Backing` runs the checks of each figure it backs;
    `compare_all` those of the figures together, once all are backed (and derived)."""

    def __init__(
        self,
        sources: Sequence[Source],
        names: Names,
        text: str,
        layout: Layout,
        figures: Sequence[tuple[int, int]],
    ) -> None:
        """`text`: the answer, citations masked; `figures`: where its figures stand (not its years)."""
        self.sources = sources
        self.names = names
        self.masked = text
        self.layout = layout
        self.figures = figures
        self._governed: dict[int, Direction] | None = None  # the figures superlatives speak of ("slowest … 912")
        self._peers: dict[tuple[str, str], tuple[Decimal, Decimal] | None] = {}
        self.periods = periods(sources)  # the tools asked for two periods: most runs ask none
        self._unlike_peers: list[tuple[Mention, Direction]] = []  # not the extreme their words call them

    def check_superlative(self, mention: Mention, source: Source, fact: Fact) -> None:
        """ "The slowest endpoint … 876 ms": a value a superlative speaks of must be the largest (or smallest) of
        its field — over the items of its result's list, or over the results of the same tool. A field that
        names its extreme ("temp_max_c") is one already."""
        directions = self._governed if self._governed is not None else self.directions()  # (run for every figure)
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

    def check_trend(self, mention: Mention, source: Source, fact: Fact) -> None:
        """ "Late trips fell to 221 last week": a figure its words say rose (or fell) to, from the same field of
        the result of the period before."""
        pair = self.periods.get(source.tool)
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

    def directions(self) -> dict[int, Direction]:
        """The figures superlatives speak of, by where each starts, read on first need."""
        if self._governed is None:
            sentences = [(s.start, s.end) for s in self.layout.sentences]
            self._governed = governed(self.masked, sentences, self.figures)
        return self._governed

    def check_item(self, mention: Mention, source: Source, fact: Fact) -> None:
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

    def check_direction(self, mention: Mention, fact: Fact) -> None:
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


def extremes(source: Source) -> dict[str, tuple[Decimal, Decimal]]:
    """The smallest and largest value of each field over the items of the result's lists, read once."""
    return source.memo("extremes", lambda: extremes_of(source.data))


@lru_cache(maxsize=1024)
def _is_change(key: str) -> bool:
    """Does a field's name say it holds a signed change? (A run's results share a few field names.)"""
    return _CHANGE_KEY.search(key) is not None


def _over(derived: Mention, numerator: Mention) -> bool:
    """Is `derived` a ratio of `numerator` to another figure of its sentence?"""
    derivation = derived.derivation
    return (
        derivation is not None
        and derived.sentence == numerator.sentence
        and len(derivation.operands) == 2
        and derivation.operands[0].text == numerator.text
    )
