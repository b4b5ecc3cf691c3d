"""Entities: a name that carries a figure is a fact too.

"Orion Labs spent 564 million USD" is wrong when every result is about Zephyr Labs, however right 564 is. A
clause that gives a grounded figure to a person, company or product named nowhere in the question, the calls
or the results — nor in another script (`names`) — makes a wrong-entity claim.

What a name looks like is decided narrowly, so that prose is never taken for one: in Latin scripts, a run of
capitalised words that is not a sentence's opening word or a common word ("Overall", "Both", "Der"), or that
ends as organisations do ("Orion Labs", "Globex GmbH"); in German, where every noun is capitalised, only the
latter. In Chinese, Japanese and Korean, where names have no capitals, a name its mark tells (`cjk_names`: a
company's ending, a person's title or honorific, "东海联合保险", "王思远一个人", "佐藤さん", "김도윤 님") or a name one
character away from a name the results give ("银河科技" for "星河科技").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from functools import cache, cached_property, lru_cache

from agent.grounding.cjk_names import CjkName, begins_name, cjk_names, judged_by
from agent.grounding.language import CJK_ORGANISATION_SUFFIXES, NOT_NAMES, ORGANISATION_SUFFIXES, UNIT_WORDS
from agent.grounding.names import NamedText, has_cjk

_LATIN = r"[A-Za-zÀ-ÖØ-öø-ÿ0-9&'’.-]"  # a name's letters in Latin scripts (a CJK word after it is not its part)
# Its capital first, then what may not stand before it (looked at behind both): see `openings`.
_CAPITALISED = re.compile(
    rf"[A-ZÀ-ÖØ-Þ](?<![\w&'’.-].){_LATIN}*(?:[ \t]+(?:[A-ZÀ-ÖØ-Þ&]{_LATIN}*|of|de|von|van|der|la|le|du))*"
    rf"(?:[ \t]+[A-ZÀ-ÖØ-Þ]{_LATIN}*)?"
)
_ELIDED = re.compile(r"^(?:[LlDdJjSsNnCcMmTt]|[Dd]ell|[Aa]ll|[Nn]ell|[Ss]ull|[Dd]all|[Qq]u|[Ll]orsqu)['’](?=\w)")
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]{3,12}")
_OPENING = re.compile(r"^[\s\-*+>#•·\d.)、:：]*$")  # what may stand before a sentence's first word
_LABEL_END = re.compile(r"[*_]*\s*[:：]")
MIN_CJK_NAME = 3  # two-character names ("上海", "北京") are one character from too many words


class Known:
    """Everything the question, the calls and the results name, and the CJK names among them — each made on
    first need: most answers give no name that must be looked up, and only an answer in CJK asks for the CJK
    names."""

    def __init__(self, question: str, texts: Callable[[], Sequence[str]], names: Callable[[], Sequence[str]]) -> None:
        self._question = question
        self._texts = texts
        self._names = names

    @cached_property
    def cjk_names(self) -> tuple[str, ...]:
        return tuple(
            dict.fromkeys(
                name
                for name in self._names()
                if len(name) >= MIN_CJK_NAME and not name[0].isascii() and _CJK_RUN.fullmatch(name)
            )
        )

    @cached_property
    def text(self) -> NamedText:
        return NamedText("\n".join([self._question, *self._texts()]))

    @cached_property
    def said(self) -> str:
        """What the calls and results say (where names come from: a question's words are prose)."""
        return "\n".join(self._texts())

    def knows(self, name: CjkName) -> bool:
        """Is a CJK name named: one of its readings anywhere, one of its tails where a name begins? (Taken as
        named where no call or result writes its script and no transliteration can tell.)"""
        text = self.text
        return (
            any(text.names(reading) for reading in name.readings)
            or any(begins_name(text.folded, tail) for tail in name.tails)
            or not judged_by(name, self.said)
        )


def known_names(question: str, texts: Callable[[], Sequence[str]], names: Callable[[], Sequence[str]]) -> Known:
    """`texts`: the calls' and results' text; `names`: the names the results are about (the only CJK names:
    a question's CJK text is prose, not a list of names) — each asked for only when needed."""
    return Known(question, texts, names)


class UnknownNames:
    """The names in one answer that nothing the run saw names, asked span by span. The spans of a sentence's
    figures overlap (a figure's clause, and the clause before it), so each capitalised run is judged once."""

    def __init__(self, text: str, known: Known, *, german: bool) -> None:
        self._text = text
        self._known = known
        self._german = german
        self._judged: dict[tuple[int, str, int], tuple[int, int, str] | None] = {}
        self._cjk = has_cjk(text)  # no clause of a text without CJK has a CJK name to miss

    def within(self, start: int, end: int, sentence: int = 0) -> Iterator[tuple[int, int, str]]:
        """The unknown names in `text[start:end]` (a clause of the sentence starting at `sentence`):
        (start, end, name)."""
        text = self._text
        clause = text[start:end]
        for match in _CAPITALISED.finditer(clause):
            key = (start + match.start(), match.group(0), sentence)
            if key not in self._judged:
                self._judged[key] = self._judge(key[0], key[1], sentence)
            found = self._judged[key]
            if found is not None:
                yield found
        if self._cjk and has_cjk(clause):
            for run_start, name in _near_misses(clause, self._known):
                yield start + run_start, start + run_start + len(name), name
            for marked in cjk_names(clause):  # "东海联合保险", "王思远一个人", "佐藤さん"
                if not self._known.knows(marked):
                    yield start + marked.start, start + marked.end, marked.name

    def _judge(self, begin: int, words: str, sentence: int) -> tuple[int, int, str] | None:
        """The name a run of capitalised words at `begin` gives, if it is one nothing the run saw names."""
        name = _name_in(words, german=self._german)
        if not name:
            return None
        at = begin + words.find(name)
        opening = " " not in name and _opens(self._text[sentence:at])
        if opening or _labels(self._text, at + len(name), sentence, at):
            return None  # "Revenue grew …": a sentence's first word is capitalised whatever it is
        return None if _known(name, self._known) else (at, at + len(name), name)


@lru_cache(maxsize=4096)
def _name_in(words: str, *, german: bool) -> str:
    """The name a run of capitalised words gives if it looks like one, else "": judged once for every answer
    that writes the run (a run's words alone say it)."""
    name = _trimmed(words)
    return name if name and _may_be_name(name, german=german) else ""


def _trimmed(words: str) -> str:
    """The name in a run of capitalised words: without the common words that open it or possessives."""
    parts = words.split()
    while parts and parts[0].casefold().strip(".,:;") in NOT_NAMES:
        parts.pop(0)
    while parts and parts[-1].casefold() in ("of", "de", "von", "van", "der", "la", "le", "du"):
        parts.pop()
    name = " ".join(parts)
    if "'" in name or "’" in name:
        name = _ELIDED.sub("", name)  # "L'Hotel Navigli", "dell'Azienda": the article is no part of it
    if name[:1].islower():
        return ""  # "L'équipe": a common noun after its article
    name = name.rstrip(".,:;!?")  # "half of Denver's."
    for suffix in ("'s", "’s", "s'", "s’"):
        if name.endswith(suffix) and len(name) > len(suffix) + 1:
            name = name[: -len(suffix) + (1 if suffix.startswith("s") else 0)]
    return name.strip(".,:;'’-")


def _may_be_name(name: str, *, german: bool) -> bool:
    """Does it look like a name (a sentence's opening word aside)?"""
    words = name.split()
    if len(words) > 1 and words[-1].casefold() in ORGANISATION_SUFFIXES:
        return True  # "Orion Labs", "Globex GmbH"
    if any(ch.isdigit() for ch in name) or len(name) < 2 or name.casefold() in _common():
        return False
    if german:
        return False  # every German noun is capitalised: only an organisation's form tells a name
    return all(word.casefold() not in NOT_NAMES for word in words)


def _known(name: str, known: Known) -> bool:
    if known.text.names(name):
        return True
    # "Zephyr Labs Inc." for "Zephyr Labs": the words that tell it apart are what must be known.
    telling = [w for w in name.split() if w.casefold() not in ORGANISATION_SUFFIXES and w.casefold() not in NOT_NAMES]
    return bool(telling) and all(known.text.names(word) for word in telling)


def _near_misses(clause: str, known: Known) -> Iterator[tuple[int, str]]:
    """CJK names one character away from a known CJK name, where that name itself is not written."""
    for name in known.cjk_names:
        if name in clause:
            continue
        size = len(name)
        for at in range(0, len(clause) - size + 1):
            candidate = clause[at : at + size]
            differs = sum(a != b for a, b in zip(candidate, name, strict=True)) == 1
            if differs and _is_cjk_name(candidate, name) and not known.text.names(candidate):
                yield at, candidate
                break


def _is_cjk_name(candidate: str, name: str) -> bool:
    """The differing character is a name's, not grammar's: both are names of the same kind (same suffix)."""
    return candidate[-2:] == name[-2:] or any(candidate.endswith(s) for s in CJK_ORGANISATION_SUFFIXES)


def _labels(text: str, end: int, sentence: int, at: int) -> bool:
    """ "- **Peak Traffic:** 4,822": a line's Title Case label, not a name."""
    return bool(_LABEL_END.match(text, end)) and _opens(text[sentence:at])


def _opens(before: str) -> bool:
    """Only list marks, emphasis or a label stand before the word in its sentence ("- **Berlin**", "Note: …")."""
    return bool(_OPENING.match(before)) or before.rstrip().endswith((":", "：", "**"))


@cache
def _common() -> frozenset[str]:
    """Capitalised words that are never names: month and day names, units and currencies as written."""
    from babel.dates import get_day_names, get_month_names

    words = {*NOT_NAMES, *UNIT_WORDS}
    for locale in ("en", "de", "fr", "es", "it", "pt", "nl"):
        for width in ("wide", "abbreviated"):
            words.update(name.casefold().rstrip(".") for name in get_month_names(width, locale=locale).values())
            words.update(name.casefold().rstrip(".") for name in get_day_names(width, locale=locale).values())
    words.update(code.casefold() for code in ("USD", "EUR", "CNY", "JPY", "GBP", "CHF", "KRW", "UTC", "GMT"))
    return frozenset(words)
