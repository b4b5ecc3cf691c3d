"""Shared fixtures: fakes of the outside world, started per test on 127.0.0.1:0, and a client to reach them."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from tests.fakes.http_api import FakeHttpApi
from tests.fakes.llm_server import FakeLLMServer


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The grounding corpus's two rates (correct answers kept, near-misses caught), when it ran."""
    corpus = sys.modules.get("tests.agent.test_grounding_corpus")
    for line in corpus.corpus_summary() if corpus is not None else []:
        terminalreporter.write_line(line)


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    """An OpenAI-compatible endpoint at `llm_server.base_url`; script it, then read `llm_server.requests`."""
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def http_api() -> Iterator[FakeHttpApi]:
    """A team's HTTP API at `http_api.base_url`: `route(path, ApiReply…)`, then read `http_api.requests`."""
    with FakeHttpApi() as server:
        yield server


@pytest.fixture
async def http_client() -> AsyncIterator[httpx.AsyncClient]:
    """The shared client tools get; `trust_env=False` so a proxy in the environment cannot intercept loopback."""
    async with httpx.AsyncClient(trust_env=False) as client:
        yield client
