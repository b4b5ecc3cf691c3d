"""Unstated: the figures of an answer nothing states, grounded as what the figures around them derive.

"50 of the 200 are open, 25 %": 25 % is 50 / 200, two figures of its sentence. "50 of the 200 are open", where
the result says 150 resolved: 50 is 200 − 150, one of the answer's figures and a value its result returned
but the answer did not write out. "Left at 08:15, due at 17:45, so 9 hours 30 minutes": a duration is the time
between two moments. What a derivation is and how one is found is `derivation`; this is the pass over an
answer's figures, once `Backing` has backed what the results state.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Collection, Sequence
from decimal import Decimal

from agent.grounding.attribution import Names
from agent.grounding.dates import WrittenDate, minutes_between
from agent.grounding.derivation import MAX_OPERANDS, Derivation, Operand, find_derivation, inside
from agent.grounding.facts import Fact, facts_of, returned
from agent.grounding.figures import plain
from agent.grounding.language import EXCHANGE, FALL, FROM, RISE, says_decrease
from agent.grounding.mention import Mention
from agent.grounding.structure import BlockKind, Layout
from agent.grounding.units import Family
from agent.result import GroundedFigure, GroundingRule
from agent.source import Source

_ITEM = re.compile(r"\s*(?:[-*+•·]|\d{1,2}[.)])\s")  # a bullet of a list ("- ", "* ", "1. ")
MAX_DERIVED = 200  # figures tried as derivations per answer: an answer repeating one number cannot stall a run
MAX_MOMENTS = 16  # dates and times tried as the ends of a duration
MAX_SOURCE_OPERANDS = 6  # values of a result tried as operands the answer did not write out


class Unstated:
    """Grounds, as derivations, the figures of one answer that no result states."""

    def __init__(self, sources: Sequence[Source], names: Names, text: str, layout: Layout) -> None:
        """`text`: the answer, citations masked."""
        self.sources = sources
        self.names = names
        self.masked = text
        self.layout = layout

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


def _value_operand(source: Source, fact: Fact) -> Operand:
    """A value a result returned, as an operand: "150 (resolved in [1])"."""
    return Operand(
        f"{plain(fact.returned)} ({fact.key} in {source.tag})", (fact.value,), fact.unit, False, (source.tag,)
    )


def _uses(derivation: Derivation, own: str | None) -> bool:
    """A figure its clause gives to one result derives from a value of that result itself."""
    return own is None or any(tuple(operand.tags) == (own,) for operand in derivation.operands)


def _among(tags: Sequence[str], named: frozenset[str]) -> bool:
    """An operand of the named results (or of the question, with no tag)."""
    return not tags or any(tag in named for tag in tags)


def _weak(mention: Mention) -> bool:
    """A figure that is a result's only by chance — a number in a field's name — anchors no derivation."""
    return mention.backing is not None and mention.backing[1].from_a_name
