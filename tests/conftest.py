"""Shared fixtures: fakes of the outside world, started per test on 127.0.0.1:0."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.llm_server import FakeLLMServer


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    """An OpenAI-compatible endpoint at `llm_server.base_url`; script it, then read `llm_server.requests`."""
    with FakeLLMServer() as server:
        yield server
