"""Openings: a pattern of several forms, written so that a search skips to where one of them can open.

Python's regular expressions search fast only for a pattern whose first item is a plain character or a class
of characters: the engine then jumps from one such character to the next. A pattern that opens with a
look-behind, a look-ahead or an alternation of forms that open differently is instead tried at every
character of the text, which is most of the cost of reading a long answer.

`opened_by` writes the same forms with their first characters as one class, and each form's own first
character checked right after it by a look-behind: it matches exactly what the forms match, in the same
order, at the same places.
"""

from __future__ import annotations

import re
from collections.abc import Sequence


def opened_by(forms: Sequence[tuple[str, str]], flags: int = 0) -> re.Pattern[str]:
    """The alternation of `forms`, tried in their order. Each form is (the class of its first character, as
    written inside `[…]`; the pattern of the rest of it, which may look behind at that first character)."""
    firsts = "".join(first for first, _ in forms)
    rest = "|".join(f"(?<=[{first}]){after}" for first, after in forms)
    return re.compile(f"[{firsts}](?:{rest})", flags)
