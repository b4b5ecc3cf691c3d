"""`superlatives` looks for its CJK words only in a text holding the first character of one of them, where it
once scanned the text for any CJK character: pinned here to the words the skipped part would have found — none
— over text in several scripts."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agent.grounding import superlatives
from agent.grounding.names import has_cjk
from tests.agent.test_grounding_words import _cjk_superlatives_as_before
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


@given(TEXTS)
@CHECKS
def test_superlatives_skip_only_what_finds_nothing(text: str) -> None:
    firsts = any(first in text for first in superlatives._CJK_FIRSTS)
    if not firsts:
        assert _cjk_superlatives_as_before(text) == []  # the part skipped would have added nothing
    if firsts:
        assert has_cjk(text)  # each first character is a CJK one: the old scan read the part too
    assert set(_cjk_superlatives_as_before(text)) <= set(superlatives.superlatives(text))
