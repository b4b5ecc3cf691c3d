"""MCP servers' tools through the engine: discovery (allow, block, prefixes, conflicts), results as observations,
each error class graded by the shipped `errors.yaml`, the default hold of destructive tools, pins, and a server
that is down at start. The CRM is a real MCP server (tests/fakes/mcp_crm.py) on 127.0.0.1."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client
from mcp.types import Tool as McpDefinition

from agent import (
    ConfigError,
    ErrorLevel,
    McpServer,
    McpSpec,
    MemoryPins,
    RunHeld,
    RunSnapshot,
    RunStatus,
    ServerState,
    ToolCallFinished,
    ToolCallRequest,
    definition_digest,
)
from tests.agent.mcp_world import connected, executor, mcp_agent
from tests.agent.toolbox import eventually, replay
from tests.fakes.http_api import ApiReply, FakeHttpApi
from tests.fakes.mcp_crm import CrmHttpServer
from tests.serving import free_port

TOKEN = "crm-token-0123456789abcdef"


@pytest.fixture
async def crm(tmp_path: Path) -> AsyncIterator[CrmHttpServer]:
    async with CrmHttpServer(free_port(), ledger=tmp_path / "ledger.txt") as server:
        yield server


def http_spec(crm: CrmHttpServer, **fields: object) -> McpSpec:
    return McpSpec.model_validate({"url": crm.url, "name": "crm", "timeout_s": 5, **fields})


def call(name: str, **arguments: object) -> ToolCallRequest:
    return ToolCallRequest(id=f"call_{name}", name=name, arguments=dict(arguments))


async def test_mcp_discovery_offers_the_servers_schemas_prefixed_and_filtered(crm: CrmHttpServer) -> None:
    spec = http_spec(crm, allow=["lookup_order", "refund"])
    async with connected([spec]) as servers:
        tools = executor(servers)
        assert tools.names == ["crm_lookup_order", "crm_refund"]
        lookup = tools.toolbox.get("crm_lookup_order")
        assert lookup is not None
        assert lookup.spec.description == "Look up one order by its id."
        assert lookup.spec.parameters["required"] == ["order_id"]
        [status] = servers.status()
        assert status.state is ServerState.UP
        why = {tool.server_tool: tool.why_not for tool in status.tools}
        assert why["export_all"] == "not in allow" and why["lookup_order"] is None

    async with connected([http_spec(crm, block=["refund"])]) as servers:
        tools = executor(servers)
        assert "crm_refund" not in tools.names and "crm_order_notes" in tools.names
        [executed] = await tools.run_batch([call("crm_refund", order_id="A-1001", amount=5)])
        assert executed.observation.code == "UNKNOWN_TOOL"  # named anyway by the model: never executed
    assert not crm.ledger.exists()


async def test_mcp_two_tools_with_one_name_are_refused_at_start_naming_both(crm: CrmHttpServer) -> None:
    with pytest.raises(ConfigError) as refused:
        async with connected([http_spec(crm)], fixed=["crm_lookup_order"]):
            pass
    assert "crm_lookup_order" in str(refused.value)
    assert "the tools: list" in str(refused.value) and "the MCP server crm" in str(refused.value)


async def test_mcp_two_servers_offering_one_tool_name_are_refused_at_start_naming_both(crm: CrmHttpServer) -> None:
    async with CrmHttpServer(free_port()) as other:
        unprefixed = [McpSpec.model_validate({"url": server.url, "timeout_s": 5}) for server in (crm, other)]
        with pytest.raises(ConfigError) as refused:
            async with connected(unprefixed):
                pass
    assert "lookup_order" in str(refused.value)
    assert crm.url in str(refused.value) and other.url in str(refused.value)


async def test_mcp_structured_result_is_data_and_text_is_text(crm: CrmHttpServer) -> None:
    async with connected([http_spec(crm)]) as servers:
        lookup, notes = await executor(servers).run_batch(
            [call("crm_lookup_order", order_id="B-2002"), call("crm_order_notes", order_id="A-1001")]
        )
    assert lookup.observation.ok and lookup.observation.data == {
        "order_id": "B-2002",
        "customer": "李雷",
        "total": 88.0,
        "currency": "CNY",
        "status": "refunded",
    }
    assert notes.observation.ok and "called twice" in notes.observation.data


async def test_mcp_answer_from_a_structured_result_is_cited(crm: CrmHttpServer) -> None:
    brain = replay(
        [
            {"tool": "crm_lookup_order", "args": {"order_id": "A-1001"}},
            {"final": "Order A-1001 for Ada Lovelace is shipped; its total is 129.5 EUR [1]."},
        ]
    )
    async with connected([http_spec(crm)]) as servers:
        agent, _ = mcp_agent(brain, servers)
        result = await agent.run("What is the status and total of order A-1001?")
    assert result.status is RunStatus.SOLVED, result
    assert [citation.tool for citation in result.citations] == ["crm_lookup_order"]


@pytest.mark.parametrize(
    ("tool", "arguments", "code", "level"),
    [
        ("crm_archive_order", {"order_id": "A-1001"}, "TOOL_REPORTED_FAILURE", ErrorLevel.L1),  # isError, no code
        ("crm_lookup_order", {"order_id": "Z-9"}, "NOT_FOUND", ErrorLevel.L1),  # isError with a code: the table
        ("crm_lookup_order", {"order": "A-1001"}, "INVALID_ARGS", ErrorLevel.L1),  # against the server's schema
        ("crm_set_status", {"order_id": "A-1", "status": "lost"}, "INVALID_ARGS", ErrorLevel.L1),  # server's -32602
        ("crm_no_such_tool", {}, "UNKNOWN_TOOL", ErrorLevel.L3),
    ],
)
async def test_mcp_failures_the_tool_reports_are_graded_by_the_table(
    crm: CrmHttpServer, tool: str, arguments: dict[str, object], code: str, level: ErrorLevel
) -> None:
    async with connected([http_spec(crm)]) as servers:
        [executed] = await executor(servers).run_batch([call(tool, **arguments)])
    assert not executed.observation.ok
    assert executed.observation.error is not None
    assert (executed.observation.code, executed.observation.error.level) == (code, level)
    assert executed.retries == 0


async def test_mcp_invalid_params_from_the_server_are_shown_to_the_model(crm: CrmHttpServer) -> None:
    """The arguments fit the schema, but the server refuses them (-32602): the model reads why, and corrects."""
    brain = replay(
        [
            {"tool": "crm_set_status", "args": {"order_id": "A-1001", "status": "gone"}},
            {"tool": "crm_set_status", "args": {"order_id": "A-1001", "status": "open"}},
            {"final": "Order A-1001 is open again [1]."},
        ]
    )
    async with connected([http_spec(crm)]) as servers:
        agent, recorder = mcp_agent(brain, servers)
        result = await agent.run("Reopen order A-1001.")
    refused, done = recorder.of(ToolCallFinished)
    assert (refused.ok, refused.code) == (False, "INVALID_ARGS")
    assert result.status is RunStatus.SOLVED and done.ok, result
    assert "status must be one of open, shipped, refunded" in refused.observation  # the text the model saw


async def test_mcp_a_tool_the_server_no_longer_has_is_a_failure_the_model_sees(tmp_path: Path) -> None:
    """Listed at start, gone when called (the server was redeployed): L1, the model reads that it is unknown."""
    port = free_port()
    async with connected([McpSpec.model_validate({"url": f"http://127.0.0.1:{port}/mcp", "name": "crm"})]) as servers:
        tools = executor(servers)
        async with CrmHttpServer(port):
            await eventually(lambda: "crm_order_notes" in tools.names, timeout_s=45)
        async with CrmHttpServer(port, variant="without_notes"):
            [executed] = await tools.run_batch([call("crm_order_notes", order_id="A-1001")])
    assert not executed.observation.ok and executed.observation.error is not None
    assert executed.observation.error.level is ErrorLevel.L1
    assert "Unknown tool" in executed.observation.error.message


async def test_mcp_timeout_on_a_read_only_tool_is_retried_then_l2(crm: CrmHttpServer) -> None:
    async with connected([http_spec(crm, timeout_s=1.5)]) as servers:
        [executed] = await executor(servers, max_auto_retries=1).run_batch([call("crm_slow_report", seconds=8)])
    assert executed.observation.code == "TIMEOUT"
    assert executed.retries == 1 and executed.observation.error is not None
    assert executed.observation.error.level is ErrorLevel.L2  # L0, retried within the step, then L2


async def test_mcp_timeout_on_an_acting_tool_is_outcome_unknown_and_never_retried(crm: CrmHttpServer) -> None:
    async with connected([http_spec(crm, timeout_s=1.5)]) as servers:
        [executed] = await executor(servers).run_batch([call("crm_slow_update", seconds=8)])
    assert executed.observation.code == "OUTCOME_UNKNOWN"
    assert executed.retries == 0
    assert executed.observation.error is not None and "may or may not have run" in executed.observation.error.message


async def test_mcp_declared_idempotent_tool_is_retried_after_a_timeout(crm: CrmHttpServer) -> None:
    async with connected([http_spec(crm, timeout_s=1.5, idempotent=["slow_update"])]) as servers:
        [executed] = await executor(servers, max_auto_retries=1).run_batch([call("crm_slow_update", seconds=8)])
    assert executed.observation.code == "TIMEOUT" and executed.retries == 1


@pytest.mark.parametrize("status", [401, 403])
async def test_mcp_refused_credentials_are_l3_and_the_token_never_shows(crm: CrmHttpServer, status: int) -> None:
    spec = http_spec(crm, headers={"Authorization": "Bearer ${CRM_TOKEN}"})
    async with connected([spec], env={"CRM_TOKEN": TOKEN}) as servers:
        crm.gate.status = status
        [executed] = await executor(servers).run_batch([call("crm_lookup_order", order_id="A-1001")])
    assert executed.observation.code == "FORBIDDEN"
    assert executed.observation.error is not None and executed.observation.error.level is ErrorLevel.L3
    assert crm.gate.seen_auth and crm.gate.seen_auth[-1] == f"Bearer {TOKEN}"
    assert TOKEN not in json.dumps([executed.raw, executed.observation.error.message])


async def test_mcp_a_server_echoing_the_token_never_shows_it_to_the_model_the_trace_or_the_log(
    crm: CrmHttpServer, caplog: pytest.LogCaptureFixture
) -> None:
    brain = replay([{"tool": "crm_whoami", "args": {}}, {"final": "The CRM answered [1]."}])
    spec = http_spec(crm, headers={"Authorization": "Bearer ${CRM_TOKEN}"})
    with caplog.at_level(logging.DEBUG):
        async with connected([spec], env={"CRM_TOKEN": TOKEN}) as servers:
            agent, recorder = mcp_agent(brain, servers)
            result = await agent.run("Who are you?")
    assert crm.gate.seen_auth and crm.gate.seen_auth[-1] == f"Bearer {TOKEN}"  # it was sent, and echoed back
    [finished] = recorder.of(ToolCallFinished)
    assert finished.ok and "***" in finished.observation  # the model saw the echo without the secret
    trace = json.dumps([event.model_dump(mode="json") for event in recorder.events], ensure_ascii=False)
    assert TOKEN not in trace and TOKEN not in json.dumps(result.model_dump(mode="json"), ensure_ascii=False)
    assert TOKEN not in caplog.text


async def test_mcp_an_html_page_instead_of_mcp_is_a_failure(crm: CrmHttpServer) -> None:
    async with connected([http_spec(crm)]) as servers:
        crm.gate.html = True
        [executed] = await executor(servers).run_batch([call("crm_lookup_order", order_id="A-1001")])
    assert not executed.observation.ok and executed.observation.code == "BAD_RESPONSE"


async def test_mcp_a_hanging_server_meets_the_call_timeout(crm: CrmHttpServer) -> None:
    async with connected([http_spec(crm, timeout_s=1.5)]) as servers:
        crm.gate.hang_s = 30
        [executed] = await executor(servers, max_auto_retries=0).run_batch([call("crm_order_notes", order_id="A")])
    assert executed.observation.code == "TIMEOUT"


async def test_mcp_five_megabytes_of_text_are_an_observation_the_renderer_cuts(crm: CrmHttpServer) -> None:
    async with connected([http_spec(crm, timeout_s=20)]) as servers:
        [executed] = await executor(servers).run_batch([call("crm_export_all")])
    assert executed.observation.ok and len(executed.observation.data) > 5_000_000


async def test_mcp_destructive_tool_is_held_then_approved_and_run_exactly_once(crm: CrmHttpServer) -> None:
    arguments = {"order_id": "A-1001", "amount": 129.5}
    first = replay([{"tool": "crm_refund", "args": arguments}])
    async with connected([http_spec(crm)]) as servers:
        agent, recorder = mcp_agent(first, servers)
        held = await agent.run("Refund order A-1001 in full.")
        assert held.status is RunStatus.AWAITING_REVIEW
        assert held.escalation is not None and "destructive" in held.escalation.message
        assert not crm.ledger.exists()  # nothing was executed
        [event] = recorder.of(RunHeld)
        snapshot = RunSnapshot.model_validate(json.loads(json.dumps(event.snapshot.model_dump(mode="json"))))

        later = replay([{"final": "Order A-1001 was refunded 129.5 EUR [1]."}])
        resumed_agent, resumed_recorder = mcp_agent(later, servers)
        result = await resumed_agent.resume(snapshot, approved_by="U_REVIEWER")
    assert result.status is RunStatus.APPROVED, result
    assert crm.ledger.read_text(encoding="utf-8") == "A-1001 129.5\n"  # once, with the reviewed arguments
    assert [e.tool for e in resumed_recorder.of(ToolCallFinished)] == ["crm_refund"]


async def test_mcp_a_policy_naming_a_destructive_tool_overrides_the_default_hold(crm: CrmHttpServer) -> None:
    brain = replay([{"tool": "crm_refund", "args": {"order_id": "A-1001", "amount": 1}}, {"final": "Refunded 1 [1]."}])
    async with connected([http_spec(crm)]) as servers:
        agent, _ = mcp_agent(brain, servers, {"policies": [{"tool": "crm_refund", "requires_approval": False}]})
        result = await agent.run("Refund 1 on order A-1001.")
    assert result.status is RunStatus.SOLVED and crm.ledger.read_text(encoding="utf-8") == "A-1001 1.0\n"


async def test_mcp_a_policy_can_hold_a_tool_the_server_does_not_call_destructive(crm: CrmHttpServer) -> None:
    brain = replay([{"tool": "crm_set_status", "args": {"order_id": "A-1001", "status": "open"}}])
    policy = {"tool": "crm_set_status", "requires_approval": True, "reason": "Status changes are reviewed"}
    async with connected([http_spec(crm)]) as servers:
        agent, recorder = mcp_agent(brain, servers, {"policies": [policy]})
        result = await agent.run("Reopen order A-1001.")
    assert result.status is RunStatus.AWAITING_REVIEW and result.escalation is not None
    assert "Status changes are reviewed" in result.escalation.message
    assert recorder.of(ToolCallFinished) == []  # nothing was executed


async def test_mcp_changed_definition_is_refused_until_trusted_again(tmp_path: Path) -> None:
    pins = MemoryPins()
    async with CrmHttpServer(free_port()) as original, connected([http_spec(original)], pins=pins) as servers:
        assert "crm_lookup_order" in executor(servers).names
    async with (
        CrmHttpServer(free_port(), variant="changed") as rug_pull,
        connected([http_spec(rug_pull)], pins=pins, refresh_s=0.2) as servers,
    ):
        tools = executor(servers)
        assert "crm_lookup_order" not in tools.names and "crm_order_notes" in tools.names  # others keep working
        [refused] = await tools.run_batch([call("crm_lookup_order", order_id="A-1001")])
        assert refused.observation.code == "TOOL_CHANGED"
        assert refused.observation.error is not None and "parley mcp trust crm" in refused.observation.error.message
        [status] = servers.status()
        assert status.changed == ("lookup_order",)

        [server] = servers.servers
        definition = next(t for t in await _listing(server) if t.name == "lookup_order")
        await pins.trust("crm", {"lookup_order": definition_digest(definition)})
        await eventually(lambda: "crm_lookup_order" in tools.names, timeout_s=10)
        [ok] = await tools.run_batch([call("crm_lookup_order", order_id="A-1001")])
        assert ok.observation.ok


async def _listing(server: McpServer) -> list[McpDefinition]:
    """The server's listing as an operator's `parley mcp trust` reads it."""
    assert server.spec.url is not None
    async with Client(server.spec.url, cache=None) as client:
        return (await client.list_tools()).tools


async def test_mcp_a_dead_server_at_start_does_not_stop_the_rest_and_comes_back(tmp_path: Path) -> None:
    port = free_port()
    spec = McpSpec.model_validate({"url": f"http://127.0.0.1:{port}/mcp", "name": "crm", "timeout_s": 2})
    async with connected([spec]) as servers:
        [status] = servers.status()
        assert status.state is ServerState.DOWN and status.problem and "crm" in status.problem
        tools = executor(servers)
        assert tools.names == []
        async with CrmHttpServer(port):
            await eventually(lambda: servers.status()[0].state is ServerState.UP, timeout_s=45)
            [executed] = await tools.run_batch([call("crm_order_notes", order_id="A-1001")])
            assert executed.observation.ok


async def test_mcp_a_missing_variable_is_a_config_error_naming_it_and_the_server(crm: CrmHttpServer) -> None:
    spec = http_spec(crm, headers={"Authorization": "Bearer ${CRM_TOKEN}"})
    with pytest.raises(ConfigError, match=r"mcp server 'crm': header Authorization uses \$\{CRM_TOKEN\}"):
        async with connected([spec], env={}):
            pass


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (ApiReply.with_bytes(b"<!DOCTYPE html><html>Sign in</html>", content_type="text/html"), "not answer as an MCP"),
        (ApiReply.with_json({"hello": "world"}), "not answer as an MCP"),
        (ApiReply.with_json({"detail": "bad token"}, status=401), "answered HTTP 401"),
    ],
)
async def test_mcp_a_server_that_is_not_mcp_is_down_never_a_source_of_tools(
    http_api: FakeHttpApi, reply: ApiReply, problem: str
) -> None:
    http_api.route("/mcp", reply)
    spec = McpSpec.model_validate({"url": http_api.url("/mcp"), "name": "liar", "timeout_s": 2})
    async with connected([spec]) as servers:
        [status] = servers.status()
        assert status.state is ServerState.DOWN and executor(servers).names == []
        assert status.problem is not None and problem in status.problem
