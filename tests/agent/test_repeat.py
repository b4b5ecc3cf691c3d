"""RepeatDetector on canonicalised signatures."""

import unicodedata

from agent import RepeatDetector, TerminationReason
from agent.repeat import CallOutcome, signature


def test_repeat_signature_ignores_key_order_whitespace_and_unicode_form():
    decomposed = unicodedata.normalize("NFD", "Café")
    assert signature("t", {"city": " 上海", "n": 1.0}) == signature("t", {"n": 1, "city": "上海 "})
    assert signature("t", {"q": decomposed}) == signature("t", {"q": "Café"})
    assert signature("t", {"city": "上海"}) != signature("t", {"city": "北京"})


def test_repeat_same_call_needs_consecutive_steps():
    detector = RepeatDetector(same_call_threshold=3)
    a, b = CallOutcome("t", {"x": 1}, None), CallOutcome("t", {"x": 2}, None)
    assert [detector.observe_step([c]) for c in (a, a, b, a, a)] == [None] * 5
    assert detector.observe_step([a]) is TerminationReason.REPEAT_SAME_CALL


def test_repeat_same_error_counts_across_the_run():
    detector = RepeatDetector(same_error_threshold=2, alternation_cycles=5)
    bad, good = CallOutcome("t", {"c": "上嗨"}, "CITY_NOT_FOUND"), CallOutcome("t", {"c": "上海"}, None)
    assert detector.observe_step([bad]) is None
    assert detector.observe_step([good]) is None
    assert detector.observe_step([bad]) is TerminationReason.REPEAT_SAME_ERROR
    assert detector.repeated_error()[0] == "CITY_NOT_FOUND"


def test_repeat_alternation_and_critique_spin():
    detector = RepeatDetector(alternation_cycles=2)
    a, b = CallOutcome("t", {"x": "a"}, None), CallOutcome("t", {"x": "b"}, None)
    assert [detector.observe_step([c]) for c in (a, b, a)] == [None, None, None]
    assert detector.observe_step([b]) is TerminationReason.REPEAT_ALTERNATION
    spin = RepeatDetector()
    assert spin.observe_gaps(["北京 missing", "advice"]) is None
    assert spin.observe_gaps(["advice ", "北京 missing"]) is TerminationReason.CRITIQUE_SPIN
    assert RepeatDetector().observe_gaps([]) is None
