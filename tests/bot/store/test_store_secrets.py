"""Secrets never reach the store: not the LLM's API key, not a tool's `${VAR}` header, not even when the
team's API echoes the Authorization header back. Each run goes over real HTTP: an OpenAIBrain against the
fake LLM server, an HttpTool against the fake HTTP API; then every column of every row is searched."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx

from agent import Agent, HttpToolEntry, OpenAIBrain, RunResult, RunStatus, build_tools
from agent.brains.chat import ChatCompletionsClient
from bot.config_file import defaults_dir
from bot.store import Database
from bot.store.models import Base
from tests.agent.llm_agent import shipped_config
from tests.bot.store.recording import fetch, record
from tests.fakes.http_api import ApiReply, FakeHttpApi
from tests.fakes.llm_server import FakeLLMServer, FakeReply
from tests.fakes.scripted_llm import RequestKind, ScriptedLLM, Unrecorded

TOKEN = f"tok-{uuid.uuid4().hex}"
API_KEY = f"sk-{uuid.uuid4().hex}"
QUESTION = "Who owns account 42, and what about account 999?"
FINAL = "Account 42 belongs to ACME and holds 1200 EUR [1]; account 999 does not exist."
ACCOUNT_42 = {"id": "42", "owner": "ACME", "balance_eur": 1200}
ECHO = {"authorization": f"Bearer {TOKEN}"}  # what a careless API sends back: the request's headers
NO_ACCOUNT_999 = ApiReply.with_json(
    {
        "error": {"code": "NOT_FOUND", "message": f"no account 999 for Authorization: Bearer {TOKEN}"},
        "request_headers": ECHO,
    },
    status=404,
)


def account_tool(base_url: str) -> HttpToolEntry:
    return HttpToolEntry.model_validate(
        {
            "name": "get_account",
            "description": "One account by id",
            "parameters": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
            "http": {"url": base_url + "/v1/accounts/{id}", "headers": {"Authorization": "Bearer ${SECRET_TOKEN}"}},
        }
    )


async def run_with_secrets(
    db: Database, llm_server: FakeLLMServer, http_api: FakeHttpApi, http: httpx.AsyncClient
) -> RunResult:
    """Both accounts in one step (42 answers, 999 fails), then a cited final. The planner's requests fail
    twice with a 500 whose body quotes the API key, so the plan note carries the LLM client's error text."""
    llm = ScriptedLLM(
        {
            "decisions": [
                {
                    "calls": [
                        {"tool": "get_account", "args": {"id": "42"}},
                        {"tool": "get_account", "args": {"id": "999"}},
                    ]
                },
                {"final": FINAL},
            ]
        },
        unrecorded=Unrecorded.PROSE,
    )
    quoting_the_key = FakeReply.with_status(500, f"upstream rejected Authorization: Bearer {API_KEY}")
    llm.inject(RequestKind.PLAN, quoting_the_key, quoting_the_key)
    llm_server.respond_with(llm)
    config = shipped_config([account_tool(http_api.base_url)], done={"planner": "llm"})
    tools = build_tools(config.tools, env={"SECRET_TOKEN": TOKEN}, http=http, data_dir=defaults_dir())
    client = ChatCompletionsClient(
        llm_server.base_url, "test-model", api_key=API_KEY, max_retries=1, backoff_base_s=0.01, backoff_max_s=0.02
    )
    try:
        result, _ = await record(Agent(OpenAIBrain(client), tools, config), db, QUESTION)
    finally:
        await client.aclose()
    # The secrets were in play: sent on every request, and echoed back.
    assert {r.headers["authorization"] for r in http_api.requests} == {f"Bearer {TOKEN}"}
    assert {r.headers["authorization"] for r in llm_server.requests} == {f"Bearer {API_KEY}"}
    assert result.status is RunStatus.SOLVED and result.tool_calls == 2
    return result


async def every_row(db: Database) -> dict[str, list[dict[str, Any]]]:
    """Every column of every row of every store table, as PostgreSQL renders it to JSON."""
    return {
        table.name: [
            json.loads(row["row"]) for row in await fetch(db, f"SELECT row_to_json(t)::text AS row FROM {table.name} t")
        ]
        for table in Base.metadata.sorted_tables
    }


def leaks(rows: dict[str, list[dict[str, Any]]], secret: str) -> list[str]:
    """Where the secret is: `table.column` plus the path inside a JSON column."""
    found: list[str] = []

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{path}.{key}")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, f"{path}[{index}]")
        elif isinstance(value, str) and secret in value:
            found.append(path)

    for table, table_rows in rows.items():
        for row in table_rows:
            walk(row, table)
    return sorted(set(found))


async def test_store_keeps_no_secret_anywhere_after_a_run_whose_api_echoes_them(
    postgres_db: Database, llm_server: FakeLLMServer, http_api: FakeHttpApi, http_client: httpx.AsyncClient
) -> None:
    http_api.route("/v1/accounts/42", ApiReply.with_json({**ACCOUNT_42, "echo": ECHO}))
    http_api.route("/v1/accounts/999", NO_ACCOUNT_999)

    await run_with_secrets(postgres_db, llm_server, http_api, http_client)

    rows = await every_row(postgres_db)
    assert "ACME" in json.dumps(rows)  # the dump does hold what the tools answered
    assert (leaks(rows, TOKEN), leaks(rows, API_KEY)) == ([], [])


async def test_store_keeps_no_secret_echoed_in_an_error_body(
    postgres_db: Database, llm_server: FakeLLMServer, http_api: FakeHttpApi, http_client: httpx.AsyncClient
) -> None:
    http_api.route("/v1/accounts/42", ApiReply.with_json(ACCOUNT_42))
    http_api.route("/v1/accounts/999", NO_ACCOUNT_999)

    await run_with_secrets(postgres_db, llm_server, http_api, http_client)

    rows = await every_row(postgres_db)
    [failed] = [call for call in rows["tool_calls"] if not call["ok"]]
    shown = json.loads(failed["observation"])["error"]  # scrubbed, and still telling what happened
    assert shown["message"] == "no account 999 for Authorization: ***"
    assert shown["details"]["request_headers"] == {"authorization": "***"}
    assert leaks(rows, TOKEN) == []


async def test_store_keeps_no_llm_api_key_even_from_the_llm_clients_error_text(
    postgres_db: Database, llm_server: FakeLLMServer, http_api: FakeHttpApi, http_client: httpx.AsyncClient
) -> None:
    http_api.route("/v1/accounts/42", ApiReply.with_json(ACCOUNT_42))
    http_api.route("/v1/accounts/999", NO_ACCOUNT_999)

    await run_with_secrets(postgres_db, llm_server, http_api, http_client)

    rows = await every_row(postgres_db)
    [plan] = [verdict for verdict in rows["verdicts"] if verdict["kind"] == "plan"]
    assert plan["reason"].startswith("LLM planner unavailable") and "Bearer ***" in plan["reason"]
    assert leaks(rows, API_KEY) == []
