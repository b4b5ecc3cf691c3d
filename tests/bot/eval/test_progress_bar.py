"""`parley eval`'s progress bar: drawn on a terminal only, so a CI log or a redirected report never holds it."""

from __future__ import annotations

import io
from types import SimpleNamespace
from typing import Any, cast

from bot.cli.evaluation import ProgressBar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def an_attempt(case_id: str) -> Any:
    return cast(Any, SimpleNamespace(case=SimpleNamespace(case=SimpleNamespace(id=case_id))))


def test_progress_bar_redraws_one_line_on_a_terminal() -> None:
    screen = Terminal()
    bar = ProgressBar(4, screen)

    bar.advance(an_attempt("first"))
    bar.advance(an_attempt("second"))
    bar.close()

    drawn = screen.getvalue()
    assert drawn.count("\r") == 2 and drawn.endswith("\n")
    assert "2/4 · second" in drawn and "#" * (ProgressBar.WIDTH // 2) in drawn


def test_progress_bar_draws_nothing_elsewhere() -> None:
    log = io.StringIO()
    bar = ProgressBar(1, log)

    bar.advance(an_attempt("only"))
    bar.close()

    assert log.getvalue() == ""
