"""Short text: one rule for cutting a text or an exception down to a line."""

from __future__ import annotations

import pytest

from agent import clip, exception_line, shorten


def test_shorten_folds_whitespace_to_one_line():
    assert shorten("  a\n\tb   c \r\n", 50) == "a b c"


def test_shorten_cuts_with_an_ellipsis_within_the_limit():
    assert shorten("abcdef", 6) == "abcdef"
    assert shorten("abcdefg", 6) == "abcde…"
    assert len(shorten("x " * 500, 40)) == 40


def test_shorten_takes_anything_printable():
    assert shorten(12345, 3) == "12…"
    assert shorten(None, 10) == "None"


def test_clip_keeps_line_breaks_and_cuts_with_an_ellipsis():
    assert clip("a\nb", 10) == "a\nb"
    assert clip("a\nbcdef", 4) == "a\nb…"
    assert clip("abc", 1) == "…"
    assert clip("abc", 0) == "…"  # never an empty cut that hides that there was more


def test_exception_line_names_the_type_and_folds_the_message():
    exc = RuntimeError("the sweep broke\n  on two lines")
    assert exception_line(exc) == "RuntimeError: the sweep broke on two lines"


@pytest.mark.parametrize("exc", [TimeoutError(), ValueError(""), OSError("  \n ")])
def test_exception_line_without_a_message_is_the_type(exc: BaseException):
    assert exception_line(exc) == type(exc).__name__


def test_exception_line_shortens_the_message_to_the_limit():
    line = exception_line(ConnectionError("x" * 1000), 20)
    assert line == "ConnectionError: " + "x" * 19 + "…"
    assert len(exception_line(ValueError("y" * 1000))) == len("ValueError: ") + 300
