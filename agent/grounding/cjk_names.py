"""CJK names: where a text in Chinese, Japanese or Korean names a company or a person.

These scripts write names without capitals, and Chinese and Japanese without spaces, so a name is told by what
marks it, never by a dictionary: a company by the word its name ends in ("东海联合保险", "東海銀行", "한빛물산으로")
or opens with ("株式会社ミライ"), a person by a title or honorific after the name ("佐藤さん", "김도윤 님",
"王思远先生"), by words only a person takes ("王思远一个人就…"), or by a role before it ("客服王思远"). The name is
what stands next to its mark up to the first character no name holds; a Chinese or Korean person's opens with a
family name. Narrow on purpose, as `entities` wants it: a common word before the mark ("保险公司", "患者さん",
"고객님") is none. The words are in `language`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from itertools import chain
from typing import NamedTuple

from agent.grounding.language import (
    CHINESE_PERSON_ALONE,
    CHINESE_TITLES,
    CJK_COMPANY_ENDINGS,
    CJK_COMPANY_KINDS,
    CJK_COMPANY_OPENINGS,
    CJK_COMPANY_VERBS,
    CJK_COMPOUND_SURNAMES,
    CJK_NOT_IN_NAMES,
    CJK_NOT_PEOPLE,
    CJK_PERSON_BEFORE,
    CJK_SURNAMES,
    JAPANESE_PERSON_AFTER,
    KOREAN_PARTICLES,
    KOREAN_PERSON_AFTER,
)

MAX_NAME = 10  # characters a name before (or after) its mark spans at most
MIN_TELLING = 2  # a company's own part, without its ending: one character is too little to tell it


def _alternation(words: Iterable[str]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(word) for word in sorted(words, key=len, reverse=True)))


_COMPANY_END = _alternation(CJK_COMPANY_ENDINGS)
_COMPANY_OPENING = _alternation(CJK_COMPANY_OPENINGS)
_PERSON_AFTER = _alternation((*CHINESE_TITLES, *CHINESE_PERSON_ALONE))
_JAPANESE_AFTER = _alternation(JAPANESE_PERSON_AFTER)
_KOREAN_AFTER = _alternation(KOREAN_PERSON_AFTER)
_PERSON_BEFORE = _alternation(CJK_PERSON_BEFORE)
_KANA = re.compile("[\u3040-\u30ff]")  # a text with kana is Japanese


class CjkName(NamedTuple):
    """A name found in a text: where it stands, as written (its mark aside), and what tells it. It is known when
    another text names one of its `readings` (each length a person's name may have; a company's own part, its
    ending aside), or begins a name with one of its `tails` (where the name may begin after words of the
    sentence: "上周东海联合" → "东海联合", …, "联合" — each a name only where another text begins one with it, so
    that "东海联合保险" is not "江南联合保险")."""

    start: int
    end: int
    name: str
    readings: tuple[str, ...]
    tails: tuple[str, ...] = ()
    japanese: bool = False  # found in a Japanese text: its kanji may be read in several ways


def judged_by(name: CjkName, text: str) -> bool:
    """Can `text` tell whether it names `name`? Always for a Chinese name, which a Latin text writes in pinyin (as
    `names` reads it); a Japanese or Korean one only where `text` writes its script: "Kim Doyun" and "Sato" are
    김도윤 and 佐藤 as people transliterate them, not as any transliteration that knows no names spells them."""
    if any(map(_hangul, name.name)):
        return any(map(_hangul, text))
    if name.japanese:
        return any(_han(ch) or "\u3040" <= ch <= "\u30ff" for ch in text)
    return True


@lru_cache(maxsize=256)
def cjk_names(text: str) -> tuple[CjkName, ...]:
    """The companies and people `text` names in Chinese, Japanese or Korean, in order (read once per clause: each
    of its figures asks)."""
    japanese = _KANA.search(text) is not None
    return tuple(sorted([*_companies(text, japanese), *_people(text, japanese)]))


def _han(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf" or "\uf900" <= ch <= "\ufaff"


def _hangul(ch: str) -> bool:
    return "\uac00" <= ch <= "\ud7af"


def _katakana(ch: str) -> bool:
    return "\u30a1" <= ch <= "\u30fa" or ch == "ー"


def _in_name(ch: str, japanese: bool) -> bool:
    if japanese:
        return _han(ch) or _katakana(ch)
    return _hangul(ch) or (_han(ch) and ch not in CJK_NOT_IN_NAMES)


def _begins(text: str, end: int, japanese: bool) -> int:
    """Where the run of name characters that ends at `end` begins."""
    start = end
    while start > 0 and end - start < MAX_NAME and _in_name(text[start - 1], japanese):
        start -= 1
    return start


def _ends(text: str, start: int, japanese: bool) -> int:
    end = start
    while end < len(text) and end - start < MAX_NAME and _in_name(text[end], japanese):
        end += 1
    return end


def _tails(part: str) -> tuple[str, ...]:
    """Each later place a name may begin in the run before its mark, longest first ("上周东海联合" → "周东海联合",
    …, "联合")."""
    return tuple(part[at:] for at in range(1, len(part) - MIN_TELLING + 1))


def begins_name(text: str, part: str) -> bool:
    """`part` stands in `text` where a name may begin: after no character a name holds (in '"江南财险"', "江南"
    does; in "北陆フロンティア", "フロンティア" does not)."""
    at = text.find(part)
    while at >= 0:
        if at == 0 or not (_in_name(text[at - 1], False) or _katakana(text[at - 1])):
            return True
        at = text.find(part, at + 1)
    return False


# --- companies ---------------------------------------------------------------------------------------------


def _companies(text: str, japanese: bool) -> Iterator[CjkName]:
    for match in _COMPANY_END.finditer(text):
        ending = match.group(0)
        if _hangul(ending[0]) and not _ends_word(text, match.end()):
            continue  # "보험료", "전자결제": the ending is part of a longer word
        begin = _after_verbs(text, _begins(text, match.start(), japanese), match.start())
        part = _own_part(text[begin : match.start()])
        if len(part) >= MIN_TELLING:
            yield CjkName(begin, match.end(), text[begin : match.end()], (part,), _tails(part), japanese)
    for match in _COMPANY_OPENING.finditer(text):
        start = match.end() + (match.end() < len(text) and text[match.end()] == " ")
        part = text[start : _ends(text, start, japanese)]
        if len(part) >= MIN_TELLING:
            end = start + len(part)
            yield CjkName(match.start(), end, text[match.start() : end], (part,), (), japanese)


def _ends_word(text: str, at: int) -> bool:
    """A Korean word ends at `at`, or only a particle follows in it ("한빛물산으로")."""
    end = at
    while end < len(text) and _hangul(text[end]):
        end += 1
    return end == at or text[at:end] in KOREAN_PARTICLES


def _after_verbs(text: str, begin: int, end: int) -> int:
    """Where a company's name begins in `text[begin:end]`: after the last verb in it ("通过招商" → "招商")."""
    for at in range(end - 1, begin - 1, -1):
        verb = next((verb for verb in CJK_COMPANY_VERBS if text.startswith(verb, at, end)), None)
        if verb is not None:
            return at + len(verb)
    return begin


def _own_part(part: str) -> str:
    """What tells a company in the run before its ending, without the endings and kinds it closes with: "江南"
    in "江南保险" before "公司", "中国" in "中国人寿" before "保险", nothing in "商业" before "银行"."""
    ending = next((word for word in (*CJK_COMPANY_ENDINGS, *CJK_COMPANY_KINDS) if part.endswith(word)), "")
    return _own_part(part[: -len(ending)]) if ending else part


# --- people ------------------------------------------------------------------------------------------------


def _people(text: str, japanese: bool) -> Iterator[CjkName]:
    if japanese:
        return _japanese_people(text)
    return chain(_korean_people(text), _chinese_people(text))


def _korean_people(text: str) -> Iterator[CjkName]:
    for match in _KOREAN_AFTER.finditer(text):
        end = match.start() - (match.start() > 0 and text[match.start() - 1] == " ")
        start = end - 3  # a Korean name is three syllables, its family name first: "김도윤"
        name = text[max(start, 0) : end]
        if (
            start >= 0
            and all(map(_hangul, name))
            and (start == 0 or not _hangul(text[start - 1]))
            and name[0] in CJK_SURNAMES
            and name not in CJK_NOT_PEOPLE
        ):
            yield CjkName(start, end, name, (name,))


def _chinese_people(text: str) -> Iterator[CjkName]:
    for match in _PERSON_AFTER.finditer(text):
        at = match.start()
        forms = [text[at - size : at] for size in (4, 3, 2) if at >= size and _chinese_name(text[at - size : at])]
        if match.group(0) in CHINESE_TITLES and at >= 1 and text[at - 1] in CJK_SURNAMES:
            # "王经理": a family name and a title, shown together — a name when nothing that may be part of one
            # stands before it ("基金经理" is none); the family name alone tells the longer readings too ("上周王经理").
            if text[max(at - 2, 0) : at] in CJK_NOT_PEOPLE or any(form in CJK_NOT_PEOPLE for form in forms):
                continue  # "本周经理例会", "高级经理"
            if forms or at == 1 or not _in_name(text[at - 2], False):
                yield CjkName(at - 1, match.end(), text[at - 1 : match.end()], (*reversed(forms), text[at - 1]))
            continue
        if forms:
            yield from _chinese_person(forms, at - len(forms[0]))
    for match in _PERSON_BEFORE.finditer(text):
        at = match.end()
        forms = [text[at : at + size] for size in (4, 3, 2) if _chinese_name(text[at : at + size])]
        if forms:
            yield from _chinese_person(forms, at)


def _chinese_name(form: str) -> bool:
    """A family name, then one or two characters of a given name: "王思远", "李明", "欧阳娜娜"."""
    if form[:2] in CJK_COMPOUND_SURNAMES:
        return len(form) in (3, 4) and all(_in_name(ch, False) and _han(ch) for ch in form)
    return len(form) in (2, 3) and form[0] in CJK_SURNAMES and all(_in_name(ch, False) and _han(ch) for ch in form)


def _chinese_person(forms: list[str], start: int) -> Iterator[CjkName]:
    """The name at `start`, read in each length it may have (longest first): known when any reading is; shown
    in the longest."""
    if not any(form in CJK_NOT_PEOPLE for form in forms):
        yield CjkName(start, start + len(forms[0]), forms[0], tuple(reversed(forms)))


def _japanese_people(text: str) -> Iterator[CjkName]:
    for match in _JAPANESE_AFTER.finditer(text):
        start = _begins(text, match.start(), True)
        name = text[start : match.start()]
        if len(name) < MIN_TELLING or (start > 0 and text[start - 1] in "おご"):
            continue  # "お客様", "ご主人様"
        honoured = name + match.group(0)
        if any(name.endswith(word) or honoured.endswith(word) for word in CJK_NOT_PEOPLE):
            continue
        yield CjkName(start, match.start(), name, (name,), _tails(name), True)
