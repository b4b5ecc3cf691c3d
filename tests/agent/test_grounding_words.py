"""The answer's words read fast, and exactly as the plain reading would: each fast path of `language` and
`words` is pinned here to the slower semantics it replaces, over varied text in several languages."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from text_to_num import alpha2digit

from agent.grounding import language, superlatives, words
from agent.grounding.figures import Figure
from agent.grounding.language import (
    DECREASE,
    LANGUAGE_SAMPLE,
    TEXT2NUM_LANGUAGES,
    letter_words,
    lowered_words,
    number_word_languages,
    says_decrease,
)
from agent.grounding.names import has_cjk
from agent.grounding.words import read_number_words
from agent.plain import plain_text
from tests.examples import checks

CHECKS = checks(300)

# Words and pieces of words in the languages the checker reads, with the characters where word boundaries and
# case are subtle: the Kelvin sign and the long s (which match "k" and "s" ignoring case), a dotted capital I,
# a combining accent, an underscore, digits glued to letters, CJK and Hangul.
WORDS = st.sampled_from(
    [
        *("down", "Down", "DOWN", "downturn", "markdown", "fell", "fallen", "falls", "fallout", "dropped", "drops"),
        *("declined", "Decline", "declining", "decreases", "lower", "lowered", "less", "lessons", "cheaper"),
        *("shrank", "shrunken", "loss", "losses", "gesunken", "Rückgang", "RÜCKGANG", "weniger", "kälter"),
        *("baisse", "diminué", "moins", "reculé", "chute", "bajó", "bajaron", "caída", "calo", "calati"),
        *("scesa", "ribassi", "queda", "caiu", "caíram", "baixou", "daling", "gedaald", "afname", "minder"),
        *("up", "rose", "grew", "revenue", "orders", "regions", "steady", "the", "und", "der", "la", "el"),
        *("Basel", "Zürich", "İstanbul", "ſank", "\u212aleiner", "ca\u0301ida", "lower_bound", "down2", "3rd"),
        *("下降", "减少", "降低", "下跌", "减", "降", "低", "少", "減少", "下回", "감소", "하락", "줄", "上升"),
        *("增长", "收入", "北京", "東京", "매출", "3", "1.9", "3,020", "12,5", "€1.3", "%", "°C", "ms"),
    ]
)
GLUE = st.sampled_from([" ", "  ", "", "-", "'", "’", ", ", ". ", ";", "\n", "_", "(", ")", "**", "，", "。"])
TEXTS = st.lists(st.tuples(WORDS, GLUE), max_size=14).map(lambda pairs: "".join(w + g for w, g in pairs))


@CHECKS
@given(st.one_of(TEXTS, st.text(max_size=40)))
def test_says_decrease_is_the_pattern_searched(text: str) -> None:
    assert says_decrease.__wrapped__(text) is (DECREASE.search(text) is not None)
    assert says_decrease.__wrapped__(text) is (DECREASE.search(text) is not None)  # its words now remembered


# --- letter words, the language, numbers in words ------------------------------------------------------------

NUMBER_WORDS = st.sampled_from(
    [
        *("one", "two", "three", "twelve", "twenty", "twenty-one", "forty-two", "hundred", "a hundred", "thousand"),
        *("million", "first", "third", "fifth", "half", "a third", "two thirds", "a dozen", "dozens", "o", "O"),
        *("zero", "point", "and", "minus", "eins", "drei", "zwölf", "zweiundzwanzig", "dreihundert", "Viertel"),
        *("ein Drittel", "Dutzend", "und", "komma", "erste", "dritte", "un", "deux", "douze", "vingt-et-un"),
        *("quatre-vingts", "neuf", "Neuf", "le", "du", "l'un", "trois quarts", "virgule", "et", "moitié", "tiers"),
        *("dos", "doce", "veintidós", "cien", "y", "mitad", "tercio", "docena", "tre", "dodici", "ventitré"),
        *("cento", "e", "metà", "terzo", "dozzina", "três", "doze", "vinte", "metade", "terço", "twaalf"),
        *("drieëntwintig", "honderd", "en", "helft", "derde", "driekwart", "tweederde", "'twelve", "-five"),
        *("twelve's", "3rd", "10-twenty", "Ⓐ", "e\u0301", "İki", "ΣΟΦΟΣ", "Στέλλα", "五", "十二", "三分之二"),
    ]
)
PROSE_WORDS = st.sampled_from(
    [
        *("the", "revenue", "of", "orders", "regions", "services", "are", "down", "is", "was", "about", "over"),
        *("der", "die", "Umsatz", "von", "sind", "la", "les", "logement", "chambres", "est", "el", "los", "son"),
        *("il", "sono", "os", "são", "het", "een", "zijn", "Berlin", "**Paris**:", "€", "%", "°C", "ms", "3,020"),
        *("12", "1.5", "2026", "a", "an", "no", "action", "needed", "steady", "team", "expects", "same"),
    ]
)
SEPARATORS = st.sampled_from([" ", " ", " ", ", ", ". ", ".\n", ";\n", "\n", "\n\n- ", "! ", "? ", "。", " - ", ": "])
PROSE = st.lists(st.tuples(st.one_of(NUMBER_WORDS, PROSE_WORDS, PROSE_WORDS), SEPARATORS), max_size=24).map(
    lambda pairs: "".join(w + g for w, g in pairs)
)
LANGUAGES = st.sampled_from(TEXT2NUM_LANGUAGES)


def _letter_words_as_before(text: str) -> tuple[tuple[int, str], ...]:
    return tuple((m.start(), m.group(0).lower()) for m in re.finditer(r"[^\W\d_]+", text))


def _languages_as_before(text: str) -> list[str]:
    votes: dict[str, int] = {}
    for start, word in _letter_words_as_before(text):
        if start > LANGUAGE_SAMPLE:
            break
        code = language._LANGUAGE_WORDS.get(word)
        if code is not None:
            votes[code] = votes.get(code, 0) + 1
    if not votes:
        return list(TEXT2NUM_LANGUAGES)
    return sorted(votes, key=lambda code: -votes[code])[:2]


def _has_extra_as_before(text: str) -> bool:
    return not words._EXTRA.isdisjoint([word for _, word in _letter_words_as_before(text)])


def _number_words_as_before(text: str, languages: list[str]) -> list[Figure]:
    """`read_number_words` as it read before its gates: the parser asked of the whole text, then of each
    sentence."""
    figures: list[Figure] = []
    text = plain_text(text)
    if words._LETTERS.search(text):
        extra = _has_extra_as_before(text)
        for code in languages:
            if not extra and alpha2digit(text, code) == text:
                continue
            for segment in words._SEGMENT.finditer(text):
                part = segment.group(0)
                if alpha2digit(part, code) != part or (extra and _has_extra_as_before(part)):
                    figures += words._latin(text, segment.start(), segment.end(), code, ())
            if figures:
                break
    if words._ANY_NUMERAL.search(text):
        figures += words._cjk(text)
    return sorted(figures, key=lambda f: f.start)


@CHECKS
@given(st.one_of(PROSE, TEXTS, st.text(max_size=60)))
def test_letter_words_and_language_as_before(text: str) -> None:
    assert letter_words.__wrapped__(text) == _letter_words_as_before(text)
    padded = "x " * 590 + text  # the language sample ends within the text
    assert number_word_languages(text) == _languages_as_before(text)
    assert number_word_languages(padded) == _languages_as_before(padded)
    assert words._has_extra(text) is _has_extra_as_before(text)
    assert words._has_extra(text, set(text.split())) is _has_extra_as_before(text)
    assert set(lowered_words(set(text.split()))) == set(text.lower().split())


def test_lowered_words_keep_greek_final_sigma() -> None:
    found = ["ΣΟΦΟΣ", "Σ", "ΑΣ", "ΣΑ", "İstanbul", "ǅemal", "STRASSE"]
    assert lowered_words(found) == [word.lower() for word in found]
    assert lowered_words([]) == []


@CHECKS
@given(PROSE, LANGUAGES)
def test_a_text_without_a_starting_word_is_left_as_it_is(text: str, code: str) -> None:
    """The gate's ground: the parser changes only a text with a word it reads alone; and without a word it
    reads by its neighbours, a sentence it changes alone is changed in the whole text too (the whole text may
    change more: "erste;\nerste" are two ordinals next to each other, each alone too small to be read)."""
    starting = words._starting(set(text.split()), code)
    changed = alpha2digit(text, code) != text
    if not starting:
        assert not changed
    elif not changed and not words._in_context(starting, code):
        assert all(alpha2digit(s.group(0), code) == s.group(0) for s in words._SEGMENT.finditer(text))


@CHECKS
@given(st.one_of(PROSE, TEXTS), st.lists(LANGUAGES, min_size=1, max_size=2, unique=True))
def test_read_number_words_as_before(text: str, languages: list[str]) -> None:
    assert read_number_words(text, languages) == _number_words_as_before(text, languages)


def test_words_read_by_their_neighbours_keep_the_whole_text_asked() -> None:
    # Alone, the second sentence is "9 chambres"; in the whole text "un logement … neuf" is "new": the parser
    # changes nothing, and nothing is read.
    for text, languages in [
        ("C est un logement. Neuf chambres", ["fr"]),
        ("C est un logement. Neuf chambres; douze fenêtres", ["fr"]),
        ("Call twenty.\no five", ["en"]),
        ("erste;\nerste", ["de"]),
    ]:
        assert read_number_words(text, languages) == _number_words_as_before(text, languages)


# --- superlatives ----------------------------------------------------------------------------------------------

SUPERLATIVE_WORDS = st.sampled_from(
    [
        *("slowest", "fastest", "highest", "Highest", "the", "most", "least", "le", "la", "plus", "moins", "chaud"),
        *("de", "más", "alta", "più", "bassa", "mais", "rápido", "höchsten", "umsatzstärkste", "min", "max"),
        *("12", "3 ", "than", "que", "best", "worst", "最高", "最も", "高い", "가장", "느린", "peak", "l"),
    ]
)
SUPERLATIVE_TEXT = st.lists(st.tuples(st.one_of(SUPERLATIVE_WORDS, PROSE_WORDS), SEPARATORS), max_size=20).map(
    lambda pairs: "".join(w + g for w, g in pairs)
)


def _superlatives_as_before(text: str) -> list[tuple[int, int, superlatives.Direction]]:
    """`superlatives.superlatives` as it found its opening words before: every word looked up."""
    found: list[tuple[int, int, superlatives.Direction]] = []
    said = letter_words(text)
    directions = {word: superlatives._direction(word) for word in {word for _, word in said}}
    opening = [at for at, (_, word) in enumerate(said) if directions[word] is not None or word in superlatives._PAIRS]
    for at in opening:
        start, word = said[at]
        following = said[at + 1][1] if at + 1 < len(said) else ""
        direction = directions[word]
        if (
            direction is not None
            and word in superlatives._UNIT_TOO
            and superlatives._UNIT_BEFORE.search(text, max(0, start - 2), start)
        ):
            continue
        end = start + len(word)
        if direction is None and word in superlatives._PAIRS and following:
            if word in superlatives._ARTICLED and (at == 0 or said[at - 1][1] not in superlatives._ARTICLES):
                continue
            direction = next((d for stem, d in superlatives._PAIRS[word] if following.startswith(stem)), None)
            if direction is not None:
                at += 1
                end = said[at][0] + len(following)
                following = said[at + 1][1] if at + 1 < len(said) else ""
        if direction is not None and following not in superlatives._COMPARING:
            found.append((start, end, direction))
    return sorted(found + _cjk_superlatives_as_before(text)) if has_cjk(text) else sorted(found)


def _cjk_superlatives_as_before(text: str) -> list[tuple[int, int, superlatives.Direction]]:
    """What the CJK part of `superlatives` found before it looked for the words' first characters: every word
    looked for in a text holding any CJK character."""
    found = []
    for word, direction in superlatives._CJK_WORDS.items():
        found.extend((at, at + len(word), direction) for at in superlatives._all(text, word))
    for lead in superlatives._CJK_LEADS:
        for at in superlatives._all(text, lead):
            rest = text[at + len(lead) : at + len(lead) + 4].lstrip()
            direction = next((d for head, d in superlatives._CJK_NEXT if rest.startswith(head)), superlatives._E)
            found.append((at, at + len(lead), direction))
    return found


@CHECKS
@given(st.one_of(SUPERLATIVE_TEXT, PROSE, st.text(max_size=40)))
def test_superlatives_as_before(text: str) -> None:
    assert superlatives.superlatives(text) == _superlatives_as_before(text)


def test_words_korean_numerals_are_read_before_a_counter_only():
    read = [(f.text, f.value) for f in read_number_words("직원 여섯 명, 테이블 스물두 개, 학생 삼십 명이 왔어요.", [])]
    assert read == [("여섯 명", 6), ("스물두 개", 22), ("삼십 명", 30)]
    # "네" is "yes", "열차" a train, "세 시" a time, "두 번째" an ordinal: no figures.
    assert read_number_words("네, 열차는 세 시에 떠나요. 두 번째 열차도 있어요.", []) == []
    # "한", "두" count only against a whole.
    assert [f.value for f in read_number_words("두 명이 왔어요. 다섯 명 중 두 명이 왔어요.", [])] == [5, 2]
