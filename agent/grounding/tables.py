"""Tables: a Markdown table's rows are read as sentences, and its header says what each cell is.

| City     | Temp (°C) | Revenue (Mio. €) |      "28" in the second column is 28 °C, "1,2" in the third
|----------|-----------|------------------|      is 1.2 million euros: the column's unit and scale are
| Shanghai | 28        | 1,2              |      read from its header, as if written after the cell.

The row's first cells name what it is about ("Shanghai"), so a row is one clause: its figures are bound to the
result its names point to, like a sentence's.
"""

from __future__ import annotations

import re
from functools import lru_cache

from agent.grounding.figures import Figure, read_figures
from agent.grounding.language import SCALE_WORDS
from agent.grounding.structure import Block
from agent.grounding.units import unit_after

_UNIT_PART = re.compile(r"[(（\[]([^)）\]]{1,24})[)）\]]\s*$|,\s*([^,]{1,16})$|\s(in\s+[^\s]{1,12})$")
_GLUED_HEADER = re.compile(r"^([$€£¥]|[A-Z]{3}\s?)?(k|K|M|MM|B|bn|Bn)([$€£¥])?$")
_GLUED_WORDS = dict.fromkeys(("k", "K"), "thousand") | dict.fromkeys(("M", "MM"), "million")
_GLUED_WORDS |= dict.fromkeys(("B", "bn", "Bn"), "billion")
_SCALE_TOKENS = sorted((word for word, _ in SCALE_WORDS), key=len, reverse=True)


def cell_figures(body: str, start: int, block: Block, *, mark: str | None, short_scale: bool) -> list[Figure]:
    """The figures of a table row (`body`: the row's text, from position `start` of the answer), each read
    with the unit and scale its column's header gives."""
    figures: list[Figure] = []
    for cell in block.cells:
        left, right = cell.start - start, cell.end - start
        text = body[left:right]
        suffix = header_suffix(cell.header)
        for figure in read_figures(text + suffix, mark=mark, trillion_is_billion=short_scale):
            if figure.start >= len(text):
                continue
            end = min(figure.end, len(text.rstrip()))  # the unit its header gave is not written in the cell
            figures.append(
                figure._replace(start=figure.start + left, end=end + left, text=text[figure.start : end].strip())
            )
    return figures


def _written(word: str, text: str) -> bool:
    """`word` stands in `text` as a word of its own (CJK words need no spaces around them: "万元")."""
    if not word.isascii():
        return word in text
    return re.search(rf"(?<![\w]){re.escape(word)}(?![\w])", text) is not None


@lru_cache(maxsize=256)
def header_suffix(header: str) -> str:
    """What a header says of its column's figures, written as it would follow one: " Mio. €", " °C", ""."""
    match = _UNIT_PART.search(header.strip())
    if match is None:
        return ""
    part = next(group for group in match.groups() if group).strip()
    part = re.sub(r"^in\s+", "", part)
    glued = _GLUED_HEADER.match(part)
    if glued is not None:  # "$M", "€k", "M€", "USD bn"
        part = f"{_GLUED_WORDS[glued.group(2)]} {glued.group(1) or glued.group(3)}".strip()
    scale = next((word for word in _SCALE_TOKENS if _written(word, part)), "")
    rest = part.replace(scale, " ") if scale else part
    unit = ""
    for token in rest.split():
        found, used = unit_after(token)
        if found is not None and used == len(token):
            unit = token
            break
    if not scale and not unit:
        return ""
    return " " + " ".join(word for word in (scale, unit) if word)
