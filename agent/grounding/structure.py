"""Structure: how an answer is laid out — its blocks, their sentences, and the clauses of a sentence.

A block is a paragraph, a bullet, a row of a Markdown table, a footnote's definition (`[^1]: …`) or a list of
sources ("Sources: get_weather (上海), …"). The checker reads a copy of the answer in which list numbering,
URLs and a table's rules are blanked out (`blanked`): every position stays where it was, so a figure found
in the copy is where it stands in the answer.

A table row is read as one sentence; its cells keep the header of their column, which says what each cell
is ("Temp (°C)"). Clauses are the parts of a sentence that state one thing each ("Shanghai is 28 °C,
Beijing 16 °C"): the names a figure's clause gives say which result it is about.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache

from agent.grounding.dates import month_number
from agent.grounding.language import (
    ABBREVIATIONS,
    CJK_CLAUSE_JOINS,
    CLAUSE_JOINS,
    ORDINAL_NOUNS,
    SOURCE_LABELS,
)
from agent.grounding.openings import opened_by

_LIST_MARKER = re.compile(r"^[ \t]*(?:[-*+>#•·]+[ \t]*|\*\*)*\d{1,2}[.)、](?:\*\*)?[ \t]", re.M)
# The same after a line's newline: a pattern that opens with one character skips to it at once, where `^` is tried
# at every character. (A marker holds no newline: markers of two lines never overlap.)
_LIST_MARKER_AFTER_NEWLINE = re.compile(r"\n[ \t]*(?:[-*+>#•·]+[ \t]*|\*\*)*\d{1,2}[.)、](?:\*\*)?[ \t]")
_BULLET = re.compile(r"^[ \t]*(?:[-*+•·]|\d{1,2}[.)、])[ \t]+")
_URL = re.compile(r"https?://\S+")
_TABLE_LINE = re.compile(r"^[ \t]*\|.*\|[ \t]*$")
_TABLE_RULE = re.compile(r"^[ \t]*\|?(?:[ \t]*:?-{2,}:?[ \t]*\|)+[ \t]*(?::?-{2,}:?[ \t]*)?$")
_FOOTNOTE = re.compile(r"^[ \t]*\[\^([^\]\s]{1,16})\]:[ \t]*")
_SOURCES = re.compile(
    r"^[ \t>*_#-]*(?:" + "|".join(re.escape(label) for label in SOURCE_LABELS) + r")[ \t*_]*[:：]",
    re.IGNORECASE,
)
_ASCII_SOURCE_LABELS = frozenset(label.lower() for label in SOURCE_LABELS if label.isascii())
# Semicolons do not end a sentence: "87 ms; p99 1.5 s [1]" is one statement with one citation.
_SENTENCE_END = opened_by([("。！？!?\n", "[。！？!?\n]*"), (".", r"(?<=\S\.)(?=\s+\S)")])  # "…!?", "x. Y"
_WORD_BEFORE = re.compile(r"(\S+)$")
_WORD_AFTER = re.compile(r"[ \t]+[*_\"“(]*([^\W\d_]+)")
# What separates clauses: punctuation (not a comma or point inside a figure) and joining words.
# A colon or a dash is no mark: "**AMER**: $6.2M", "Shanghai — 28 °C" give the value of the name before them.
# The characters `CJK_CLAUSE_JOINS` (an alternation of words as written) can open with.
_CJK_JOIN_FIRSTS = tuple(dict.fromkeys(word[0] for word in CJK_CLAUSE_JOINS.pattern.split("|")))
_NO_END = 1 << 62  # sorts after every clause that starts at a position
_CLAUSE_MARK = opened_by([(",", r"(?<!\d,)"), (",", r"(?!\d)"), (";，；、()（）", "")])  # not ",' in "1,234"


class BlockKind(StrEnum):
    PROSE = "prose"  # a paragraph, or a bullet of a list
    TABLE_HEAD = "table_head"
    TABLE_ROW = "table_row"
    FOOTNOTE = "footnote"  # `[^1]: get_weather, Shanghai`
    SOURCES = "sources"  # "Sources: get_weather (上海), get_weather (北京)"


@dataclass(frozen=True)
class Cell:
    """A cell of a table row: where it stands, and its column's header ("" when the table has none)."""

    start: int
    end: int
    header: str


@dataclass(frozen=True)
class Block:
    start: int
    end: int
    kind: BlockKind
    label: str = ""  # a footnote's label ("1" for `[^1]: …`)
    cells: tuple[Cell, ...] = ()  # a table row's cells


@dataclass(frozen=True)
class Sentence:
    start: int
    end: int
    block: int  # index in Layout.blocks


@dataclass
class Layout:
    """The answer's blocks and sentences, in order; positions are the answer's."""

    blocks: list[Block] = field(default_factory=list)
    sentences: list[Sentence] = field(default_factory=list)

    def block_of(self, sentence: Sentence) -> Block:
        return self.blocks[sentence.block]


def blanked(text: str) -> str:
    """List numbering and URLs become spaces: they are not figures (positions stay where they were)."""
    first = _LIST_MARKER.match(text)
    spans = [first.span()] if first is not None else []
    spans += [(m.start() + 1, m.end()) for m in _LIST_MARKER_AFTER_NEWLINE.finditer(text)]
    spans += [m.span() for m in _URL.finditer(text)] if "http" in text else []
    return mask(text, spans, 0, None) if spans else text


def mask(text: str, spans: Sequence[tuple[int, int]], start: int, end: int | None) -> str:
    """`text[start:end]` with each span (positions in `text`) replaced by spaces."""
    end = len(text) if end is None else end
    pieces: list[str] = []
    add = pieces.append
    at = start
    for a, b in sorted(spans):  # comparisons, not max() and min(): this runs for every figure of an answer
        if a < at:
            a = at
        if b > end:
            b = end
        if a < b:
            add(text[at:a])
            add(" " * (b - a))
            at = b
    add(text[at:end])
    return "".join(pieces)


def layout(text: str) -> Layout:
    """The blocks and sentences of `text` (the blanked answer)."""
    result = Layout()
    paragraph: list[int] = []  # start and end of the open paragraph
    header: list[str] = []
    in_sources = False

    def close() -> None:
        if paragraph:
            _add_prose(result, text, paragraph[0], paragraph[1])
            paragraph.clear()

    for start, end, line in _lines(text):
        stripped = line.strip()
        if not stripped:  # a blank line ends a paragraph, a table, a list of sources
            close()
            header, in_sources = [], False
            continue
        if stripped.startswith("|") and line.count("|") >= 2:
            close()
            in_sources = False
            if _TABLE_RULE.match(line):
                continue
            cells = _cells(line, start)
            if not header:
                header = [text[cell.start : cell.end].strip() for cell in cells]
                _add_block(result, Block(start, end, BlockKind.TABLE_HEAD, cells=cells))
            else:
                named = tuple(Cell(c.start, c.end, header[i] if i < len(header) else "") for i, c in enumerate(cells))
                _add_block(result, Block(start, end, BlockKind.TABLE_ROW, cells=named))
            continue
        header = []
        footnote = _FOOTNOTE.match(line) if "[^" in line else None
        if footnote is not None:
            close()
            in_sources = False
            _add_block(result, Block(start, end, BlockKind.FOOTNOTE, label=footnote.group(1)))
        elif ("：" in line or ":" in line) and _lists_sources(line):  # a list of sources has its colon
            close()
            in_sources = True
            _add_block(result, Block(start, end, BlockKind.SOURCES))
        elif in_sources and _BULLET.match(line):  # "Sources:" followed by one bullet per source
            result.blocks[-1] = Block(result.blocks[-1].start, end, BlockKind.SOURCES)
            result.sentences[-1] = Sentence(result.blocks[-1].start, end, len(result.blocks) - 1)
        else:
            in_sources = False
            if _BULLET.match(line) or not paragraph:
                close()
                paragraph[:] = [start, end]
            else:
                paragraph[1] = end
    close()
    return result


def _lines(text: str) -> list[tuple[int, int, str]]:
    """Each line of `text` with where it starts and ends (as `^.*$` finds them, the last one empty after a final
    newline): split at once, where the pattern is tried at every character."""
    found = []
    start = 0
    for line in text.split("\n"):
        end = start + len(line)
        found.append((start, end, line))
        start = end + 1
    return found


def _lists_sources(line: str) -> bool:
    """Does `line` open a list of sources (`_SOURCES`)? Its label stands between its opening marks and its first
    colon: when that is ASCII, a set says whether it is a label (most lines with a colon are "**Berlin**: …")."""
    start = len(line) - len(line.lstrip(" \t>*_#-"))
    colons = [at for at in (line.find(":", start), line.find("：", start)) if at >= 0]
    if not colons:
        return False
    label = line[start : min(colons)].rstrip(" \t*_")
    if label.isascii():
        return label.lower() in _ASCII_SOURCE_LABELS
    return _SOURCES.match(line) is not None


def _add_block(result: Layout, block: Block) -> None:
    result.blocks.append(block)
    result.sentences.append(Sentence(block.start, block.end, len(result.blocks) - 1))


def _add_prose(result: Layout, text: str, start: int, end: int) -> None:
    result.blocks.append(Block(start, end, BlockKind.PROSE))
    index = len(result.blocks) - 1
    for sentence_start, sentence_end in sentences(text, start, end):
        result.sentences.append(Sentence(sentence_start, sentence_end, index))


def _cells(line: str, offset: int) -> tuple[Cell, ...]:
    bars = [i for i, ch in enumerate(line) if ch == "|"]
    cells = []
    for left, right in itertools.pairwise(bars):
        cells.append(Cell(offset + left + 1, offset + right, ""))
    if bars and line.strip() and not line.rstrip().endswith("|"):
        cells.append(Cell(offset + bars[-1] + 1, offset + len(line), ""))
    return tuple(cells)


def sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The sentences of `text[start:end]`, as spans in `text`."""
    spans: list[tuple[int, int]] = []
    at = start
    for match in _SENTENCE_END.finditer(text, start, end):
        if match.group(0) == "." and not _ends_sentence(text, match.start()):
            continue
        if text[at : match.end()].strip():
            spans.append((at, match.end()))
        at = match.end()
    if text[at:end].strip():
        spans.append((at, end))
    return spans


def _ends_sentence(text: str, point: int) -> bool:
    """A point followed by a space ends a sentence unless it ends a number, an initial or an abbreviation."""
    word = _WORD_BEFORE.search(text, max(0, point - 32), point)
    if word is None:
        return True
    before = word.group(1).strip("(\"'“”*")
    if before[-1:].isdigit():
        return _ends_after_number(text, point + 1)
    if len(before) == 1 and before.isalpha():
        return False
    return before.casefold() not in ABBREVIATIONS


def _ends_after_number(text: str, at: int) -> bool:
    """ "Rome 289. Berlin took …" ends a sentence; "30. November", "im 3. Quartal", "die 2. größte" do not: a
    number's point ends one only before a capitalised word that is no month and no ordinal's noun."""
    following = _WORD_AFTER.match(text, at)
    if following is None:
        return False
    word = following.group(1)
    if not word[0].isupper() or word.casefold() in ORDINAL_NOUNS:
        return False
    return month_number(word) is None


def clauses(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The clauses of the sentence `text[start:end]` (already masked of citations), as spans in `text`."""
    cuts = [start]
    for match in _CLAUSE_MARK.finditer(text, start, end):
        if match.group(0) == "," and _inside_figure(text, match.start()):
            continue
        cuts += [match.start(), match.end()]
    for match in CLAUSE_JOINS.finditer(text, start, end):
        cuts += [match.start(), match.end()]
    if _may_join_cjk(text):  # most answers have none of their words
        for match in CJK_CLAUSE_JOINS.finditer(text, start, end):
            cuts += [match.start(), match.end()]
    cuts.append(end)
    cuts.sort()
    spans = [(a, b) for a, b in zip(cuts[::2], cuts[1::2], strict=False) if text[a:b].strip()]
    return spans or [(start, end)]


def clause_at(spans: Sequence[tuple[int, int]], at: int, default: tuple[int, int]) -> tuple[int, int]:
    """The clause (of `spans`, in order) that holds position `at`, or `default` (found by bisection: a sentence
    may have thousands)."""
    index = bisect_right(spans, (at, _NO_END)) - 1
    if index >= 0 and spans[index][0] <= at < spans[index][1]:
        return spans[index]
    return default


@lru_cache(maxsize=8)
def _may_join_cjk(text: str) -> bool:
    """Can `CJK_CLAUSE_JOINS` match in `text`? Read once per text, for all its sentences."""
    return any(first in text for first in _CJK_JOIN_FIRSTS)


def _inside_figure(text: str, at: int) -> bool:
    """A comma or point between digits ("1,234", "12.5") is part of a figure, not a clause mark."""
    return 0 < at < len(text) - 1 and text[at - 1].isdigit() and text[at + 1].isdigit()
