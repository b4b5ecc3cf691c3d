"""ChatCompletionsClient against a real HTTP server: request shape, retries, and what ends as LLMUnavailable."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Callable

import httpx
import pytest

from agent.brains.base import LLMUnavailable
from agent.brains.chat import ChatCompletionsClient
from agent.config import BrainConfig
from agent.errors import ConfigError
from agent.limits import Limits
from tests.fakes.llm_server import FakeLLMServer, FakeReply, completion_with_content

API_KEY = "sk-test-0123456789abcdef"
MESSAGES = [{"role": "user", "content": "hi"}]

ClientFactory = Callable[..., ChatCompletionsClient]


@pytest.fixture
async def make_client(llm_server: FakeLLMServer) -> AsyncIterator[ClientFactory]:
    clients: list[ChatCompletionsClient] = []

    def make(**overrides: object) -> ChatCompletionsClient:
        options: dict[str, object] = {
            "base_url": llm_server.base_url,
            "model": "fake-model",
            "api_key": API_KEY,
            "timeout_s": 5.0,
            "max_retries": 2,
            "backoff_base_s": 0.01,
            "backoff_max_s": 0.01,
        }
        options.update(overrides)
        client = ChatCompletionsClient(**options)  # type: ignore[arg-type]
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_chat_client_posts_model_messages_and_bearer_key(
    llm_server: FakeLLMServer, make_client: ClientFactory
) -> None:
    llm_server.script(completion_with_content("hello"))
    client = make_client(temperature=0.3, max_tokens=50)

    reply = await client.create(MESSAGES, tools=[{"type": "function", "function": {"name": "t"}}])

    assert (reply.content, reply.retries, reply.problem) == ("hello", 0, None)
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (10, 5)
    [request] = llm_server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    assert request.json["model"] == "fake-model"
    assert request.json["messages"] == MESSAGES
    assert request.json["temperature"] == 0.3
    assert request.json["max_tokens"] == 50
    assert request.json["tools"] == [{"type": "function", "function": {"name": "t"}}]


async def test_chat_client_omits_key_max_tokens_and_tools_when_unset(
    llm_server: FakeLLMServer, make_client: ClientFactory
) -> None:
    llm_server.script(completion_with_content("hello"))
    client = make_client(api_key=None, base_url=llm_server.base_url + "/")

    await client.create(MESSAGES)

    [request] = llm_server.requests
    assert request.path == "/v1/chat/completions"
    assert "authorization" not in request.headers
    assert "max_tokens" not in request.json
    assert "tools" not in request.json


async def test_chat_client_serves_concurrent_requests_over_one_connection_pool(
    llm_server: FakeLLMServer, make_client: ClientFactory
) -> None:
    llm_server.respond_with(lambda request: completion_with_content(f"echo {request['messages'][-1]['content']}"))
    client = make_client()

    replies = await asyncio.gather(*(client.create([{"role": "user", "content": str(n)}]) for n in range(8)))

    assert [reply.content for reply in replies] == [f"echo {n}" for n in range(8)]
    assert len(llm_server.requests) == 8


async def test_chat_client_empty_script_fails_loudly(llm_server: FakeLLMServer, make_client: ClientFactory) -> None:
    with pytest.raises(LLMUnavailable, match="no scripted reply left"):
        await make_client(max_retries=0).create(MESSAGES)


def test_chat_client_refuses_a_base_url_that_is_not_http() -> None:
    with pytest.raises(ConfigError, match="http"):
        ChatCompletionsClient("localhost:8000/v1", "m")


async def test_chat_client_from_config_takes_limits_and_brain_settings(llm_server: FakeLLMServer) -> None:
    llm_server.script(FakeReply.with_status(503), completion_with_content("ok"))
    limits = Limits(llm_max_retries=1, retry_backoff_base_s=0.01, retry_backoff_max_s=0.01)
    client = ChatCompletionsClient.from_config(
        base_url=llm_server.base_url, model="m", api_key=None, brain=BrainConfig(max_tokens=7), limits=limits
    )
    try:
        reply = await client.create(MESSAGES)
    finally:
        await client.aclose()

    assert reply.retries == 1
    assert llm_server.chat_requests[0]["max_tokens"] == 7


async def test_chat_client_honours_retry_after_then_succeeds(
    llm_server: FakeLLMServer, make_client: ClientFactory
) -> None:
    llm_server.script(
        FakeReply.with_status(429, "slow down", headers={"Retry-After": "1"}), completion_with_content("ok")
    )
    client = make_client(backoff_max_s=5.0)

    reply = await client.create(MESSAGES)

    assert (reply.content, reply.retries) == ("ok", 1)
    [note] = reply.retry_notes
    assert (note.attempt, note.problem, note.delay_s) == (1, "HTTP 429: slow down", 1.0)
    first, second = llm_server.requests
    assert second.received_at - first.received_at >= 0.9


async def test_chat_client_caps_retry_after_by_backoff_max(
    llm_server: FakeLLMServer, make_client: ClientFactory
) -> None:
    llm_server.script(FakeReply.with_status(503, headers={"Retry-After": "3600"}), completion_with_content("ok"))
    client = make_client(backoff_max_s=0.05)

    reply = await asyncio.wait_for(client.create(MESSAGES), timeout=10)

    assert reply.retries == 1
    assert len(llm_server.requests) == 2


async def test_chat_client_retries_5xx_then_gives_up_after_max_retries_plus_one_attempts(
    llm_server: FakeLLMServer, make_client: ClientFactory
) -> None:
    llm_server.script(*[FakeReply.with_status(503, "overloaded")] * 5)
    client = make_client(max_retries=2)

    with pytest.raises(LLMUnavailable, match=r"after 3 attempt\(s\): HTTP 503: overloaded"):
        await client.create(MESSAGES)

    assert len(llm_server.requests) == 3


async def test_chat_client_connection_refused_is_llm_unavailable(make_client: ClientFactory) -> None:
    client = make_client(base_url=f"http://127.0.0.1:{closed_port()}/v1", max_retries=1)

    with pytest.raises(LLMUnavailable, match="ConnectError"):
        await client.create(MESSAGES)


async def test_chat_client_timeout_is_retried_then_llm_unavailable(
    llm_server: FakeLLMServer, make_client: ClientFactory
) -> None:
    llm_server.script(FakeReply.hang(), FakeReply.hang())
    client = make_client(timeout_s=0.2, max_retries=1)

    with pytest.raises(LLMUnavailable, match=r"after 2 attempt\(s\): no answer within 0.2s"):
        await client.create(MESSAGES)

    assert len(llm_server.requests) == 2


async def test_chat_client_dropped_connection_is_retried(llm_server: FakeLLMServer, make_client: ClientFactory) -> None:
    llm_server.script(FakeReply.disconnect(), completion_with_content("ok"))

    reply = await make_client().create(MESSAGES)

    assert (reply.content, reply.retries) == ("ok", 1)


async def test_chat_client_401_fails_at_once_without_leaking_the_key(
    llm_server: FakeLLMServer, make_client: ClientFactory
) -> None:
    llm_server.script(FakeReply.with_status(401, f"Incorrect API key provided: {API_KEY}"))

    with pytest.raises(LLMUnavailable, match="API key was rejected") as caught:
        await make_client().create(MESSAGES)

    assert API_KEY not in str(caught.value)
    assert len(llm_server.requests) == 1


async def test_chat_client_other_4xx_fail_at_once_with_the_endpoint_message(
    llm_server: FakeLLMServer, make_client: ClientFactory
) -> None:
    llm_server.script(FakeReply.with_status(400, f"bad request from {API_KEY}"))

    with pytest.raises(LLMUnavailable, match="HTTP 400: bad request from \\*\\*\\*") as caught:
        await make_client().create(MESSAGES)

    assert API_KEY not in str(caught.value)
    assert len(llm_server.requests) == 1


@pytest.mark.parametrize(
    "body",
    [b"<html><body>502 Bad Gateway</body></html>", b"\xff\xfe\x00garbage", b"[1, 2]", b'{"object": "list"}'],
    ids=["html", "invalid-utf8", "json-array", "no-choices"],
)
async def test_chat_client_unusable_200_body_is_a_problem_not_an_outage(
    llm_server: FakeLLMServer, make_client: ClientFactory, body: bytes
) -> None:
    llm_server.script(FakeReply.with_bytes(body))

    reply = await make_client().create(MESSAGES)

    assert reply.problem
    assert reply.retries == 0
    assert len(llm_server.requests) == 1


def _every_httpx_exception() -> list[type[Exception]]:
    found = [getattr(httpx, name) for name in httpx.__all__]
    return [item for item in found if isinstance(item, type) and issubclass(item, Exception)]


def _instance(kind: type[Exception], request: httpx.Request) -> Exception:
    if issubclass(kind, httpx.HTTPStatusError):
        return kind("boom", request=request, response=httpx.Response(500, request=request))
    if issubclass(kind, httpx.RequestError):
        return kind("boom", request=request)
    try:
        return kind("boom")
    except TypeError:
        return kind()


@pytest.mark.parametrize("kind", _every_httpx_exception(), ids=lambda kind: kind.__name__)
async def test_chat_client_translates_every_httpx_exception(kind: type[Exception]) -> None:
    def explode(request: httpx.Request) -> httpx.Response:
        raise _instance(kind, request)

    http = httpx.AsyncClient(transport=httpx.MockTransport(explode))
    client = ChatCompletionsClient(
        "http://llm.invalid/v1", "m", api_key=API_KEY, max_retries=1, backoff_base_s=0, http_client=http
    )
    try:
        with pytest.raises(LLMUnavailable) as caught:
            await client.create(MESSAGES)
    finally:
        await http.aclose()

    assert kind.__name__ in str(caught.value)
    assert API_KEY not in str(caught.value)
