"""Attribution: which result a figure is about, when the answer does not say with a tag — and citing it.

A result is about the names its call was given and the names in its data ("get_weather(city=上海)" is about
上海, and so about "Shanghai"); a result reached through another's value is about that one's names too. Digits
name things as well where a field says so — a version, a room, an order, ticket or flight number, a week
("5.1.3", "312", "LH 438", written "LH438" too): those digits are no figure of the answer. Where
the answer writes those names says which result each of its figures means: the names of the figure's own
clause first ("Shanghai 28 °C, Beijing 16 °C"), else of its sentence, else of the sentence before it in the
same paragraph ("Shanghai: 28 °C. Humidity 68 %."). With "respectively", the figures follow the names in order.

A figure is bound to a result its names point to that states it. A result no name in the answer points to
("calculator(47 * 12)", a lookup by key) may back any figure. A figure stated only by a result the answer
gives to *another* name is a swapped fact: "Shanghai 16 °C, Beijing 28 °C" is caught without a single tag.

Where the answer carries no tag for the result a figure was bound to, Parley attaches it right after the
figure ("28 °C [1]"): one tag for a run of figures from the same result.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from agent.grounding.language import RESPECTIVELY, VERSUS
from agent.grounding.names import NameIndex, fold, has_cjk, is_currency_code
from agent.grounding.structure import clause_at
from agent.source import Source

_EMPHASIS = "*_`"
_DIGIT = re.compile(r"\d")
_CODE = re.compile(r"([A-Za-z]{1,4})[ -]?(\d{2,})")  # "LH 438", "CMD-7701", "W14"


class Names:
    """Where the answer names the results: each occurrence of a result's name, with the result."""

    def __init__(
        self,
        text: str,
        identities: Mapping[int, Sequence[str]],
        aliases: dict[str, list[str]],
        apparatus: Sequence[tuple[int, int]] = (),
    ) -> None:
        """`identities`: each result's names, by its number (`names.identities`); `apparatus`: spans that only
        say where facts come from (footnote lines, a list of sources), whose names say nothing a figure is about."""
        index = self._index = NameIndex(text)
        self._aliases = aliases
        self._apparatus = apparatus
        spans: list[tuple[int, int, int]] = []
        identifiers: set[tuple[int, int]] = set()
        for number, names in identities.items():
            for name in names:
                if is_currency_code(name):
                    continue  # "NOK 184,500": the unit of a figure, not what it is about
                named = aliases.get(fold(name), ()) if aliases else ()  # most questions give no name twice
                for form in (name, *named, *_shorter(name), *_respelled(name)):
                    found = index.spans(form)
                    if found:
                        kept = [(start, end) for start, end in found if not any(a <= start < b for a, b in apparatus)]
                        spans.extend((start, end, number) for start, end in kept)
                        if _DIGIT.search(form):
                            identifiers.update(kept)
        self._spans = sorted(spans)
        # "5.1.3", "Room 312", "LH 438": where digits name a thing, they are no figure of the answer.
        self.identifiers = sorted(identifiers)
        self._starts = [start for start, _, _ in self._spans]
        self.anywhere = frozenset(number for _, _, number in self._spans)
        # A sentence and its clauses are asked about again and again (its figures, the names it carries on, the
        # names a figure is given to): each span is read once per answer.
        self._within: dict[tuple[int, int], tuple[int, ...]] = {}

    def within(self, start: int, end: int) -> list[int]:
        """The results named inside `[start, end)`, in the order the text names them (each once). A name that
        several results share says less than one that tells them apart: "the webshop in Q1" is about Q1's
        result, not about every result of the webshop."""
        found = self._within.get((start, end))
        if found is None:
            found = self._within[(start, end)] = self._named_within(start, end)
        return list(found)

    def _named_within(self, start: int, end: int) -> tuple[int, ...]:
        at = bisect_left(self._starts, start)
        if at == len(self._spans) or self._spans[at][0] >= end:
            return ()  # most clauses name nothing
        if at + 1 == len(self._spans) or self._spans[at + 1][0] >= end:  # and most others one thing
            _, last, number = self._spans[at]
            return (number,) if last <= end else ()
        groups: dict[tuple[int, int], set[int]] = {}
        while at < len(self._spans) and self._spans[at][0] < end:
            first, last, number = self._spans[at]
            if last <= end:
                groups.setdefault((first, last), set()).add(number)
            at += 1
        if len(groups) > 1:
            sets = list(groups.values())
            groups = {span: named for span, named in groups.items() if not any(other < named for other in sets)}
        return tuple(dict.fromkeys(number for span in sorted(groups) for number in sorted(groups[span])))

    def spans_within(self, start: int, end: int) -> list[tuple[int, int, int]]:
        """The names inside `[start, end)`: (start, end, result number), in order."""
        at = bisect_left(self._starts, start)
        stop = bisect_left(self._starts, end)
        return [span for span in self._spans[at:stop] if span[1] <= end]

    def named(self, start: int, end: int, candidates: Collection[str]) -> set[str]:
        """Which of `candidates` (names of items of a result, `records`) the text names inside `[start, end)`."""
        return {
            name
            for name in candidates
            for form in (name, *self._aliases.get(fold(name), ()), *_respelled(name))
            for at, stop in self._index.spans(form)
            if start <= at and stop <= end and not any(a <= at < b for a, b in self._apparatus)
        }


def _shorter(name: str) -> tuple[str, ...]:
    """ "Fazenda Boa Esperança" is "Boa Esperança" in an answer, "Harbor Street Garage" "Harbor Street": a name of
    three words or more without its first or its last."""
    words = name.split()
    if len(words) < 3 or has_cjk(name):
        return ()
    return " ".join(words[1:]), " ".join(words[:-1])


@lru_cache(maxsize=4096)
def _respelled(name: str) -> tuple[str, ...]:
    """ "LH 438" is "LH438" or "LH-438" in an answer, "CMD-7701" "CMD 7701": a code of a few letters and digits, with
    or without what joins them."""
    code = _CODE.fullmatch(name)
    if code is None:
        return ()
    letters, digits = code.groups()
    return tuple(form for form in (letters + digits, f"{letters} {digits}", f"{letters}-{digits}") if form != name)


@dataclass(frozen=True)
class Pointer:
    """The results a figure's words point to, and how near they are: its clause, its sentence, or the sentence
    before (a subject carried over)."""

    numbers: frozenset[int]
    level: str  # "clause", "sentence", "carried", "" (nothing named)


NOWHERE = Pointer(frozenset(), "")


def pointers(
    names: Names,
    sentence: tuple[int, int],
    clauses: Sequence[tuple[int, int]],
    figures: Sequence[int],
    text: str,
    carried: tuple[int, ...],
) -> list[Pointer]:
    """What each figure of a sentence (by its position in `text`) points to: `carried`, the results the sentence
    before named, in its order."""
    in_sentence = names.within(*sentence)
    in_order = in_sentence or list(carried)
    if len(in_order) == len(figures) > 1 and RESPECTIVELY.search(text, *sentence):
        return [_pointer((number,), "clause") for number in in_order]  # "… respectively"
    if len(in_sentence) == len(figures) == 2 and _versus(names, text, sentence, figures):
        return [_pointer((number,), "clause") for number in in_sentence]  # "A … than B (74 % vs 32 %)"
    result: list[Pointer] = []
    for at in figures:
        clause = clause_at(clauses, at, sentence)
        named = names.within(*clause)
        if named:
            result.append(_pointer(tuple(named), "clause"))
        elif in_sentence:
            result.append(_pointer(tuple(in_sentence), "sentence"))
        elif carried:
            result.append(_pointer(carried, "carried"))
        else:
            result.append(NOWHERE)
    return result


@lru_cache(maxsize=1024)
def _pointer(numbers: tuple[int, ...], level: str) -> Pointer:
    """A pointer, made once for the same results and level (every figure of a sentence gets one)."""
    return Pointer(frozenset(numbers), level)


def _versus(names: Names, text: str, sentence: tuple[int, int], figures: Sequence[int]) -> bool:
    """Two figures after both names, set against each other ("74 % vs 32 %", "28 °C contre 16 °C"): they follow
    the names in order."""
    last_name = max(start for start, _, _ in names.spans_within(*sentence))
    first, second = figures
    return first > last_name and VERSUS.search(text, first, second) is not None


def choose(
    stating: Sequence[Source], pointer: Pointer, names: Names, tools: Callable[[frozenset[int]], Collection[str]]
) -> tuple[Source | None, Source | None]:
    """Of the results that state a figure, the one it is bound to — or None and the result it was taken from
    when the figure's words point elsewhere (a swapped fact). `tools`: the tools of some results (asked only when
    no result the figure's words point to states it)."""
    if not stating:
        return None, None
    if not pointer.numbers:
        return stating[0], None
    for source in stating:
        if source.number in pointer.numbers:
            return source, None
    pointed_tools = tools(pointer.numbers)
    for source in stating:
        # About nothing the answer names (a calculation, a lookup by key), it may back any figure — but not a
        # call of the same tool about another thing ("Beijing 30 °C" with the 30 of get_weather(深圳)).
        if source.number not in names.anywhere and source.tool not in pointed_tools:
            return source, None
    if pointer.level != "clause":  # "Shanghai is more humid (74 % vs 32 %)": a sentence may compare
        return stating[0], None
    return None, stating[0]


# --- attaching citations ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Attachment:
    """A citation Parley adds to the answer: `marker` inserted at `at` (a position in the answer)."""

    at: int
    marker: str


def attachment(text: str, end: int, number: int) -> Attachment:
    """The tag of result `number` right after a figure that ends at `end` (after its bold or code marks)."""
    at = end
    while at < len(text) and text[at] in _EMPHASIS:
        at += 1
    before = text[at - 1 : at]
    glued = not before or has_cjk(before) or before in "（【「）】」，。：；"
    return Attachment(at, f"[{number}]" if glued else f" [{number}]")


def attached(text: str, attachments: Sequence[Attachment]) -> str:
    """`text` with the attachments inserted (positions are the text's own)."""
    pieces: list[str] = []
    at = 0
    for item in sorted(attachments, key=lambda a: a.at):
        pieces += [text[at : item.at], item.marker]
        at = item.at
    pieces.append(text[at:])
    return "".join(pieces)
