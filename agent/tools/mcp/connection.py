"""McpConnection: one MCP server, held open by a background task that reconnects (and restarts) it.

The SDK's `Client` lives in one task (anyio's rule: a task group is entered and left by the same task), and any
task may call through it meanwhile. That task connects, lists the tools, hands the listing to its owner, and
re-lists every `refresh_s`; when a call finds the connection gone (a stdio server killed, an HTTP server
restarted) or listing fails, it closes the client — which stops a stdio server Parley started — and tries again
with backoff. A stdio server never outlives its connection: `stop()` closes it, and the child's stdin with it.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from typing import Any, TextIO

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, Tool

from agent.backoff import Backoff
from agent.config import McpSpec
from agent.tools.mcp.failures import NotConnected, connection_lost, describe, leaf
from agent.tools.mcp.state import DEFAULT_REFRESH_S, ServerState

log = logging.getLogger(__name__)

RECONNECT = Backoff(base_s=0.5, max_s=30.0)  # a dead server is restarted at most every 30 s
MAX_LISTING_PAGES = 20

OnListing = Callable[[list[Tool]], Awaitable[None]]


class McpConnection:
    """One configured server. `headers` and `env` are resolved (no `${VAR}` left)."""

    def __init__(
        self,
        spec: McpSpec,
        *,
        headers: Mapping[str, str],
        env: Mapping[str, str],
        on_listing: OnListing,
        refresh_s: float = DEFAULT_REFRESH_S,
    ) -> None:
        self.spec = spec
        self.name = spec.server
        self._headers = dict(headers)
        self._env = dict(env)
        self._on_listing = on_listing
        self._refresh_s = refresh_s
        self.state = ServerState.CONNECTING
        self.problem: str | None = None  # why the last attempt failed, for operators
        self.connects = 0
        self._client: Client | None = None
        self._up = asyncio.Event()
        self._first_attempt = asyncio.Event()
        self._broken = asyncio.Event()
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self.last_http_error: int | None = None  # the SDK hides the status of an HTTP error reply

    async def start(self, *, wait_s: float) -> None:
        """Start connecting; return once the first attempt ended or `wait_s` passed (a slow server comes later)."""
        if self._task is None:
            self._task = asyncio.create_task(self._hold(), name=f"mcp:{self.name}")
        try:
            async with asyncio.timeout(wait_s):
                await self._first_attempt.wait()
        except TimeoutError:
            self.problem = self.problem or f"no answer within {wait_s:g} s"

    async def stop(self) -> None:
        """Close the connection (a stdio server is stopped) and stop reconnecting."""
        self._stopping = True
        self._broken.set()
        if self._task is not None:
            try:
                async with asyncio.timeout(self.spec.timeout_s + 5):
                    await asyncio.shield(self._task)
            except TimeoutError:
                self._task.cancel()
                await asyncio.gather(self._task, return_exceptions=True)
        self.state = ServerState.STOPPED

    async def call(self, tool: str, arguments: dict[str, Any], *, timeout_s: float) -> CallToolResult:
        """One `tools/call`. Waits up to `timeout_s` for a connection being made; raises the SDK's exceptions
        (translated by the caller, who knows whether the tool is safe to repeat) or `NotConnected`."""
        client = await self._connected(timeout_s)
        try:
            async with asyncio.timeout(timeout_s):
                return await client.call_tool(tool, arguments, read_timeout_seconds=timeout_s)
        except BaseException as exc:
            if _connection_gone(exc):
                self._broken.set()  # reconnect (restart a stdio server) in the background
            raise

    async def _connected(self, wait_s: float) -> Client:
        if self._client is None and not self._stopping:
            try:
                async with asyncio.timeout(wait_s):
                    await self._up.wait()
            except TimeoutError:
                pass
        if self._client is None:
            raise NotConnected(f"{self.name} is not connected ({self.problem or self.state.value})")
        return self._client

    async def _hold(self) -> None:
        failures = 0
        while not self._stopping:
            self.state = ServerState.CONNECTING
            try:
                async with AsyncExitStack() as stack:
                    client = await stack.enter_async_context(self._client_for(stack))
                    await self._list(client)
                    self._client, self.state, self.problem = client, ServerState.UP, None
                    self.connects += 1
                    failures = 0
                    self._up.set()
                    self._first_attempt.set()
                    log.info("MCP server %s is connected", self.name)
                    await self._stay(client)
            except Exception as exc:
                self.problem = describe(exc, server=self.name, http_status=self.last_http_error)
                log.warning("MCP server not connected: %s", self.problem)
            finally:
                self._client = None
                self._up.clear()
            if self._stopping:
                break
            self.state = ServerState.DOWN
            self._first_attempt.set()
            failures += 1
            await self._pause(RECONNECT.delay(failures))

    async def _stay(self, client: Client) -> None:
        """While connected: re-list every `refresh_s` until a call finds the connection gone, or `stop()`."""
        while not self._stopping:
            self._broken.clear()
            try:
                async with asyncio.timeout(self._refresh_s):
                    await self._broken.wait()
            except TimeoutError:
                await self._list(client)
                continue
            if not self._stopping:
                log.warning("MCP server %s: the connection stopped; reconnecting", self.name)
            return

    async def _list(self, client: Client) -> None:
        tools: list[Tool] = []
        cursor: str | None = None
        async with asyncio.timeout(self.spec.timeout_s):
            for _ in range(MAX_LISTING_PAGES):
                page = await client.list_tools(cursor=cursor, cache_mode="refresh")
                tools.extend(page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    break
        await self._on_listing(tools)

    async def _pause(self, delay_s: float) -> None:
        self._broken.clear()
        try:
            async with asyncio.timeout(delay_s):
                await self._broken.wait()  # `stop()` ends the pause early
        except TimeoutError:
            pass

    def _client_for(self, stack: AsyncExitStack) -> Client:
        if self.spec.url is not None:
            http = httpx2.AsyncClient(
                headers=self._headers,
                timeout=httpx2.Timeout(self.spec.timeout_s),
                event_hooks={"response": [self._note_status]},
            )
            stack.push_async_callback(http.aclose)
            transport = streamable_http_client(self.spec.url, http_client=http)
        else:
            assert self.spec.command is not None
            command, *args = self.spec.command
            parameters = StdioServerParameters(command=command, args=args, env=self._env or None)
            transport = stdio_client(parameters, errlog=_server_log(stack))
        return Client(transport, cache=None)

    async def _note_status(self, response: httpx2.Response) -> None:
        self.last_http_error = response.status_code if response.status_code >= 400 else None


def _connection_gone(exc: BaseException) -> bool:
    """A call that found the connection closed (not merely slow): the server must be reconnected."""
    return connection_lost(leaf(exc))


def _server_log(stack: AsyncExitStack) -> TextIO:
    """Where a stdio server's stderr goes: nowhere, so `parley ask` prints only its own progress."""
    sink = open(os.devnull, "w")  # noqa: SIM115 - closed with the connection
    stack.callback(sink.close)
    return sink
