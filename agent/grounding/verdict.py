"""Verdict: what the fact-checker says of an answer (`Grounding`) and of each of its sentences (`SentenceCheck`).

A sentence keeps its own verdict, so a partial answer can quote the sentences that passed; the answer comes
back as people see it, with the citations Parley attached where the model gave none.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.grounding.attribution import Attachment
from agent.result import Citation, GroundedFigure
from agent.source import Source

UNBACKED = "[not backed by any result]"  # what stands where a figure no result backs was: it is never shown


@dataclass
class SentenceCheck:
    """One sentence of the answer and what is wrong with it (nothing, when it passed)."""

    start: int
    end: int
    text: str  # as the model wrote it
    cited: list[Source] = field(default_factory=list)  # what it cites, or Parley cites for it
    problems: list[str] = field(default_factory=list)  # for the model (they quote the figures)
    unbacked: list[tuple[int, int, str]] = field(default_factory=list)  # spans in `text` and why, for people
    facts: int = 0  # figures and dates it states
    shown: str = ""  # as people see it: with the citations Parley attached

    def without_unbacked(self) -> str:
        """The sentence with every unbacked figure or date replaced by a plain marker: it may be shown, they may
        not."""
        text = self.text
        for start, end, _ in sorted(self.unbacked, reverse=True):
            text = text[:start] + UNBACKED + text[end:]
        return text

    @property
    def verified(self) -> bool:
        return not self.problems and (bool(self.cited) or self.facts == 0)


@dataclass
class Grounding:
    """The verdict on a whole answer: what it cites, what is wrong, how each figure is backed, sentence by
    sentence — and the answer as people see it, with the citations Parley attached."""

    answer: str = ""
    cited: list[Source] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    grounded: list[GroundedFigure] = field(default_factory=list)
    sentences: list[SentenceCheck] = field(default_factory=list)
    attachments: list[Attachment] = field(default_factory=list)
    backed: list[tuple[str, Source]] = field(default_factory=list)  # a clause's words, a result one of its figures
    #                                                                  shows: what the answer says each result is about

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def citations(self) -> list[Citation]:
        """The results the answer rests on, as its footnotes in tag order (with the results their calls used)."""
        return [source.citation() for source in sorted(self.cited, key=lambda s: s.number)]
