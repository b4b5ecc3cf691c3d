"""The answer's words read fast, and exactly as the plain reading would: each fast path of `language` and
`words` is pinned here to the slower semantics it replaces, over varied text in several languages."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.grounding.language import DECREASE, says_decrease

EXAMPLES = int(os.environ.get("PARLEY_HYPOTHESIS_EXAMPLES", "300"))
CHECKS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize="PARLEY_HYPOTHESIS_EXAMPLES" not in os.environ,
)

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
