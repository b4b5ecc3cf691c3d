"""DoneChecklist: the Definition of Done of one question. No tool_calls does not mean done.

Each item is either `evidence` (ticked only by a successful observation that mentions its terms) or
`answer` (checked against the draft final's text). The LLM plans the checklist; `plan_by_rules` is the
fallback when it cannot.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent.brains.base import Brain, BrainError, Message

MAX_ITEMS = 8


class DoneItem(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    description: str = Field(min_length=1, max_length=300)
    kind: Literal["evidence", "answer"] = "evidence"
    tool: str | None = None  # evidence must come from this tool (any tool when None)
    mentions: list[str] = Field(default_factory=list)  # all must appear in the call's arguments or data
    answer_terms: list[str] = Field(default_factory=list)  # one of them must appear in the answer


class DonePlan(BaseModel):
    """What the LLM planner returns."""

    items: list[DoneItem] = Field(min_length=1, max_length=MAX_ITEMS)


@dataclass(frozen=True)
class Evidence:
    """A successful observation, as the checklist sees it."""

    tool: str
    tool_call_id: str
    text: str  # arguments and data, folded for matching


def fold(text: str) -> str:
    return unicodedata.normalize("NFC", text).casefold().strip()


def evidence_text(arguments: Any, data: Any) -> str:
    return fold(json.dumps([arguments, data], ensure_ascii=False, default=str))


@dataclass
class DoneChecklist:
    items: list[DoneItem]
    ticks: dict[int, str | None] = field(default_factory=dict)  # item index → tool_call_id that ticked it

    def tick_from(self, evidence: Iterable[Evidence]) -> list[tuple[DoneItem, str]]:
        """Tick evidence items that these observations prove; returns what was newly ticked."""
        newly: list[tuple[DoneItem, str]] = []
        for ev in evidence:
            for index, item in enumerate(self.items):
                if item.kind != "evidence" or index in self.ticks:
                    continue
                if item.tool and fold(item.tool) != fold(ev.tool):
                    continue
                if all(fold(term) in ev.text for term in item.mentions):
                    self.ticks[index] = ev.tool_call_id
                    newly.append((item, ev.tool_call_id))
        return newly

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

    def as_dicts(self) -> list[dict[str, Any]]:
        return [item.model_dump() for item in self.items]


# --- the rule-based fallback planner -----------------------------------------------------------------

_CLAUSE = re.compile(r"[，,。;；!?！？\n]+|(?<=[a-z])\.\s")
_ENUMERATION = re.compile(r"\s*(?:以及|和|与|跟|及|、|同|vs\.?|versus|/|&)\s*|\s+(?:and|or|plus)\s+", re.IGNORECASE)
_CJK_TASK_WORDS = re.compile(
    r"(请问|请|帮我|帮忙|查询|查一下|查查|查|看看|看一下|告诉我|今天|现在|目前|实时|当前|的|天气|气温|温度|情况|怎么样|如何)"
)
_EN_STOP = {
    "what",
    "what's",
    "whats",
    "how",
    "is",
    "are",
    "the",
    "a",
    "an",
    "in",
    "at",
    "of",
    "for",
    "to",
    "me",
    "tell",
    "check",
    "get",
    "show",
    "find",
    "look",
    "up",
    "weather",
    "temperature",
    "current",
    "today",
    "now",
    "please",
    "compare",
    "and",
    "vs",
    "much",
    "many",
    "did",
    "does",
    "do",
    "which",
    "who",
    "when",
    "where",
    "why",
    "i",
    "it",
}
_COMPARISON = re.compile(r"对比|比较|相比|哪个|哪里更|compare|comparison|versus|\bvs\b|difference|which is", re.I)
_ADVICE = re.compile(r"建议|推荐|穿什么|穿衣|该穿|should i|advice|advise|recommend|suggest|what to wear", re.I)
_COMPARISON_TERMS = [
    "对比",
    "比",
    "相比",
    "更",
    "高",
    "低",
    "差",
    "而",
    "than",
    "warmer",
    "colder",
    "higher",
    "lower",
    "compared",
    "whereas",
    "while",
    "difference",
    "both",
    "versus",
    "vs",
]
_ADVICE_TERMS = ["建议", "推荐", "穿", "带", "wear", "bring", "recommend", "suggest", "should", "advice", "take"]
_CAPITALISED = re.compile(r"\b([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)")


def plan_by_rules(question: str, tool_names: Sequence[str]) -> DoneChecklist:
    """A checklist from the question's shape: named things it asks about, comparison, advice."""
    entities = _entities(question)
    items = [DoneItem(description=f"Facts about {name} obtained from a tool", mentions=[name]) for name in entities][
        : MAX_ITEMS - 2
    ]
    if not items and tool_names and _asks_for_facts(question):
        items.append(DoneItem(description="At least one tool result backs the answer"))
    if _COMPARISON.search(question):
        items.append(DoneItem(description="The answer compares them", kind="answer", answer_terms=_COMPARISON_TERMS))
    if _ADVICE.search(question):
        items.append(
            DoneItem(description="The answer gives the advice asked for", kind="answer", answer_terms=_ADVICE_TERMS)
        )
    if not items:
        items.append(DoneItem(description="The question is answered", kind="answer"))
    return DoneChecklist(items)


def _entities(question: str) -> list[str]:
    found: list[str] = []
    for clause in _CLAUSE.split(question):
        parts = [p for p in _ENUMERATION.split(clause) if p and p.strip()]
        if len(parts) > 1:
            for part in parts:
                name = _strip_task_words(part)
                if name and len(name) <= 30:
                    found.append(name)
        for match in _CAPITALISED.finditer(clause):
            words = [w for w in match.group(1).split() if w.lower().strip("'s") not in _EN_STOP]
            name = " ".join(words).removesuffix("'s").removesuffix("'")
            if name:
                found.append(name)
    unique: list[str] = []
    for name in found:
        if not any(fold(name) == fold(seen) for seen in unique):
            unique.append(name)
    return unique


def _strip_task_words(part: str) -> str:
    if re.search(r"[\u3040-\u30ff\u3400-\u9fff]", part):
        return _CJK_TASK_WORDS.sub("", part).strip(" ?？")
    return ""  # in alphabetic scripts the capitalised-name rule finds the names


def _asks_for_facts(question: str) -> bool:
    stripped = question.strip()
    cjk = len(re.findall(r"[\u3040-\u30ff\u3400-\u9fff]", stripped))
    return cjk >= 4 or len(stripped) >= 12 or "?" in stripped or "？" in stripped or any(c.isdigit() for c in stripped)


# --- the LLM planner ----------------------------------------------------------------------------------

PLANNER_PROMPT = """Write the Definition of Done for the user's question: the checklist an answer must satisfy.
Reply with one JSON object only: {"items": [ ... ]} with 1 to 8 items, each either
  {"description": "...", "kind": "evidence", "tool": "<tool name or null>", "mentions": ["terms the tool call
   or its result must contain"]}  — a fact that must come from a successful tool result, or
  {"description": "...", "kind": "answer", "answer_terms": ["words, one of which the answer must contain"]}.
Use the user's language for descriptions and terms. Tools: {tools}"""


@dataclass(frozen=True)
class PlanOutcome:
    checklist: DoneChecklist
    source: Literal["llm", "rules"]
    note: str = ""
    llm_called: bool = False
    tokens: int = 0


async def plan(brain: Brain, question: str, tool_names: Sequence[str], *, use_llm: bool) -> PlanOutcome:
    """The checklist planned by the LLM, or by the rules when it cannot (the note says why)."""
    if not use_llm:
        return PlanOutcome(plan_by_rules(question, tool_names), "rules", "planner set to rules")
    messages = [
        Message("system", PLANNER_PROMPT.replace("{tools}", ", ".join(tool_names) or "none")),
        Message("user", question),
    ]
    try:
        completion = await brain.complete(messages, purpose="plan")
    except BrainError as exc:
        return PlanOutcome(plan_by_rules(question, tool_names), "rules", f"LLM planner unavailable: {exc}")
    match = re.search(r"\{.*\}", completion.text or "", re.DOTALL)
    try:
        parsed = DonePlan.model_validate(json.loads(match.group(0))) if match else None
    except ValueError:
        parsed = None
    tokens = completion.usage.total
    if parsed is None:
        note = "LLM planner answered something that is not a plan"
        return PlanOutcome(plan_by_rules(question, tool_names), "rules", note, True, tokens)
    # An item bound to a tool that does not exist could never be ticked: it keeps its terms, any tool may tick it.
    known = {fold(name) for name in tool_names}
    items = [
        item.model_copy(update={"tool": None}) if item.tool and fold(item.tool) not in known else item
        for item in parsed.items
    ]
    unknown = sorted({item.tool for item in parsed.items if item.tool and fold(item.tool) not in known})
    note = (
        f"the plan named tools that do not exist ({', '.join(unknown)}); any tool may tick those items"
        if unknown
        else ""
    )
    return PlanOutcome(DoneChecklist(items), "llm", note, True, tokens)
