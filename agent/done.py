"""DoneChecklist: the Definition of Done of one question. No tool_calls does not mean done.

Each item is either `evidence` (a fact that must come from a successful tool result) or `answer` (checked
against the draft final's text). An evidence item is ticked by what really backs it:

- a successful result whose arguments or data name the item's terms — in any script ("Shanghai" ↔ "上海")
  or in a form the question gave ("東京（Tokyo）");
- a result reached through an earlier one: a value one call returned and a later call used as an argument
  carries the earlier call's names along ("ACME Corp" → acc_9f3 → the account's balance);
- a value a result returned that the final answer shows for the item, where no result names the item in
  its own words (`tick_from_values`): the result is the evidence, never the answer's text alone.

The planners (`planner.py`) write the checklist; this module only keeps and ticks it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agent.grounding.names import NamedText, fold, identity_values, returned_identities
from agent.source import Source

MAX_ITEMS = 8


class DoneItem(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    description: str = Field(min_length=1, max_length=300)
    kind: Literal["evidence", "answer"] = "evidence"
    tool: str | None = None  # evidence must come from this tool (any tool when None)
    mentions: list[str] = Field(default_factory=list)  # all must be named in the call, its data or what it carried
    answer_terms: list[str] = Field(default_factory=list)  # one of them must appear in the answer


@dataclass(frozen=True)
class Evidence:
    """A successful observation, as the checklist sees it: what it names, and what it carried along."""

    tool: str
    tool_call_id: str
    text: NamedText


class EvidenceLog:
    """The run's evidence, in order. Each new result inherits the names of the results its arguments came from."""

    def __init__(self) -> None:
        self._by_value: dict[str, list[Evidence]] = {}

    def add(self, source: Source) -> Evidence:
        carried = [
            earlier.text.text
            for value in identity_values(source.arguments)
            for earlier in self._by_value.get(value, [])
        ]
        own = json.dumps([source.arguments, source.data], ensure_ascii=False, default=str)
        evidence = Evidence(source.tool, source.tool_call_id, NamedText("\n".join([own, *dict.fromkeys(carried)])))
        for value in returned_identities(source):
            self._by_value.setdefault(value, []).append(evidence)
        return evidence


@dataclass
class DoneChecklist:
    items: list[DoneItem]
    ticks: dict[int, str | None] = field(default_factory=dict)  # item index → tool_call_id that ticked it
    aliases: dict[str, list[str]] = field(default_factory=dict)  # folded name → its other forms (from the question)

    def tick_from(self, evidence: Sequence[Evidence]) -> list[tuple[DoneItem, str]]:
        """Tick evidence items that these observations prove; returns what was newly ticked."""
        newly: list[tuple[DoneItem, str]] = []
        for ev in evidence:
            for index, item in self._open(ev.tool):
                if all(ev.text.names(term, self.aliases.get(fold(term), ())) for term in item.mentions):
                    self.ticks[index] = ev.tool_call_id
                    newly.append((item, ev.tool_call_id))
        return newly

    def tick_from_values(
        self, backed: Sequence[tuple[str, Source]], evidence: Sequence[Evidence]
    ) -> list[tuple[DoneItem, str]]:
        """Tick evidence items no result names in its own words ("月活" for `metric: mau`, "ドローン" for
        `type: drone`) by the result whose value the answer gives the item: `backed` pairs a clause of an answer
        that passed every check with a result one of its figures rests on. Never by a clause without such a
        value ("Shenzhen could not be fetched"), never by a result that names another item ("Shenzhen 16 °C"
        with Beijing's 16): the result is the evidence, the answer only says which item it answers."""
        by_call = {ev.tool_call_id: ev for ev in evidence}
        newly: list[tuple[DoneItem, str]] = []
        for clause, source in backed:
            ev = by_call.get(source.tool_call_id)
            if ev is None:
                continue
            words = NamedText(clause)
            for index, item in self._open(source.tool):
                if not item.mentions or not all(words.names(t, self.aliases.get(fold(t), ())) for t in item.mentions):
                    continue
                others = [
                    t
                    for j, other in enumerate(self.items)
                    if j != index and other.kind == "evidence"
                    for t in other.mentions
                ]
                if any(ev.text.names(t, self.aliases.get(fold(t), ())) for t in others):
                    continue
                self.ticks[index] = source.tool_call_id
                newly.append((item, source.tool_call_id))
        return newly

    def _open(self, tool: str) -> list[tuple[int, DoneItem]]:
        return [
            (index, item)
            for index, item in enumerate(self.items)
            if item.kind == "evidence" and index not in self.ticks and (not item.tool or fold(item.tool) == fold(tool))
        ]

    def open_evidence(self) -> list[DoneItem]:
        return [item for i, item in enumerate(self.items) if item.kind == "evidence" and i not in self.ticks]

    def unmet_in_answer(self, answer: str) -> list[DoneItem]:
        folded = fold(answer)
        return [
            item
            for item in self.items
            if item.kind == "answer" and item.answer_terms and not any(fold(t) in folded for t in item.answer_terms)
        ]

    def gaps_for(self, answer: str | None) -> list[str]:
        """What is still missing for this answer (or mid-run, before an answer)."""
        missing = [item.description for item in self.open_evidence()]
        if answer is not None:
            missing += [item.description for item in self.unmet_in_answer(answer)]
        return missing

    def completed(self, answer: str | None = None) -> list[str]:
        done = [item.description for i, item in enumerate(self.items) if i in self.ticks]
        if answer is not None:
            unmet = self.unmet_in_answer(answer)
            done += [item.description for item in self.items if item.kind == "answer" and item not in unmet]
        return done

    def missing(self, answer: str | None = None) -> list[str]:
        open_answer = [item for item in self.items if item.kind == "answer"]
        if answer is not None:
            open_answer = self.unmet_in_answer(answer)
        return [item.description for item in self.open_evidence()] + [item.description for item in open_answer]

    def ticked(self) -> list[tuple[DoneItem, str | None]]:
        return [(self.items[i], call_id) for i, call_id in sorted(self.ticks.items())]

    @property
    def progress(self) -> int:
        return len(self.ticks)

    @property
    def has_several_tasks(self) -> bool:
        return len(self.items) > 1
