"""warm_up: the fact-checker's first-use costs, paid before a process serves anyone.

The checker loads what it knows of languages when it first needs it: CLDR month and weekday names (babel), the
number-word parsers (`text2num`, `cn2an`), its compiled patterns. Paid by the first answer checked, that is
a hundred milliseconds and more of one synchronous call — in a server, a stall of its event loop in the middle
of its first burst of questions, which every request in flight waits out. `warm_up` checks a few small answers
that reach each of those paths, so that a server pays them at start-up instead (and can freeze them for the
garbage collector with the rest of start-up's objects).
"""

from __future__ import annotations

from datetime import date

from agent.grounding.checker import check, prepare
from agent.source import Source

_TODAY = date(2026, 12, 3)
_QUESTION = "How did Zephyr Labs do in Q3, and what is the weather in 上海?"
# Answers in the styles and languages the checker reads: tags, footnotes, tool names, a sources list, a table,
# numbers and fractions in words, month and weekday names, CJK numerals and dates, currency codes.
_ANSWERS = (
    "Zephyr Labs launched forty-seven satellites [1] at 12 million USD each, 564 million USD in all, on "
    "Thursday, 3 December 2026 [1]. About half were small.",
    "Laut get_metrics hat Zephyr Labs siebenundvierzig Satelliten gestartet (Quelle: get_metrics), am 3. Dezember "
    "2026; drei Viertel davon im Q3.",
    "Selon get_metrics, Zephyr Labs a lancé quarante-sept satellites[^1], le jeudi 3 décembre 2026.\n\n"
    "[^1]: get_metrics",
    "| Ciudad | Temperatura |\n|---|---|\n| 上海 | 28 °C |\n\nZephyr Labs lanzó cuarenta y siete satélites el "
    "3 de diciembre de 2026.\n\nFuentes: get_weather (上海), get_metrics",
    "上海今天28°C【2】，2026年12月3日（星期四）。"
    "Zephyr Labs 发射了四十七颗卫星，共五亿六千四百万美元（来源：get_metrics）。",
    "Zephyr Labs は2026年12月3日に四十七基の衛星を打ち上げました [1]。上海は 28 度です [2]。",
    "1 USD = 0,92 € [3], so 564 million USD is about 519 million euros.",
)


def warm_up() -> None:
    """Pay the checker's first-use costs now (its verdicts on these samples do not matter)."""
    for answer in _ANSWERS:
        sources = _sources()
        for source in sources:
            prepare(source)
        check(answer, sources, _QUESTION, today=_TODAY)


def _sources() -> list[Source]:
    metrics = {
        "company": "Zephyr Labs",
        "satellites_launched": 47,
        "cost_per_satellite": {"amount": 12_000_000, "currency": "USD"},
        "total_usd": 564_000_000,
        "launched_on": "2026-12-03",
        "quarter": "2026-Q3",
        "share_small": 0.5,
    }
    weather = {"city": "上海", "temp_c": 28, "condition": "cloudy", "observed_at": "2026-12-03T08:00:00+08:00"}
    rate = {"base": "USD", "quote": "EUR", "rate": 0.92}
    return [
        Source(1, "get_metrics", "call_1", 1, {"company": "Zephyr Labs"}, metrics),
        Source(2, "get_weather", "call_2", 1, {"city": "上海"}, weather),
        Source(3, "get_rate", "call_3", 1, {"base": "USD", "quote": "EUR"}, rate),
    ]
