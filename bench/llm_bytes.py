"""Bytes sent to the LLM per run: what one question costs on the wire, request by request.

One scenario, the same as the one used to measure other agent frameworks: one tool, `get_weather`
("Current weather for one city", parameters {"type":"object","properties":{"city":{"type":"string"}},
"required":["city"]}) that answers a small JSON object per city, and the question "What's the weather in
Paris, Berlin, Rome, Madrid and Lisbon right now?". The model calls the tool once per turn, one city per
turn in that order (5 sequential turns), then answers about 200 characters citing each result [1]..[5].

The model is the fake OpenAI-compatible endpoint of the tests (`tests.fakes.llm_server`, a real HTTP
server on 127.0.0.1): a request with `tools` is a ReAct turn ("decide") and is answered from the number of
tool results already in its messages (k < 5: a call for city k+1; 5: the final text); the planner
("plan", system prompt "Write the Definition of Done…") gets a one-item plan, the critic ("critique",
"You are the quality checker…") a satisfied verdict; anything else ("other") gets that verdict too. The
engine is the real one: `Agent` with `OpenAIBrain` on `ChatCompletionsClient`, Parley's default
`AgentConfig` (equal to the shipped config/parley.yaml except its tools) and only `get_weather`. Every
request's body is measured as the server received it (exact bytes; KiB = 1024 B).

    .venv/bin/python bench/llm_bytes.py                    # 3 runs, the shipped defaults
    .venv/bin/python bench/llm_bytes.py --config config/parley.yaml   # another YAML (its tools ignored)
    .venv/bin/python bench/llm_bytes.py --pydantic-schema  # the tool's schema as pydantic writes it
    .venv/bin/python bench/llm_bytes.py --dump /tmp/parley-bodies.json   # every body, for reading

The issue's figures (its own scenario): 18.2 KiB per run for Parley against 8.7 KiB for LangGraph and the
OpenAI Agents SDK. On this scenario, measured with the frameworks driven against the same fake server
(bench/RESULTS.md): LangGraph 6.03 KiB and the OpenAI Agents SDK 6.03 KiB (6 requests each, no system
prompt), smolagents 29.55 KiB; Parley 15.03 KiB before the lean-prompt work, 7.67 KiB after.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agent import (
    Agent,
    AgentConfig,
    ChatCompletionsClient,
    FunctionTool,
    OpenAIBrain,
    RunResult,
    RunStatus,
)
from agent.brains.base import GIVE_UP
from tests.fakes.llm_server import (
    FakeLLMServer,
    FakeReply,
    completion_with_content,
    completion_with_tool_calls,
)

TOOL_NAME = "get_weather"
TOOL_DESCRIPTION = "Current weather for one city"
TOOL_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
QUESTION = "What's the weather in Paris, Berlin, Rome, Madrid and Lisbon right now?"
CITIES = ("Paris", "Berlin", "Rome", "Madrid", "Lisbon")
WEATHER = {
    "Paris": (18, "cloudy"),
    "Berlin": (12, "rain"),
    "Rome": (21, "sunny"),
    "Madrid": (24, "sunny"),
    "Lisbon": (20, "windy"),
}
FINAL_TEXT = (
    "Right now: Paris is 18 °C and cloudy [1]; Berlin is 12 °C with rain [2]; Rome is 21 °C and sunny [3]; "
    "Madrid is 24 °C and sunny [4]; Lisbon is 20 °C and windy [5]. All five come from get_weather."
)
PLAN = {
    "items": [
        {
            "description": "Weather for each city from get_weather",
            "kind": "evidence",
            "tool": "get_weather",
            "mentions": [],
        }
    ]
}
VERDICT = {"satisfied": True, "gaps": [], "next_action": "finalize"}
KINDS = ("decide", "plan", "critique", "other")
ISSUE_FIGURES = "issue: Parley 18.2 KiB per run; LangGraph and the OpenAI Agents SDK 8.7 KiB"


class CityArgs(BaseModel):
    city: str


class ScenarioCityArgs(CityArgs):
    """The same arguments, with the scenario's JSON Schema to the byte (pydantic would add titles)."""

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return json.loads(json.dumps(TOOL_PARAMETERS))


def weather_tool(pydantic_schema: bool) -> FunctionTool:
    async def get_weather(args: CityArgs) -> dict[str, Any]:
        temp_c, condition = WEATHER.get(args.city, (15, "unknown"))
        return {"city": args.city, "temp_c": temp_c, "condition": condition}

    model = CityArgs if pydantic_schema else ScenarioCityArgs
    return FunctionTool(TOOL_NAME, TOOL_DESCRIPTION, model, get_weather)


# --- the fake model --------------------------------------------------------------------------------------


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def kind_of(body: Any) -> str:
    if not isinstance(body, dict):
        return "other"
    if body.get("tools"):
        return "decide"
    messages = body.get("messages") or []
    system = next((_text(m.get("content")) for m in messages if m.get("role") == "system"), "")
    if system.startswith("Write the Definition of Done"):
        return "plan"
    if system.startswith("You are the quality checker"):
        return "critique"
    return "other"


def answer(body: Any) -> FakeReply:
    kind = kind_of(body)
    if kind == "decide":
        done = sum(1 for message in body.get("messages") or [] if message.get("role") == "tool")
        if done < len(CITIES):
            return completion_with_tool_calls([(f"call_{done + 1}", TOOL_NAME, {"city": CITIES[done]})])
        return completion_with_content(FINAL_TEXT)
    return completion_with_content(json.dumps(PLAN if kind == "plan" else VERDICT))


# --- measuring -------------------------------------------------------------------------------------------


def compact(value: Any) -> int:
    """Bytes of `value` as compact UTF-8 JSON (how httpx encodes a request body)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode())


@dataclass(frozen=True)
class Request:
    kind: str
    size: int  # the body's exact bytes, as received
    body: dict[str, Any]


@dataclass(frozen=True)
class Run:
    result: RunResult
    requests: list[Request]

    @property
    def total(self) -> int:
        return sum(request.size for request in self.requests)


async def measure(runs: int, config: AgentConfig, pydantic_schema: bool) -> list[Run]:
    measured: list[Run] = []
    with FakeLLMServer() as server:
        server.respond_with(answer)
        client = ChatCompletionsClient(server.base_url, "fake-model", api_key="x")
        agent = Agent(OpenAIBrain(client), [weather_tool(pydantic_schema)], config)
        seen = 0
        try:
            for _ in range(runs):
                result = await agent.run(QUESTION)
                received = server.requests[seen:]
                seen += len(received)
                requests = [Request(kind_of(r.json), len(r.body), r.json) for r in received]
                measured.append(Run(result, requests))
        finally:
            await client.aclose()
    return measured


# --- the report ------------------------------------------------------------------------------------------


def kib(size: float) -> str:
    return f"{size / 1024:.2f} KiB"


def role_bytes(messages: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Bytes of the messages array by role, assistant tool calls apart."""
    by: dict[str, int] = {}
    for message in messages:
        role = message.get("role", "?")
        if role == "assistant" and message.get("tool_calls"):
            role = "assistant (tool calls)"
        by[role] = by.get(role, 0) + compact(message)
    return by


def tool_name(spec: dict[str, Any]) -> str:
    return str((spec.get("function") or {}).get("name"))


def breakdown(request: Request, number: int) -> str:
    body = request.body
    messages = body.get("messages") or []
    tools = body.get("tools") or []
    system = next((_text(m.get("content")) for m in messages if m.get("role") == "system"), "")
    tool_bytes = compact(tools) if tools else 0
    give_up = sum(compact(t) for t in tools if tool_name(t) == GIVE_UP.name)
    message_bytes = compact(messages)
    envelope = request.size - message_bytes - tool_bytes
    roles = ", ".join(f"{role} {size}" for role, size in role_bytes(messages).items())
    return (
        f"  #{number:<2} {request.kind:<9}{request.size:>7} B  system {len(system):>5} chars  "
        f"tools {tool_bytes:>4} B (give_up {give_up})  messages {message_bytes:>5} B in {len(messages):>2} "
        f"[{roles}]  rest {envelope} B"
    )


def report(measured: list[Run], config_note: str, pydantic_schema: bool) -> str:
    first = measured[0]
    totals = [run.total for run in measured]
    shapes = {tuple(r.kind for r in run.requests) for run in measured}
    lines = [
        f"LLM bytes per run · {len(measured)} runs · 5 sequential get_weather calls + a cited final · fake LLM",
        f"config: {config_note} · tool schema: {'pydantic model_json_schema' if pydantic_schema else 'scenario'}",
        f"python {platform.python_version()} · {platform.machine()} · {platform.system()}",
        "",
    ]
    for number, run in enumerate(measured, start=1):
        result = run.result
        line = f"run {number}: {result.status.value} ({result.termination_reason.value}), {len(run.requests)} requests"
        line += f", {run.total} B = {kib(run.total)}; steps {result.steps}, llm_calls {result.llm_calls}"
        lines.append(line)
        if result.status is not RunStatus.SOLVED:
            lines.append(
                f"  NOT solved: termination_reason {result.termination_reason.value}; answer: {result.answer!r}"
            )
    lines.append("")
    if len(set(totals)) > 1 or len(shapes) > 1:
        lines.append(f"runs differ: totals {totals}; request kinds {sorted(shapes)}")
    lines.append(f"per run (run 1): {len(first.requests)} requests, {first.total} B = {kib(first.total)}")
    lines.append(f"{'kind':<10}{'requests':>10}{'bytes':>10}{'KiB':>8}{'share':>8}")
    for kind in KINDS:
        sizes = [r.size for r in first.requests if r.kind == kind]
        share = sum(sizes) / first.total * 100 if first.total else 0.0
        lines.append(f"{kind:<10}{len(sizes):>10}{sum(sizes):>10}{sum(sizes) / 1024:>8.2f}{share:>7.1f}%")
    lines.append("")
    lines.append("request by request (bytes of compact UTF-8 JSON; rest = model, temperature and the envelope):")
    lines.extend(breakdown(request, number) for number, request in enumerate(first.requests, start=1))
    decide = [r for r in first.requests if r.kind == "decide"]
    if decide:
        tools = decide[0].body.get("tools") or []
        system = next((_text(m.get("content")) for m in decide[0].body["messages"] if m.get("role") == "system"), "")
        tool_total = sum(compact(r.body.get("tools") or []) for r in decide)
        system_total = sum(
            compact(m) for r in decide for m in r.body.get("messages") or [] if m.get("role") == "system"
        )
        lines += [
            "",
            f"decide requests: system prompt {len(system)} chars ({compact(system) - 2} B as JSON text) "
            f"sent {len(decide)} times "
            f"= {system_total} B as messages; tools array {compact(tools)} B each "
            f"({', '.join(f'{tool_name(t)} {compact(t)}' for t in tools)}) "
            f"= {tool_total} B in all",
        ]
        # What the same turns would weigh without the system message and give_up (each also takes a comma).
        bare = sum(
            r.size
            - sum(compact(m) + 1 for m in r.body.get("messages") or [] if m.get("role") == "system")
            - sum(compact(t) + 1 for t in r.body.get("tools") or [] if tool_name(t) == GIVE_UP.name)
            for r in decide
        )
        lines.append(f"decide requests less the system message and give_up: {bare} B = {kib(bare)}")
        last = decide[-1].body.get("messages") or []
        result_message = next((m for m in last if m.get("role") == "tool"), None)
        if result_message is not None:
            lines.append(
                f"one tool result as the model sees it ({compact(result_message)} B): {result_message['content']}"
            )
    lines.append(ISSUE_FIGURES)
    return "\n".join(lines)


def load(path: str | None) -> tuple[AgentConfig, str]:
    if path is None:
        return AgentConfig(), "AgentConfig() defaults (= config/parley.yaml without its tools)"
    from bot.config_file import load_config  # only for --config: the engine's benchmark needs nothing of the bot

    loaded = load_config(Path(path))
    return loaded.agent.model_copy(update={"tools": []}), f"{path} (its tools ignored)"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs, each measured (default 3)")
    parser.add_argument("--config", help="a Parley YAML to use instead of the defaults (its tools are ignored)")
    parser.add_argument(
        "--pydantic-schema", action="store_true", help="send the schema pydantic writes for the tool (with titles)"
    )
    parser.add_argument("--dump", help="write every request body of every run to this JSON file")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs ≥ 1")
    config, note = load(args.config)
    measured = asyncio.run(measure(args.runs, config, args.pydantic_schema))
    print(report(measured, note, args.pydantic_schema))
    if args.dump:
        dump = [[{"kind": r.kind, "size": r.size, "body": r.body} for r in run.requests] for run in measured]
        Path(args.dump).write_text(json.dumps(dump, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0 if all(run.result.status is RunStatus.SOLVED for run in measured) else 1


if __name__ == "__main__":
    raise SystemExit(main())
