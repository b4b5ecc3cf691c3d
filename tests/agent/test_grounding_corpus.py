"""The grounding corpus (`tests/agent/corpus/*.yaml`) through the real loop: every correct answer kept, every
near-miss caught.

Each case is a question, the tool calls a strong model made with the results they returned, and the final
answer it wrote. It runs as production runs it — the shipped configuration, the OpenAI-compatible brain over
HTTP to the fake `/v1/chat/completions`, the planner and the critic asked too (the critic is lenient: it
accepts every draft, so only Parley's own checks stand between a near-miss and the asker). A model that
wrote a near-miss insists on it when asked to repair it.

Answers cite the way real models cite (`style`): Parley's `[n]` tags, none at all, a tool's name, tags at the
end of a paragraph, footnotes, `【n】`, "according to …", a list of sources, Markdown, numbers in words, tables.
A correct answer must end `solved` with the answer as written except for the citations Parley attached where
the answer gave none; a near-miss must never end `solved`, and no sentence that failed the check may reach the
asker. The rates are printed at the end of the session, with the styles they cover.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest
import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from agent import Agent, MemoryRecorder, OpenAIBrain, RunStatus, ToolError
from agent.brains.chat import ChatCompletionsClient
from agent.grounding import check as check_answer
from agent.source import Source
from tests.agent.llm_agent import shipped_config
from tests.agent.toolbox import ScriptedTool
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.scripted_llm import ScriptedLLM, Unrecorded

CORPUS = Path(__file__).parent / "corpus"
LENIENT_CRITIC = {"satisfied": True, "gaps": [], "next_action": "finalize"}
OUTCOMES: dict[str, list[bool]] = defaultdict(list)  # "correct" / "wrong" → kept / caught, for the summary
STYLES: dict[str, set[str]] = defaultdict(set)  # "correct" / "wrong" → the citation styles run
_MARKER = re.compile(r"\s?\[\d{1,3}\]")


class Call(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    result: Any = None
    error: dict[str, str] | None = None

    @model_validator(mode="after")
    def _result_or_error(self) -> Call:
        if (self.result is None) == (self.error is None):
            raise ValueError("a call has exactly one of result and error")
        return self


class Case(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    lang: str
    kind: Literal["correct", "wrong"]
    wrong: str | None = None
    style: str | None = None  # how the answer cites (tagged when absent): untagged, tool_name, footnotes, …
    note: str | None = None
    question: str
    plan: list[dict[str, Any]] | None = None
    steps: list[list[Call]] = Field(default_factory=list)
    final: str

    def script(self) -> dict[str, Any]:
        decisions: list[dict[str, Any]] = [
            {"calls": [{"tool": call.tool, "args": call.args} for call in step]} for step in self.steps
        ]
        decisions += [{"final": self.final}] * 3  # asked to repair, the model writes the same answer again
        return {"decisions": decisions, "plan": self.plan, "critiques": [LENIENT_CRITIC] * 6}

    def tools(self) -> list[ScriptedTool]:
        answers: dict[str, list[Any]] = defaultdict(list)
        for step in self.steps:
            for call in step:
                answers[call.tool].append(
                    ToolError(call.error["code"], call.error.get("message", "")) if call.error else call.result
                )
        return [ScriptedTool(name, script) for name, script in answers.items()]

    def sources(self) -> list[Source]:
        successful = [(step, call) for step, calls in enumerate(self.steps, 1) for call in calls if call.error is None]
        return [
            Source(n, call.tool, f"c{n}", step, call.args, call.result) for n, (step, call) in enumerate(successful, 1)
        ]


def load_cases() -> list[Case]:
    cases = [
        Case.model_validate(raw)
        for path in sorted(CORPUS.glob("*.yaml"))
        for raw in yaml.safe_load(path.read_text(encoding="utf-8"))["cases"]
    ]
    assert len({case.id for case in cases}) == len(cases), "case ids must be unique"
    return cases


CASES = load_cases()


def test_grounding_corpus_is_as_large_and_varied_as_promised() -> None:
    correct = [c for c in CASES if c.kind == "correct"]
    wrong = [c for c in CASES if c.kind == "wrong"]
    assert len(correct) >= 40 and len(wrong) >= 20
    assert {"en", "zh", "de", "ja"} <= {c.lang for c in correct} and {"en", "zh", "de", "ja"} <= {c.lang for c in wrong}


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
async def test_grounding_corpus_case(case: Case, llm_server: FakeLLMServer, http_client: httpx.AsyncClient) -> None:
    llm_server.respond_with(ScriptedLLM(case.script(), unrecorded=Unrecorded.PROSE))
    client = ChatCompletionsClient(llm_server.base_url, "test-model", timeout_s=5.0, http_client=http_client)
    agent = Agent(OpenAIBrain(client), case.tools(), shipped_config([]), recorder=MemoryRecorder())

    result = await agent.run(case.question)

    STYLES[case.kind].add(case.style or "tagged")
    if case.kind == "correct":
        kept = result.status is RunStatus.SOLVED and only_citations_added(result.answer, case.final)
        OUTCOMES["correct"].append(kept)
        assert result.status is RunStatus.SOLVED, (result.termination_reason, result.answer)
        assert only_citations_added(result.answer, case.final), result.answer
        by_parley = [g for g in result.grounding if g.cited_by == "parley"]
        assert all("cited by Parley" in g.how for g in by_parley)
        if result.answer != case.final:
            assert by_parley, "Parley changed the answer without citing any figure itself"
        return
    OUTCOMES["wrong"].append(result.status is not RunStatus.SOLVED)
    assert result.status is not RunStatus.SOLVED, f"a near-miss got through ({case.note}): {result.grounding}"
    failed = [s.text for s in check_answer(case.final, case.sources(), case.question).sentences if s.problems]
    assert failed, "the checker finds nothing wrong in this near-miss on its own"
    leaked = [sentence for sentence in failed if sentence in result.answer]
    assert not leaked, f"a sentence that failed the check reached the asker: {leaked}"


def only_citations_added(shown: str, written: str) -> bool:
    """`shown` is `written` with nothing but citation tags (" [2]", "[2]") inserted."""
    i = j = 0
    while i < len(shown):
        marker = _MARKER.match(shown, i)
        if marker is not None and not written.startswith(marker.group(0), j):
            i = marker.end()  # a tag the answer did not have: Parley's
        elif j < len(written) and shown[i] == written[j]:
            i, j = i + 1, j + 1
        else:
            return False
    return j == len(written)


def test_only_citations_added_refuses_any_other_change() -> None:
    assert only_citations_added("Shanghai 28°C [1], Beijing 16°C[2].", "Shanghai 28°C, Beijing 16°C.")
    assert not only_citations_added("Shanghai 29°C [1].", "Shanghai 28°C.")
    assert not only_citations_added("Shanghai 28°C [1]", "Shanghai 28°C.")
    assert only_citations_added("Shanghai 28°C [1] and Beijing [2] 16°C [2].", "Shanghai 28°C and Beijing [2] 16°C.")


def corpus_summary() -> list[str]:
    """The two rates, for the end of the test session (tests/conftest.py prints them)."""
    lines = []
    for kind, verb in (("correct", "kept"), ("wrong", "caught")):
        outcomes = OUTCOMES.get(kind, [])
        if outcomes:
            share = 100 * sum(outcomes) / len(outcomes)
            styles = ", ".join(sorted(STYLES[kind]))
            lines.append(
                f"grounding corpus: {kind} answers {verb}: {sum(outcomes)}/{len(outcomes)} ({share:.0f} %) — {styles}"
            )
    return lines
