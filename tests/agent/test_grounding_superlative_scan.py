"""`superlatives` looks for its CJK words only in a text holding the first character of one of them, where it
once scanned the text for any CJK character: pinned here to the words the skipped part would have found — none
— over text in several scripts."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agent.grounding import superlatives
from agent.grounding.names import has_cjk
from tests.examples import checks

CHECKS = checks(400)

PIECES = st.sampled_from(
    [
        *"0123456789١٢٣.,−-+ \u00a0\u202f%€$°",
        "İ", "ı", "ſ", "\u212a", "e\u0301", "höchsten", "la plus chaude", "el más caro", "the slowest", "最も高い",
        "一番安い", "가장 높은", "제일 큰", "最热", "最慢的", "上海", "東京", "서울", "ダウン", "・", "ー", "一", "最",
        "가", "제", "番", "장", "15 °C", "912 ms", "150ms로 가장 느리고", "115msで最も", "最高気温",
    ]
)  # fmt: skip
TEXTS = st.lists(st.one_of(PIECES, st.text(max_size=6)), max_size=20).map("".join)


def _cjk_found(text: str) -> list[tuple[int, int, superlatives.Direction]]:
    """What the CJK part of `superlatives` adds, as it was (before the first characters were looked for)."""
    found = []
    for word, direction in superlatives._CJK_WORDS.items():
        found.extend((at, at + len(word), direction) for at in superlatives._all(text, word))
    for lead in superlatives._CJK_LEADS:
        for at in superlatives._all(text, lead):
            rest = text[at + len(lead) : at + len(lead) + 4].lstrip()
            direction = next((d for head, d in superlatives._CJK_NEXT if rest.startswith(head)), superlatives._E)
            found.append((at, at + len(lead), direction))
    return found


@given(TEXTS)
@CHECKS
def test_superlatives_skip_only_what_finds_nothing(text: str) -> None:
    firsts = any(first in text for first in superlatives._CJK_FIRSTS)
    if not firsts:
        assert _cjk_found(text) == []  # the part skipped would have added nothing
    if firsts:
        assert has_cjk(text)  # each first character is a CJK one: the old scan read the part too
    assert set(_cjk_found(text)) <= set(superlatives.superlatives(text))
