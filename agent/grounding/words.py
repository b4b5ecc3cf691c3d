"""Words: numbers and fractions written as words are figures too — "twelve", "a dozen", "three quarters",
"half", "zwölf", "douze", "十二", "三分之二" — found with where they stand and checked like digits.

The numbers are parsed by maintained libraries: `text2num` for the European languages it knows (English,
French, Spanish, Portuguese, German, Dutch, Danish, Italian) and `cn2an` for Chinese numerals, which Japanese
writes the same way. What they leave out — fractions, "a dozen", "一半", and Korean numerals in Hangul (native
"여섯", "스물두", Sino-Korean "삼십"), which neither reads — comes from the language module.

The door is narrow where words are also something else: "one" and "two" (and "一", "两") are read only where
they count something against a whole ("two of the five services", "两个服务中"), or carry a unit; a Korean
numeral only before a counter ("여섯 명", "세 개": "네" alone is "yes", "이" is "this"); ordinals
("first", "第三") and dates ("十一月") are not quantities; and a scale word after digits ("1.5 million") belongs
to the digits.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from text_to_num import alpha2digit, find_numbers

from agent.grounding.figures import FRACTION_PRECISION, Approximation, Figure, word_figure
from agent.grounding.language import (
    CJK_COUNTERS,
    CJK_DATE_AFTER,
    CJK_HALF,
    DOZEN_WORDS,
    FRACTION_COMPOUNDS,
    FRACTION_WORDS,
    HALF_NOUNS,
    KOREAN_COUNTERS,
    KOREAN_SINO_DIGITS,
    KOREAN_SINO_PLACES,
    KOREAN_TENS,
    KOREAN_UNITS,
    OF_WORDS,
    ONE_WORDS,
    SCALE_WORDS,
    lowered_words,
)
from agent.grounding.units import UNITS, unit_after
from agent.plain import plain_text

MIN_ALONE = 3  # smaller numbers in words ("one", "two") are figures only where they count against a whole
_FRACTION_PRECISION = FRACTION_PRECISION
_ABOUT_FRACTION_PRECISION = Decimal("0.05")  # "about a third" is 30–35 %
_TOKEN = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*|\d+(?:[.,]\d+)*|[^\w\s]")
_LETTERS = re.compile(r"[A-Za-zÀ-ÿ]{3}")
_EXTRA = frozenset(word.casefold() for word in (*FRACTION_WORDS, *DOZEN_WORDS, *FRACTION_COMPOUNDS))
_WORD = re.compile(r"[^\W\d_]+")
_SCALES = {word.casefold(): power for word, power in SCALE_WORDS}
_NUMERALS = "零〇一二两兩三四五六七八九十百千万萬亿億"
_CJK_RUN = re.compile(
    rf"(?P<percent>百分之)?(?P<run>[{_NUMERALS}]+(?:点[零〇一二三四五六七八九]+[万萬亿億]?)?)"
    rf"(?:分[之の](?P<numerator>[{_NUMERALS}]+))?"
)
_SEGMENT = re.compile(r"[^.!?;\n。！？]+[.!?;\n。！？]*")
_ANY_NUMERAL = re.compile(f"[{_NUMERALS}]")
_CJK_SCALE_ONLY = re.compile(r"^[十百千万萬亿億]+$")
_HANGUL = re.compile("[\uac00-\ud7a3]")
_CJK_OR_HANGUL = re.compile(f"[{_NUMERALS}\uac00-\ud7a3]")
_KOREAN_NUMERAL = re.compile(
    rf"(?<![\uac00-\ud7a3])(?:(?P<tens>{'|'.join(KOREAN_TENS)})(?P<units>{'|'.join(KOREAN_UNITS)})?"
    rf"|(?P<unit>{'|'.join(KOREAN_UNITS)})|(?P<sino>[{''.join((*KOREAN_SINO_DIGITS, *KOREAN_SINO_PLACES))}]+))"
    rf" ?(?:{'|'.join(KOREAN_COUNTERS)})(?!째)"
)
_KOREAN_WHOLE = re.compile(r"(?:중|가운데)(?:에서|에)?\s*$")  # "다섯 명 중 두 명": a count against its whole


class _Token:
    """A word as `text2num.find_numbers` reads it (its Token protocol)."""

    __slots__ = ("end", "start", "word")

    def __init__(self, word: str, start: int, end: int) -> None:
        self.word, self.start, self.end = word, start, end

    def text(self) -> str:
        return self.word

    def nt_separated(self, previous: _Token) -> bool:
        return False

    def not_a_number_part(self) -> bool:
        return self.word[:1].isdigit()


@dataclass(frozen=True)
class _Number:
    value: Decimal
    first: int  # token indices, end exclusive
    last: int
    ordinal: bool


def read_number_words(text: str, languages: Sequence[str], taken: Sequence[tuple[int, int]] = ()) -> list[Figure]:
    """Every number or fraction written in words in `text`, as figures, in order.

    `languages`: text2num's codes to read Latin-script words in (`language.number_word_languages`); `taken`:
    spans already read as figures in digits (their scale words are theirs)."""
    figures: list[Figure] = []
    text = plain_text(text)  # the parsers take only valid UTF-8; one character for one keeps positions
    if _LETTERS.search(text):
        pieces = set(text.split())
        extra = _has_extra(text, pieces)  # a fraction or a dozen somewhere
        for language in languages:
            starting = _starting(pieces, language)
            if not extra and (
                not starting or (_in_context(starting, language) and alpha2digit(text, language) == text)
            ):
                continue  # no number in words in this language: most answers write digits
            # Only the sentences the parser changes (or that name a fraction or a dozen) are read word by word.
            marks = _marks(starting)
            for segment in _SEGMENT.finditer(text):
                part = segment.group(0)
                if (_may_start(part, marks, language) and alpha2digit(part, language) != part) or (
                    extra and _has_extra(part)
                ):
                    figures += _latin(text, segment.start(), segment.end(), language, taken)
            if figures:
                break
    # One scan for both scripts: most answers have neither.
    found = _CJK_OR_HANGUL.search(text)
    if found is not None:
        if _ANY_NUMERAL.search(text, found.start()):
            figures += _cjk(text)
        if _HANGUL.search(text, found.start()):
            figures += _korean(text)
    return sorted(figures, key=lambda f: f.start)


# --- Latin scripts ---------------------------------------------------------------------------------------


def _latin(text: str, begin: int, finish: int, language: str, taken: Sequence[tuple[int, int]]) -> list[Figure]:
    """The numbers in words in `text[begin:finish]` (positions are the text's)."""
    tokens = [_Token(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text, begin, finish)]
    numbers = [
        _Number(_decimal(o.value), o.start, o.end, bool(o.is_ordinal))
        for o in find_numbers(tokens, language, 0.0)
        if not _overlaps(tokens[o.start].start, tokens[o.end - 1].end, taken)
    ]
    by_end = {number.last: number for number in numbers if not number.ordinal}
    ordinals = {number.first: number for number in numbers if number.ordinal and number.value >= 3}
    starts = {tokens[number.first].start for number in numbers}
    used: set[int] = set()  # first tokens of numbers a fraction or a dozen took
    figures: list[Figure] = []
    # Fractions and dozens are rare: only the tokens that can be one are looked at.
    extra = {m.start() for m in _WORD.finditer(text, begin, finish) if m.group(0).casefold() in _EXTRA}
    extra_tokens = (i for i, token in enumerate(tokens) if token.start in extra) if extra else ()
    for at in sorted({*ordinals, *extra_tokens}):
        token = tokens[at]
        word = token.word.casefold()
        ordinal = ordinals.get(at)
        if word in FRACTION_COMPOUNDS:
            figures.append(
                _fraction(
                    text, token.start, token.end, Decimal(FRACTION_COMPOUNDS[word][0]), FRACTION_COMPOUNDS[word][1]
                )
            )
            continue
        denominator = FRACTION_WORDS.get(word) or (int(ordinal.value) if ordinal else None)
        multiple = DOZEN_WORDS.get(word) if not word.endswith("s") else None
        if denominator is None and multiple is None:
            continue
        before = by_end.get(at)
        if before is not None:
            numerator, start = before.value, tokens[before.first].start
            used.add(before.first)
        elif at > 0 and tokens[at - 1].word.casefold() in ONE_WORDS:
            numerator, start = Decimal(1), tokens[at - 1].start
        elif denominator == 2 and multiple is None and word in HALF_NOUNS:  # "half of them", "die Hälfte"
            numerator, start = Decimal(1), token.start
        else:
            continue
        if multiple is not None:
            figures.append(
                word_figure(text, start, token.end, numerator * multiple, Decimal(1), text[start : token.end])
            )
        else:
            figures.append(_fraction(text, start, token.end, numerator, denominator or 1))
    for number in numbers:
        if number.ordinal or number.first in used or number.value == 0:
            continue
        start, end = tokens[number.first].start, tokens[number.last - 1].end
        alone = number.value < MIN_ALONE and number.last - number.first == 1
        if alone and not _counts(text, end, starts):
            continue
        last = tokens[number.last - 1].word.casefold()
        precision = Decimal(10) ** _SCALES.get(last, 0)
        figures.append(word_figure(text, start, end, number.value, precision, text[start:end]))
    return figures


def _has_extra(text: str, pieces: set[str] | None = None) -> bool:
    """Does `text` name a fraction or a dozen (one of its letter words, lower-cased, is one)? `pieces`: its
    pieces between spaces, when known."""
    # Such a word, lower-cased, stands within one of the text's lower-cased pieces between spaces: only a text
    # with a piece that holds one is read word by word. Pieces repeat from answer to answer (their figures are
    # masked): each is looked at once. (Lower-casing makes no space, nor takes one away.)
    pieces = set(lowered_words(pieces)) if pieces is not None else set(text.lower().split())
    if _PLAIN_PIECES.issuperset(pieces):
        return False
    holding = False
    for piece in pieces - _PLAIN_PIECES:
        if any(word in piece for word in _EXTRA):
            holding = True
        else:
            _remember(_PLAIN_PIECES, piece)
    return holding and not _EXTRA.isdisjoint(lowered_words(_WORD.findall(text)))


# --- what text2num can read ------------------------------------------------------------------------------
# `alpha2digit` changes a text only where one of its words starts a number: the parser is in its first state
# at every word until one is read as a number (a word it does not read leaves that state as it was), and a word
# it reads there is read alone too. So a text none of whose words `find_numbers` reads alone is left as it is.
# Its words are as text2num splits them: a letter or digit, then letters, digits, "-" and "'"; anything else,
# spaces first, separates them. So the text's pieces between spaces are judged, each once (per language): a
# piece holds a word that may start a number, or none.

_MAX_REMEMBERED = 50_000
_PLAIN_PIECES: set[str] = set()  # lower-cased pieces that hold no fraction or dozen word
_SILENT: dict[str, set[str]] = {}  # per language: pieces that hold no word that starts a number ("revenue")
_STARTING: dict[str, set[str]] = {}  # per language: pieces that hold one ("twenty", "(drei", "forty-two.")
_PARSER_WORD = re.compile(r"[^\W_](?:[^\W_]|[-'])*")  # text2num's word, where Python and Rust class alike
# Characters Python and Rust may class otherwise (a letter or digit for one, a separator for the other):
# combining marks and circled letters (letters for Rust, Unicode's Other_Alphabetic) and unassigned ones.
_UNSURE_CATEGORIES = frozenset(("Mn", "Mc", "Me", "Cn"))
_CONTEXTUAL = {"en": "o", "fr": "neuf"}  # words text2num reads by their neighbours (its `basic_annotate`)


class _Word:
    """A word alone, as `find_numbers` reads it (its Token protocol): never set apart."""

    __slots__ = ("word",)

    def __init__(self, word: str) -> None:
        self.word = word

    def text(self) -> str:
        return self.word

    def nt_separated(self, previous: _Word) -> bool:
        return False

    def not_a_number_part(self) -> bool:
        return False


def _starting(pieces: set[str], language: str) -> set[str]:
    """Those of `pieces` (of a text, between its spaces) that hold a word that may start a number."""
    silent = _SILENT.setdefault(language, set())
    if silent.issuperset(pieces):
        return set()
    starting = _STARTING.setdefault(language, set())
    found = pieces & starting
    for piece in pieces - silent - starting:
        if _unsure(piece) or any(find_numbers([_Word(word)], language, 0.0) for word in _PARSER_WORD.findall(piece)):
            _remember(starting, piece)
            found.add(piece)
        else:
            _remember(silent, piece)
    return found


def _marks(starting: set[str]) -> set[str] | None:
    """The words of these pieces, one of which a sentence holds if it holds a word that starts a number (a word
    stands in one sentence, and its piece of the whole text holds it too); None when a piece may be split
    otherwise."""
    if any(_unsure(piece) for piece in starting):
        return None
    return {word for piece in starting for word in _PARSER_WORD.findall(piece)}


def _may_start(part: str, marks: set[str] | None, language: str) -> bool:
    """Does `part`, a sentence of a text whose starting pieces hold `marks`, hold a word that may start one?"""
    if marks is not None and not any(mark in part for mark in marks):
        return False
    return bool(_starting(set(part.split()), language))


def _in_context(starting: set[str], language: str) -> bool:
    """Does one of these pieces hold a word text2num reads by the words around it, even across sentences?

    English "o" is a zero only next to a number ("four o five"); French "neuf" is "new" after "un", "le", "du"
    ("un logement neuf"). Without them, the parser reads each sentence of a text as it reads it alone, and a
    number it writes in digits there it writes in the whole text too (next to a number of the sentence before,
    a small one may be written where alone it is not): a text it leaves as it is has no sentence it changes, and
    asking the sentences alone tells the same. With them, the whole text is asked first."""
    word = _CONTEXTUAL.get(language)
    return word is not None and any(
        not piece.isascii() or any(found.lower() == word for found in _PARSER_WORD.findall(piece)) for piece in starting
    )


def _unsure(piece: str) -> bool:
    return not piece.isascii() and any(
        unicodedata.category(c) in _UNSURE_CATEGORIES
        or (unicodedata.category(c) == "So" and "LETTER" in unicodedata.name(c, ""))
        for c in piece
    )


def _remember(known: set[str], piece: str) -> None:
    if len(known) >= _MAX_REMEMBERED:
        known.clear()
    known.add(piece)


def _fraction(text: str, start: int, end: int, numerator: Decimal, denominator: int) -> Figure:
    figure = word_figure(text, start, end, numerator / denominator, _FRACTION_PRECISION, text[start:end])
    if figure.approximation is Approximation.EXACT:
        return figure
    readings = tuple(r._replace(precision=_ABOUT_FRACTION_PRECISION) for r in figure.readings)
    return figure._replace(readings=readings)


def _counts(text: str, end: int, numbers: set[int]) -> bool:
    """A small number counts against a whole ("two of the five", "zwei von 5") or carries a unit ("two hours").

    `numbers`: where the text's numbers in words start."""
    of = OF_WORDS.match(text, end)
    if of is not None and (text[of.end() : of.end() + 1].isdigit() or of.end() in numbers):
        return True
    unit, _ = unit_after(text[end : end + 24])
    return unit is not None


def _overlaps(start: int, end: int, taken: Sequence[tuple[int, int]]) -> bool:
    return any(start < stop and begin < end for begin, stop in taken)


def _decimal(value: float) -> Decimal:
    return Decimal(int(value)) if value == int(value) else Decimal(repr(value))


# --- Chinese and Japanese numerals ---------------------------------------------------------------------------


def _cjk(text: str) -> list[Figure]:
    figures: list[Figure] = []
    for half in CJK_HALF:
        for match in re.finditer(re.escape(half), text):
            figures.append(_fraction(text, match.start(), match.end(), Decimal(1), 2))
    for match in _CJK_RUN.finditer(text):
        figure = _cjk_figure(text, match)
        if figure is not None and not _overlaps(figure.start, figure.end, [(f.start, f.end) for f in figures]):
            figures.append(figure)
    return figures


def _cjk_figure(text: str, match: re.Match[str]) -> Figure | None:
    run, start, end = match.group("run"), match.start(), match.end()
    if match.group("numerator") is not None:  # "三分之二", "三分の二": the denominator comes first
        denominator, numerator = _cn(run), _cn(match.group("numerator"))
        if denominator in (None, 0) or numerator is None:
            return None
        return _fraction(text, start, end, numerator, int(denominator))
    value = _cn(run)
    if value is None or value == 0:
        return None
    if match.group("percent"):  # "百分之七十五" is 75 %
        return word_figure(text, start, end, value, Decimal(1), match.group(0), unit=UNITS["%"])
    before, after = text[start - 1 : start], text[end : end + 1]
    if before == "第" or (after and after in CJK_DATE_AFTER):
        return None  # "第三" is an ordinal; "十一月", "三日", "十点" are dates and times
    counted = bool(after) and after in CJK_COUNTERS
    unit, _ = unit_after(text[end : end + 8])
    if (len(run) == 1 or _CJK_SCALE_ONLY.match(run)) and not (counted or unit is not None):
        return None  # "一些", "统一", "三星", "千万": words, not quantities
    if value < MIN_ALONE and not (unit is not None or _cjk_counts(text, end)):
        return None
    return word_figure(text, start, end, value, _cjk_precision(run), run)


def _cjk_counts(text: str, end: int) -> bool:
    """ "两个服务中", "两家之中": a small number counted against a whole."""
    return bool(re.match(r"[^\s，。、]{0,4}?(?:中|之中|里|當中|当中|のうち)", text[end : end + 8]))


def _cn(numeral: str) -> Decimal | None:
    # Imported on first use: cn2an takes a fifth of a second to import, which every `parley` command would pay.
    import cn2an

    scale = Decimal(1)
    if "点" in numeral and numeral[-1] in "万萬亿億":  # "五点六四亿": cn2an reads the decimal, the scale is ours
        scale = Decimal(10) ** (4 if numeral[-1] in "万萬" else 8)
        numeral = numeral[:-1]
    try:
        return Decimal(str(cn2an.cn2an(numeral, "smart"))) * scale
    except (ValueError, KeyError, IndexError, InvalidOperation):
        return None


def _cjk_precision(run: str) -> Decimal:
    """The unit of the last place a numeral writes: "五亿六千四百万" is counted in 万."""
    if "点" in run:
        decimals = len(run.split("点", 1)[1].rstrip("万萬亿億"))
        scale = 4 if run[-1] in "万萬" else 8 if run[-1] in "亿億" else 0
        return Decimal(10) ** (scale - decimals)
    places = {"万": 4, "萬": 4, "亿": 8, "億": 8}  # "三百" is 300 exactly; "564万" is counted in 万
    return Decimal(10) ** places.get(run[-1], 0)


# --- Korean numerals -----------------------------------------------------------------------------------------


def _korean(text: str) -> list[Figure]:
    """ "여섯 명", "세 개", "스물두 곳", "삼십 명": a Korean numeral in words before a counter."""
    figures: list[Figure] = []
    for match in _KOREAN_NUMERAL.finditer(text):
        if match.group("sino") is not None:
            value = _sino_korean(match.group("sino"))
        else:
            tens = KOREAN_TENS.get(match.group("tens") or "", 0)
            value = tens + KOREAN_UNITS.get(match.group("units") or match.group("unit") or "", 0)
        start, end = match.span()
        if not value or (value < MIN_ALONE and not _KOREAN_WHOLE.search(text, max(0, start - 8), start)):
            continue
        figures.append(word_figure(text, start, end, Decimal(value), Decimal(1), text[start:end]))
    return figures


def _sino_korean(numeral: str) -> int | None:
    """ "이십오" is 25, "삼백" 300; None for what is no numeral ("이일")."""
    total, digit = 0, None
    for syllable in numeral:
        place = KOREAN_SINO_PLACES.get(syllable)
        if place is None:
            if digit is not None:
                return None
            digit = KOREAN_SINO_DIGITS[syllable]
        else:
            total += (digit or 1) * place
            digit = None
    return total + (digit or 0)
