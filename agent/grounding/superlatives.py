"""Superlatives: where an answer says a figure is the largest or smallest of its kind, and which figure.

"The slowest endpoint is /checkout at 912 ms, then /search (412 ms)": "slowest" speaks of 912 alone — the
first figure after it in its statement, or, with none after it, the last one before it ("912 ms is the
slowest"). Each word says a direction: "highest", "most", "warmest" the largest; "lowest", "coldest",
"cheapest" the smallest; "slowest" and "fastest" depend on what is measured (the slowest latency is the
largest, the slowest throughput the smallest); "best" and "worst" either. Comparatives ("más cálida que",
"più calda di", "plus chaud que") compare two things and are no superlative.

Word lists for every language the checker reads are here, with the rest of the language knowledge in
`language`.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence
from contextlib import suppress
from enum import StrEnum
from functools import lru_cache
from operator import itemgetter

from agent.grounding.language import letter_words
from agent.grounding.units import Family, Unit


class Direction(StrEnum):
    LARGEST = "largest"
    SMALLEST = "smallest"
    EITHER = "largest or smallest"
    SLOW = "slowest"  # the largest duration, the smallest rate
    FAST = "fastest"


_L, _S, _E, _SLOW, _FAST = Direction.LARGEST, Direction.SMALLEST, Direction.EITHER, Direction.SLOW, Direction.FAST

_WORDS: dict[str, Direction] = {
    **dict.fromkeys(
        (
            *("highest", "largest", "biggest", "maximum", "max", "peak", "greatest", "busiest", "warmest"),
            *("hottest", "dearest", "mayor", "maior", "massimo", "massima", "máximo", "máxima", "maximal"),
            *("wettest", "rainiest", "snowiest", "windiest", "fullest", "vollsten", "vollste", "volste", "volsten"),
        ),
        _L,
    ),
    **dict.fromkeys(
        (
            *("lowest", "smallest", "fewest", "minimum", "min", "quietest", "coldest", "coolest", "cheapest"),
            *("menor", "minimo", "minima", "mínimo", "mínima", "minimal", "driest", "emptiest", "leersten", "leerste"),
        ),
        _S,
    ),
    "slowest": _SLOW,
    "fastest": _FAST,
    "quickest": _FAST,
    **dict.fromkeys(("best", "worst", "pire", "mejor", "peor", "migliore", "peggiore", "melhor", "pior"), _E),
}
# Inflected words, by how they start: "höchste(n)", "hoogste", "kälteste", "größten".
_STEMS: tuple[tuple[str, Direction], ...] = (
    *(("höchst", _L), ("größt", _L), ("grösst", _L), ("meist", _L), ("wärmst", _L), ("heißest", _L)),
    *(("teuerst", _L), ("hoogst", _L), ("grootst", _L), ("meest", _L), ("warmst", _L), ("heetst", _L)),
    *(("duurst", _L), ("niedrigst", _S), ("kleinst", _S), ("wenigst", _S), ("kältest", _S), ("günstigst", _S)),
    *(("billigst", _S), ("laagst", _S), ("minst", _S), ("koudst", _S), ("goedkoopst", _S), ("langsamst", _SLOW)),
    *(("traagst", _SLOW), ("langzaamst", _SLOW), ("schnellst", _FAST), ("snelst", _FAST), ("best", _E)),
    *(("schlechtest", _E), ("slechtst", _E), ("meilleur", _E), ("stärkst", _L), ("schwächst", _S)),
    *(("nassest", _L), ("regenreichst", _L), ("trockenst", _S), ("natst", _L), ("droogst", _S)),
    *(("ausgelastetst", _L),),
)
# German and Dutch join them to a noun: "die umsatzstärkste Filiale", "der kostengünstigste Tarif".
_COMPOUND_ENDS = ("ste", "sten", "ster", "stes", "stem")
_UNIT_TOO = frozenset(("min", "max"))
_UNIT_BEFORE = re.compile(r"\d\s?$")
_STEM_HEADS = frozenset(stem[:3] for stem, _ in _STEMS)
# "le plus chaud", "más alta", "più lento", "mais rápido", "the most": a word, then how the next one starts.
_ADJECTIVES: tuple[tuple[str, Direction], ...] = (
    *(("alt", _L), ("haut", _L), ("élev", _L), ("elev", _L), ("grand", _L), ("chaud", _L), ("calient", _L)),
    *(("cálid", _L), ("calur", _L), ("cald", _L), ("quent", _L), ("cher", _L), ("car", _L), ("lourd", _L)),
    *(("bas", _S), ("baj", _S), ("baix", _S), ("faibl", _S), ("petit", _S), ("pequeñ", _S), ("piccol", _S)),
    *(("froid", _S), ("frí", _S), ("fredd", _S), ("fri", _S), ("barat", _S), ("economic", _S), ("lent", _SLOW)),
    *(("rapid", _FAST), ("rápid", _FAST), ("veloc", _FAST), ("pluvi", _L), ("lluvios", _L), ("piovos", _L)),
    *(("chuvos", _L), ("sec", _S), ("sèch", _S), ("seco", _S), ("secc", _S), ("rempl", _L), ("plein", _L)),
    *(("llen", _L), ("ocupad", _L), ("pien", _L), ("vací", _S), ("vide", _S)),
)
_PAIRS: dict[str, tuple[tuple[str, Direction], ...]] = {
    "the": (("most", _L), ("least", _S)),
    "plus": (*_ADJECTIVES, ("de", _L)),
    "moins": (("cher", _S), ("de", _S)),
    "más": _ADJECTIVES,
    "più": _ADJECTIVES,
    "mais": _ADJECTIVES,
}
_ARTICLED = frozenset(("plus", "moins"))  # "le plus chaud", never "plus de 500" (more than 500)
_ARTICLES = frozenset(("le", "la", "les", "l"))
# "más cálida que Madrid", "più calda di Milano", "warmer than": a comparison, not a superlative.
_COMPARING = frozenset(("que", "than", "di", "do", "dan", "als"))
# 最高 / 最低 …, and 最も・一番・가장・제일 followed by what they make extreme.
_CJK_WORDS: dict[str, Direction] = {
    **dict.fromkeys(
        ("最高", "最大", "最多", "最长", "最長", "最贵", "最貴", "最热", "最暑", "最暖", "最满", "最滿"), _L
    ),
    **dict.fromkeys(("最低", "最小", "最少", "最短", "最冷", "最寒", "最便宜", "最安"), _S),
    "最慢": _SLOW,
    "最快": _FAST,
    "最好": _E,
    "最差": _E,
}
_CJK_LEADS = ("最も", "一番", "가장", "제일")
_CJK_NEXT: tuple[tuple[str, Direction], ...] = (
    *(("高", _L), ("多", _L), ("大", _L), ("暑", _L), ("暖", _L), ("熱", _L), ("高価", _L), ("低", _S), ("少", _S)),
    *(("小", _S), ("寒", _S), ("冷", _S), ("安", _S), ("遅", _SLOW), ("速", _FAST), ("早", _FAST), ("높", _L)),
    *(("混", _L), ("埋ま", _L), ("満", _L)),
    *(("많", _L), ("큰", _L), ("크", _L), ("따뜻", _L), ("더운", _L), ("덥", _L), ("비싼", _L), ("낮", _S)),
    *(("적", _S), ("작", _S), ("추운", _S), ("춥", _S), ("저렴", _S), ("싼", _S), ("느", _SLOW), ("빠", _FAST)),
)

_CJK_FIRSTS = frozenset(word[0] for word in (*_CJK_WORDS, *_CJK_LEADS))  # 最, 一, 가, 제


def superlatives(text: str) -> list[tuple[int, int, Direction]]:
    """Where `text` says a superlative: (start, end, direction), in order."""
    found: list[tuple[int, int, Direction]] = []
    words = letter_words(text)
    said = list(map(itemgetter(1), words))
    for at in _openings(said):
        start, word = words[at]
        following = words[at + 1][1] if at + 1 < len(words) else ""
        direction = _direction(word)
        if direction is not None and word in _UNIT_TOO and _UNIT_BEFORE.search(text, max(0, start - 2), start):
            continue  # "12 min", "3 max": a unit after a figure
        end = start + len(word)
        if direction is None and word in _PAIRS and following:
            if word in _ARTICLED and (at == 0 or words[at - 1][1] not in _ARTICLES):
                continue
            direction = next((d for stem, d in _PAIRS[word] if following.startswith(stem)), None)
            if direction is not None:
                at += 1
                end = words[at][0] + len(following)
                following = words[at + 1][1] if at + 1 < len(words) else ""
        if direction is not None and following not in _COMPARING:
            found.append((start, end, direction))
    if not any(first in text for first in _CJK_FIRSTS):
        return sorted(found)  # no word below is in it: a few characters looked for cost less than a CJK scan
    for word, direction in _CJK_WORDS.items():
        found.extend((at, at + len(word), direction) for at in _all(text, word))
    for lead in _CJK_LEADS:
        for at in _all(text, lead):
            rest = text[at + len(lead) : at + len(lead) + 4].lstrip()
            direction = next((d for head, d in _CJK_NEXT if rest.startswith(head)), _E)
            found.append((at, at + len(lead), direction))
    return sorted(found)


def _openings(said: list[str]) -> list[int]:
    """Where the words said (lower-cased, in order) may open a superlative: a word with a direction, or the
    first of a pair ("the most", "le plus")."""
    opening = []
    for word in set(said) - _QUIET:  # each distinct word once; most are known to open none
        if _direction(word) is not None or word in _PAIRS:
            opening.append(word)
        else:
            if len(_QUIET) >= _MAX_QUIET:
                _QUIET.clear()
            _QUIET.add(word)
    return sorted(at for word in opening for at in _places(said, word))


def _places(said: list[str], word: str) -> Iterator[int]:
    at = -1
    with suppress(ValueError):
        while True:
            at = said.index(word, at + 1)
            yield at


_QUIET: set[str] = set()  # words that open no superlative ("revenue", "orders")
_MAX_QUIET = 50_000


@lru_cache(maxsize=4096)
def _direction(word: str) -> Direction | None:
    """The direction a word (lower-cased) says by itself: "highest", "höchsten", "umsatzstärkste" — or None."""
    direction = _WORDS.get(word)
    if direction is None and word[:3] in _STEM_HEADS:
        direction = next((d for stem, d in _STEMS if word.startswith(stem)), None)
    if direction is None and len(word) > 9 and word.endswith(_COMPOUND_ENDS):
        direction = next((d for stem, d in _STEMS if len(stem) > 5 and stem in word), None)
    return direction


def governed(
    text: str, sentences: Sequence[tuple[int, int]], figures: Sequence[tuple[int, int]]
) -> dict[int, Direction]:
    """The figures (by where they start) a superlative speaks of, with its direction. `sentences` and
    `figures` are (start, end) spans in order; a statement ends at a semicolon."""
    found: dict[int, Direction] = {}
    words = superlatives(text)
    if not words:
        return found
    sentence_starts = [start for start, _ in sentences]
    figure_starts = [start for start, _ in figures]
    for start, end, direction in words:
        index = bisect.bisect_right(sentence_starts, start) - 1
        if index < 0:
            continue
        first, last = sentences[index]
        begin = max(first, *(text.rfind(mark, first, start) + 1 for mark in ";；"))
        stops = [at for mark in ";；" if (at := text.find(mark, end, last)) >= 0]
        stop = min(stops, default=last)
        after = bisect.bisect_left(figure_starts, end)
        if after > 0 and figure_starts[after - 1] >= begin and _PARTICLE.fullmatch(text, figures[after - 1][1], start):
            found.setdefault(figure_starts[after - 1], direction)  # "150ms로 가장 느리고": Korean says it after
        elif after < len(figures) and figure_starts[after] < stop:
            found.setdefault(figure_starts[after], direction)
        elif after > 0 and figure_starts[after - 1] >= begin:
            found.setdefault(figure_starts[after - 1], direction)
    return found


# What joins a figure to the superlative after it in Korean and Japanese: "150ms로 가장", "115msで最も".
_PARTICLE = re.compile(r"\s*(?:으로|로|로서|이며|이고|で|と|が|の|)\s*")


def resolved(direction: Direction, unit: Unit | None, key: str) -> Direction:
    """ "Slowest" and "fastest" as largest or smallest: of a duration (latency), of a rate (throughput)."""
    if direction not in (Direction.SLOW, Direction.FAST):
        return direction
    rate = any(part in key.casefold() for part in ("per_s", "rps", "qps", "throughput", "per_sec", "speed", "mbps"))
    if (unit is not None and unit.family is Family.DURATION) or (unit is None and _duration_key(key) and not rate):
        return Direction.LARGEST if direction is Direction.SLOW else Direction.SMALLEST
    if rate:
        return Direction.SMALLEST if direction is Direction.SLOW else Direction.LARGEST
    return Direction.EITHER


def _duration_key(key: str) -> bool:
    folded = key.casefold()
    return folded.endswith(("_ms", "_s", "_sec", "_seconds", "_min", "_minutes", "latency")) or "latency" in folded


def _all(text: str, word: str) -> list[int]:
    found: list[int] = []
    at = text.find(word)
    while at >= 0:
        found.append(at)
        at = text.find(word, at + 1)
    return found
