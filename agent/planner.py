"""Planner: writes a question's Definition of Done — by rules, or by the LLM where that pays.

The rules read the question's structure, not its vocabulary: the things it enumerates ("Shanghai and
Beijing", "上海和北京", "東京と大阪", "Umsatz und Gewinn") become one evidence item each, a value of a tool's
`enum` parameter that the question names becomes an item bound to that tool, and asking to compare or for
advice adds an item on the answer. A question that names one thing gets one item: some tool result backs
the answer. Small talk gets none. Names given in two forms ("北京（Beijing）") are one item with an alias.

The LLM planner is asked only where a question is risky — several asks in one message, a long question, JSON
output, a policy in play (`planner: auto`, the default) — or always (`llm`), or never (`rules`); the rules
stand in whenever it fails or answers something that is not a plan.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from agent.brains.base import Brain, BrainError
from agent.done import MAX_ITEMS, DoneChecklist, DoneItem
from agent.grounding.names import aliases_in, fold, has_cjk, romanised
from agent.messages import Message
from agent.plain import plain_text
from agent.small_talk import is_small_talk
from agent.text import clip, shorten
from agent.tools.base import ToolSpec

MAX_NAME_WORDS = 4
MAX_NAME_CHARS = 60
LONG_QUESTION_CHARS = 240

_SENTENCE = re.compile(r"[。!?！？\n]+|(?<=[a-z])\.\s")
_CONJUNCTION = re.compile(
    r"\s+(?:and|or|vs\.?|versus|plus|und|oder|sowie|et|ou|y|o|e|ed|en|of)\s+|\s*(?:以及|和|与|跟|及|或|、|と|や|/|&|\bvs\.?)\s*",
    re.IGNORECASE,
)
_LIST_COMMA = re.compile(r",\s*|，|、")
_LATIN_WORD = re.compile(r"[\w'’.-]+", re.UNICODE)
_LEAD_WORDS = frozenset(
    (
        *("compare", "what", "what's", "how", "which", "show", "tell", "give", "check", "find", "list", "get"),
        *("is", "are", "does", "do", "did", "can", "could", "please", "vergleiche", "vergleich", "wie", "was"),
        *("welche", "welcher", "zeig", "zeige", "comparer", "compare", "quel", "quelle", "comment", "compara"),
        *("qué", "cuál", "cómo", "muestra", "confronta", "quale"),
    )
)
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")
# Words around a CJK name that are not part of it: the asking, the time, the particles, what is asked.
_CJK_NOT_NAME = re.compile(
    r"请问|请|帮我|帮忙|查询|查一下|查查|查|看看|看一下|告诉我|今天|昨天|明天|现在|目前|实时|当前|去年|今年|分别|各|"
    r"一共|总共|合计|总计|加起来|各自|多少|几|哪个|哪些|谁|怎么样|如何|情况|天气|气温|温度|的|是|有|都|吗|呢|了|对比|比较|"
    r"用表格|表格|列出|列举|给出|显示|统计|"
    r"教えて|について|今日|昨日|明日|現在|今期|前期|前年|昨年|今年|来年|先月|今月|来月|先週|今週|来週|今|天気|気温|いくら|"
    r"どう|どれ|どちら|どっち|比較|比べて|比べると|比べ|から|まで|の|は|が|を|に|で|へ|も"
)
_CJK_KINDS = ("小组", "团队", "部门", "組", "组", "部", "市", "省", "区", "県", "都")
_COMPARISON = re.compile(
    r"对比|比较|相比|哪个|哪里更|比較|比べ|どちら|違い|compare|comparison|versus|\bvs\b|difference|which (?:is|one)"
    r"|vergleich\w*|unterschied|welche[rs]? (?:\w+ )?(?:ist|war|hat|sind) (?:\w+ )?(?:mehr|weniger|\w+er)\b"
    r"|compar\w*|différence|lequel|laquelle|diferencia|cuál (?:es|fue) (?:el|la) (?:más|menos)",
    re.IGNORECASE,
)
_ADVICE = re.compile(
    r"建议|推荐|穿什么|穿衣|该穿|アドバイス|おすすめ|何を着|should i|advice|advise|recommend|suggest|what to wear"
    r"|\bempfehl\w*|\brat\b|\bratschlag|sollte ich|\bconseil\w*|\brecommand\w*"
    r"|\bconsejo\w*|\brecomiend\w*|\brecomendaci\w*",
    re.IGNORECASE,
)
COMPARISON_TERMS = [
    "对比", "比", "相比", "更", "高", "低", "差", "而", "都", "より", "高い", "低い", "一方", "同じ", "than",
    "warmer", "colder", "higher", "lower", "more", "less", "larger", "smaller", "compared", "whereas", "while",
    "difference", "both", "versus", "vs", "same", "als", "wärmer", "kälter", "höher", "niedriger", "mehr",
    "weniger", "während", "beide", "unterschied", "plus", "moins", "que", "tandis", "différence", "más", "menos",
    "mientras", "ambos", "diferencia", "por encima", "por debajo", "superior", "inferior", "faster", "slower",
    "ahead", "behind", "above", "below", "schneller", "langsamer", "rapide", "lent", "devant", "rápido", "lento",
    "快", "慢", "多", "少", "差", "ほう", "速い", "遅い", "差", "上回", "下回", "比べ", "倍",
]  # fmt: skip
ADVICE_TERMS = [
    "建议", "推荐", "穿", "带", "おすすめ", "着", "持", "wear", "bring", "recommend", "suggest", "should", "advice",
    "take", "empfehl", "trag", "mitnehm", "sollt", "conseil", "recommand", "porte", "prend", "recomiend",
    "recomend", "lleva", "consejo",
]  # fmt: skip


class DonePlan(BaseModel):
    """What the LLM planner returns."""

    items: list[DoneItem] = Field(min_length=1, max_length=MAX_ITEMS)


@dataclass(frozen=True)
class PlanOutcome:
    checklist: DoneChecklist
    source: Literal["llm", "rules"]
    note: str = ""
    llm_called: bool = False
    tokens: int = 0


# --- the rules -----------------------------------------------------------------------------------------------


def plan_by_rules(question: str, tools: Sequence[ToolSpec]) -> DoneChecklist:
    """A checklist from the question's structure and the tools' parameters (see the module docstring)."""
    aliases = aliases_in(question)
    if is_small_talk(question):
        return DoneChecklist([], aliases=aliases)
    items: list[DoneItem] = []
    for name in _unique(_enumerated(question), aliases):
        items.append(DoneItem(description=_limit(f"Facts about {name} obtained from a tool"), mentions=[name]))
    for tool, value in _enum_values(question, tools):
        items.append(DoneItem(description=_limit(f"{value} from {tool}"), tool=tool, mentions=[value]))
    items = items[: MAX_ITEMS - 2]
    if not items and tools:
        items.append(DoneItem(description=_limit(f"A tool result that answers “{shorten(question, 120)}”")))
    if _COMPARISON.search(question):
        items.append(DoneItem(description="The answer compares them", kind="answer", answer_terms=COMPARISON_TERMS))
    if _ADVICE.search(question):
        items.append(
            DoneItem(description="The answer gives the advice asked for", kind="answer", answer_terms=ADVICE_TERMS)
        )
    if not items:
        items.append(DoneItem(description="The question is answered", kind="answer"))
    return DoneChecklist(items, aliases=aliases)


def _enumerated(question: str) -> list[str]:
    """The things a question lists: both sides of each "A and B" (and the rest of "A, B and C")."""
    names: list[str] = []
    for sentence in _SENTENCE.split(question):
        for conjunction in _CONJUNCTION.finditer(sentence):
            right = _leading_name(sentence[conjunction.end() :])
            segments = _LIST_COMMA.split(sentence[: conjunction.start()])
            left = [_bare(segments[-1])] if _is_name(_bare(segments[-1])) else []
            if not left:
                tail = _trailing_name(segments[-1])
                left = [tail] if tail else []
            else:  # "Paris, Berlin and Rome": walk back over the short segments of the list
                for segment in reversed(segments[:-1]):
                    if _is_name(_bare(segment)):
                        left.insert(0, _bare(segment))
                        continue
                    tail = _trailing_name(segment)
                    if tail:
                        left.insert(0, tail)
                    break
            if right and left:
                names += [*(_parallel(name, right) for name in left), right]
    return [_without_kind(name) for name in names]


def _parallel(left: str, right: str) -> str:
    """ "die Filialen Berlin und Hamburg": a list's items are alike, so a one-word right item makes the left one
    its last word (German capitalises every noun: "Filialen" is no part of the name)."""
    words = left.split()
    if len(right.split()) == 1 and len(words) > 1 and not has_cjk(left):
        return words[-1]
    return left


def _without_kind(name: str) -> str:
    """ "数据平台组" → "数据平台", "上海市" → "上海": what kind of thing a CJK name is, is no part of its name."""
    if has_cjk(name):
        for suffix in _CJK_KINDS:
            if name.endswith(suffix) and len(name) - len(suffix) >= 2:
                return name[: -len(suffix)]
    return name


def _bare(text: str) -> str:
    text = re.sub(r"[（(][^)）]*[)）]", "", text).strip(" \t\"'“”‘’「」?？!！:：")
    first, _, rest = text.partition(" ")
    # Grammar capitalises a sentence's first word: "Compare Beijing and …" names Beijing, not "Compare Beijing".
    return rest.strip() if rest and first.casefold() in _LEAD_WORDS else text


def _is_name(text: str) -> bool:
    """A whole segment that is one name: a CJK run, or up to four words that each look like a name."""
    if not text or len(text) > MAX_NAME_CHARS:
        return False
    if has_cjk(text):
        return _cjk_name(text, trailing=True) == text
    words = text.split()
    return 0 < len(words) <= MAX_NAME_WORDS and all(_name_like(word) for word in words)


def _trailing_name(text: str) -> str | None:
    text = _bare(text)
    if has_cjk(text[-1:]):
        return _cjk_name(text, trailing=True)
    words = _LATIN_WORD.findall(text)
    taken: list[str] = []
    for word in reversed(words):
        if not _name_like(word) or len(taken) == MAX_NAME_WORDS:
            break
        taken.insert(0, word)
    return " ".join(taken) or None


def _leading_name(text: str) -> str | None:
    text = _bare(re.split(r"[,，;；:：?？!！.。]", text, maxsplit=1)[0])
    if has_cjk(text[:1]):
        return _cjk_name(text, trailing=False)
    taken: list[str] = []
    for word in _LATIN_WORD.findall(text):
        if not _name_like(word) or len(taken) == MAX_NAME_WORDS:
            break
        taken.append(word)
    return " ".join(taken) or None


def _cjk_name(text: str, *, trailing: bool) -> str | None:
    runs = _CJK_RUN.findall(text)
    if not runs:
        return None
    run = runs[-1] if trailing else runs[0]
    if not trailing and _CJK_NOT_NAME.match(run):
        return None  # "東京と大阪、今日は…": what follows the comma is a new clause, not a list
    pieces = [piece for piece in _CJK_NOT_NAME.split(run) if piece]
    if not pieces:
        return None
    return pieces[-1] if trailing else pieces[0]


def _name_like(word: str) -> bool:
    """Capitalised, an acronym, or a code with digits ("FAC-2026-118"): what names look like in Latin scripts."""
    core = word.strip("'’.-")
    return bool(core) and (core[0].isupper() or any(c.isdigit() for c in core))


def _unique(names: Sequence[str], aliases: dict[str, list[str]]) -> list[str]:
    """One name per thing: the same in another case, spelling or script, or its alias, is not a second item."""
    kept: list[str] = []
    for name in names:
        forms = {fold(name), "".join(romanised(name)), *(fold(a) for a in aliases.get(fold(name), []))}
        if any(forms & {fold(seen), "".join(romanised(seen))} for seen in kept):
            continue
        kept.append(name)
    return kept


def _enum_values(question: str, tools: Sequence[ToolSpec]) -> list[tuple[str, str]]:
    folded = fold(question)
    found: list[tuple[str, str]] = []
    for tool in tools:
        properties = tool.parameters.get("properties") if isinstance(tool.parameters, dict) else None
        for spec in (properties or {}).values():
            for value in spec.get("enum", []) if isinstance(spec, dict) else []:
                if isinstance(value, str) and len(value) >= 2 and fold(value) in folded:
                    found.append((tool.name, value))
    return found


def _limit(description: str) -> str:
    return clip(description, 300)


# --- the LLM planner -----------------------------------------------------------------------------------------

PLANNER_PROMPT = """Write the Definition of Done for the user's question: the checklist an answer must satisfy.
Reply with one JSON object only: {"items": [ ... ]} with 1 to 8 items, each either
  {"description": "...", "kind": "evidence", "tool": "<tool name or null>", "mentions": ["terms the tool call
   or its result must contain"]}  — a fact that must come from a successful tool result, or
  {"description": "...", "kind": "answer", "answer_terms": ["words, one of which the answer must contain"]}.
Use the user's language for descriptions and terms. Tools: {tools}"""


def is_risky(question: str, *, json_output: bool, policies: bool) -> bool:
    """Where the LLM planner pays: several asks in one message, a long question, JSON output, a policy in play.

    An enumeration, a comparison or a request for advice is not enough: the rules read those themselves."""
    asks = question.count("?") + question.count("？") + len(_SENTENCE.findall(question.strip().rstrip("?？!！.。")))
    return asks > 1 or len(question) > LONG_QUESTION_CHARS or json_output or policies


async def plan(
    brain: Brain,
    question: str,
    tools: Sequence[ToolSpec],
    *,
    planner: Literal["llm", "rules", "auto"],
    json_output: bool = False,
    policies: bool = False,
) -> PlanOutcome:
    """The checklist planned by the LLM where it pays, or by the rules (the note says why)."""
    rules = plan_by_rules(question, tools)
    if not rules.items:
        return PlanOutcome(rules, "rules", "small talk: no facts to back")
    if planner == "rules":
        return PlanOutcome(rules, "rules", "planner set to rules")
    # A replayed session replays what its model did, the plan included; a live one asks where it pays.
    if planner == "auto" and not brain.replayed and not is_risky(question, json_output=json_output, policies=policies):
        return PlanOutcome(rules, "rules", "a simple question: planned by rules")
    names = ", ".join(tool.name for tool in tools) or "none"
    messages = [Message("system", PLANNER_PROMPT.replace("{tools}", names)), Message("user", question)]
    try:
        completion = await brain.complete(messages, purpose="plan")
    except BrainError as exc:
        return PlanOutcome(rules, "rules", plain_text(f"LLM planner unavailable: {exc}"))
    parsed = _parse_plan(completion.text)
    tokens = completion.usage.total
    if parsed is None:
        return PlanOutcome(rules, "rules", "LLM planner answered something that is not a plan", True, tokens)
    # An item bound to a tool that does not exist could never be ticked: it keeps its terms, any tool may tick it.
    known = {fold(tool.name) for tool in tools}
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
    return PlanOutcome(DoneChecklist(items, aliases=rules.aliases), "llm", note if unknown else "", True, tokens)


def _parse_plan(text: str) -> DonePlan | None:
    match = re.search(r"\{.*\}", text or "", re.DOTALL)
    if match is None:
        return None
    try:
        return DonePlan.model_validate(json.loads(match.group(0)))
    except (ValueError, RecursionError):
        return None
