"""Mention: a figure or date of an answer, what it may rest on and how it was backed; and what the asker gave
(`Known`): figures and dates that need no tool."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache

from agent.grounding.attribution import NOWHERE, Pointer
from agent.grounding.dates import WrittenDate, read_dates
from agent.grounding.derivation import Derivation, Operand
from agent.grounding.facts import Fact
from agent.grounding.figures import Figure, Reading, decimal_mark, normalise_digits, read_figures
from agent.grounding.language import number_word_languages
from agent.grounding.structure import mask
from agent.grounding.tally import CountClaim
from agent.grounding.words import read_number_words
from agent.result import GroundedFigure
from agent.source import Source


@dataclass(slots=True)  # one per figure of an answer: built and read many times a check
class Mention:
    """A figure or date in a sentence, the results it may rest on, and how it was backed."""

    figure: Figure | None
    written: WrittenDate | None
    sentence: int
    rests_on: list[Source]
    strict: bool  # the answer's own tags name those results: the figure must be in one of them
    clause: str = ""  # the words of its clause ("are down", "fell", "exchange rate")
    span: tuple[int, int] = (0, 0)  # where its clause stands in the answer
    pointer: Pointer = NOWHERE
    grounded: GroundedFigure | None = None
    bound: Source | None = None  # the result it rests on
    backing: tuple[Reading, Fact] | None = None
    derived_operand: Operand | None = None
    derivation: Derivation | None = None  # how it follows from the figures around it, when it is derived
    taken_from: Source | None = None  # the result that states it, when its words point at another (swapped)
    owner: str = ""  # the item of its result that holds it, when its words name another item (swapped)
    wrong_entity: bool = False  # it is given to a name nothing the run saw names
    superlative: str = ""  # what its sentence says it is ("largest") when it is not
    contradicts: str = ""  # what its result says against its words ("rose (growth_pct: 3.2)"), said as it fell
    weekday: str = ""  # the day of the week its date falls on, when its words give it another
    count: CountClaim | None = None  # its words give it as a count of items ("4 of the 6", "세 개")
    miscounted: str = ""  # the list it is no count of, when it is none ("students in [1]")
    parley: bool = False  # Parley found its result (the answer's tags did not name it)
    # Where it stands in the answer, and as written: asked for by every rule, so kept rather than looked up.
    start: int = field(init=False)
    end: int = field(init=False)
    text: str = field(init=False)

    def __post_init__(self) -> None:
        item = self.item
        self.start, self.end, self.text = item.start, item.end, item.text

    @property
    def refuted(self) -> bool:
        """A result states it, but for another thing than its words say, or not as the extreme they call it:
        no arithmetic makes it right."""
        refuted = self.superlative or self.owner or self.contradicts or self.weekday or self.miscounted
        return bool(refuted) or self.taken_from is not None

    @property
    def item(self) -> Figure | WrittenDate:
        item = self.figure if self.figure is not None else self.written
        assert item is not None
        return item

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


@dataclass(frozen=True)
class Known:
    """What the asker gave, and today: figures and dates that need no tool."""

    question: str
    figures: tuple[Figure, ...]
    dates: tuple[WrittenDate, ...]
    year: int

    @classmethod
    def of(cls, question: str, today: date) -> Known:
        text = normalise_digits(question)
        dates = read_dates(text)
        body = mask(text, [(d.start, d.end) for d in dates], 0, None)
        today_dates = (WrittenDate(today.isoformat(), 0, 0, ((today.year, today.month, today.day, None, None),)),)
        figures = read_figures(body, mark=decimal_mark(body))
        figures += read_number_words(body, number_word_languages(body), [(f.start, f.end) for f in figures])
        return cls(question, tuple(figures), (*dates, *today_dates), today.year)


@lru_cache(maxsize=64)
def known(question: str, today: date) -> Known:
    """The question's figures and dates, read once for all the drafts of a run."""
    return Known.of(question, today)
