"""Socket Mode (SLACK_APP_TOKEN) serves GET /healthz on PORT as HTTP mode does, so the image's HEALTHCHECK passes
in both modes. A connection Slack refuses is logged in one line and retried, never fatal; health says why;
SIGTERM (or cancellation) stops the WebSocket, the health server and the workers together, cleanly.

Slack cannot be reached from here: the process test leaves the fake Web API to refuse the app-level token
(`invalid_auth`, as Slack does for a wrong one); the in-process test puts a fake Socket Mode gateway in front
of it, which refuses twice, then hands out a WebSocket of its own and delivers an app_mention over it.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import pytest
from aiohttp import web

from bot.assembly import Runtime, build_runtime
from bot.serving import serve_socket_mode
from bot.settings import Settings
from bot.slack.socket_mode import FIRST_RETRY_S
from bot.web import HEALTH_PATH
from tests.bot.slack.harness import UPDATE_INTERVAL_S, agent_for, calculation
from tests.bot.slack.scrape import Scrape
from tests.bot.slack.seen import is_finished, shown
from tests.bot.slack.test_serve_process import PARLEY, STOP_S, environment, wait_until_healthy
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_events import CHANNEL, SIGNING_SECRET, app_mention, post_event
from tests.fakes.slack_workspace import BOT_TOKEN
from tests.serving import free_port, server_process, terminate
from tests.test_dockerfile import RUNTIME, health_check

APP_TOKEN = "xapp-1-A0PARLEY-1-fake"
CONNECTIONS_OPEN = "apps.connections.open"
REFUSAL_LINE = "Socket Mode: cannot connect to Slack (Slack answered invalid_auth: check SLACK_APP_TOKEN"


def image_healthcheck(port: int) -> subprocess.CompletedProcess[str]:
    """The Dockerfile's HEALTHCHECK command as Docker runs it (PORT set, `python` the image's, a proxy that must
    not catch it)."""
    check = health_check(RUNTIME.last("HEALTHCHECK") or "")
    env = environment(Path.home(), PORT=str(port), http_proxy="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9")
    env.pop("NO_PROXY")
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    return subprocess.run(
        check.command, env=env, capture_output=True, text=True, timeout=check.seconds("timeout"), check=False
    )


@pytest.mark.slow
def test_socket_mode_serve_answers_health_retries_slack_and_stops_cleanly_on_sigterm(
    tmp_path: Path, serve_db: str, slack_api: FakeSlackApi, llm_server: FakeLLMServer
):
    port = free_port()
    env = environment(
        tmp_path,
        SLACK_BOT_TOKEN=BOT_TOKEN,
        SLACK_APP_TOKEN=APP_TOKEN,  # Socket Mode: no signing secret needed
        PARLEY_SLACK_API_URL=slack_api.base_url,  # where apps.connections.open goes, as every Web API call
        PARLEY_DATABASE_URL=serve_db,
        PARLEY_LLM_BASE_URL=llm_server.base_url,
        PARLEY_LLM_MODEL="test-model",
        PORT=str(port),  # as in the image: PORT, not --port
    )
    stderr = tmp_path / "stderr.txt"
    command = [str(PARLEY), "serve", "--host", "127.0.0.1"]
    with server_process(command, env=env, cwd=tmp_path, stderr=stderr) as server:
        health = wait_until_healthy(f"http://127.0.0.1:{port}{HEALTH_PATH}", server, stderr)
        report = health.json()
        assert report["database"] == "ok" and report["llm"] == "ok", report
        assert report["queue"] == "0 running, 0 waiting", report
        assert image_healthcheck(port).returncode == 0, "the image's own HEALTHCHECK fails in Socket Mode"

        # Slack refuses the app-level token: the process keeps serving health and keeps asking Slack.
        opened = slack_api.wait_for(
            lambda: calls if len(calls := slack_api.calls(CONNECTIONS_OPEN)) >= 2 else None,
            timeout_s=FIRST_RETRY_S + 10,
            what="a second apps.connections.open after the first was refused",
        )
        assert all(call.headers["authorization"] == f"Bearer {APP_TOKEN}" for call in opened)
        assert all(call.response == {"ok": False, "error": "invalid_auth"} for call in opened)
        report = httpx.get(f"http://127.0.0.1:{port}{HEALTH_PATH}", timeout=5, trust_env=False).json()
        assert report["database"] == "ok", report
        assert report["slack"].startswith("not connected (Socket Mode), retrying: Slack answered invalid_auth")
        assert server.poll() is None

        # Events come over the WebSocket only: a signed POST here is not taken (no signing secret to check it).
        response = post_event(f"http://127.0.0.1:{port}/slack/events", app_mention("Hello?"), SIGNING_SECRET)
        assert response.status_code == 404

        terminate(server, STOP_S)

    errors = stderr.read_text(encoding="utf-8")
    assert server.returncode == 0, errors
    assert "Traceback" not in errors and "Unclosed" not in errors, errors
    assert REFUSAL_LINE in errors and "retrying in 5 s; GET /healthz is still served" in errors, errors
    for line in errors.splitlines():  # the refusals are the only errors: one line each
        assert "ERROR" not in line or line.startswith("parley: ERROR bot.slack.socket_mode: " + REFUSAL_LINE[:30]), line
    assert slack_api.calls("chat.postMessage") == []  # nothing was asked, nobody was told anything
    assert image_healthcheck(port).returncode != 0  # and the check measures something: stopped, it fails


# --- in process: a Socket Mode gateway that lets the connection through ------------------------------------


class FakeSocketModeGateway:
    """Slack's side of Socket Mode on 127.0.0.1: apps.connections.open (refused `refusals` times with
    invalid_auth, then a ws:// URL of its own), the WebSocket (hello, then the envelopes a test delivers; acks
    recorded); every other Web API call is passed on to the FakeSlackApi, which answers it."""

    def __init__(self, slack_api: FakeSlackApi, *, refusals: int) -> None:
        self._slack_api = slack_api
        self._refusals = refusals
        self.opened: list[str] = []  # the Authorization header of each apps.connections.open
        self.acks: list[dict[str, Any]] = []
        self.sockets: list[web.WebSocketResponse] = []
        self._runner: web.AppRunner | None = None
        self._http: aiohttp.ClientSession | None = None
        self.base_url = ""

    async def __aenter__(self) -> FakeSocketModeGateway:
        app = web.Application()
        app.router.add_route("*", f"/api/{CONNECTIONS_OPEN}", self._open)
        app.router.add_get("/link", self._link)
        app.router.add_route("*", "/api/{method}", self._forward)
        self._runner = web.AppRunner(app, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.base_url = f"http://127.0.0.1:{port}/api"
        self._http = aiohttp.ClientSession()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._runner is not None and self._http is not None
        await self._http.close()
        await self._runner.cleanup()

    async def deliver(self, payload: dict[str, Any]) -> str:
        """An events_api envelope over the open WebSocket; its envelope_id, which the ack must carry."""
        envelope_id = str(uuid.uuid4())
        envelope = {"envelope_id": envelope_id, "type": "events_api", "payload": payload}
        await self.sockets[-1].send_json(envelope | {"accepts_response_payload": False, "retry_attempt": 0})
        return envelope_id

    async def _open(self, request: web.Request) -> web.Response:
        self.opened.append(request.headers.get("Authorization", ""))
        if len(self.opened) <= self._refusals:
            return web.json_response({"ok": False, "error": "invalid_auth"})
        ws_url = self.base_url.replace("http://", "ws://").removesuffix("/api") + "/link"
        return web.json_response({"ok": True, "url": ws_url})

    async def _link(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        self.sockets.append(socket)
        await socket.send_json({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A0PARLEY"}})
        async for message in socket:
            if message.type == aiohttp.WSMsgType.TEXT:
                self.acks.append(json.loads(message.data))
        return socket

    async def _forward(self, request: web.Request) -> web.Response:
        assert self._http is not None
        headers = {name: value for name, value in request.headers.items() if name.lower() != "host"}
        url = f"{self._slack_api.base_url}/{request.match_info['method']}"
        async with self._http.request(
            request.method, url, params=request.query, data=await request.read(), headers=headers
        ) as answered:
            return web.Response(
                status=answered.status, body=await answered.read(), content_type="application/json", charset="utf-8"
            )


async def eventually(check: Callable[[], Any], what: str, timeout_s: float = 10.0) -> Any:
    """`check()`'s first truthy value (awaited when it is a coroutine), polled on this loop."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out after {timeout_s}s waiting for {what}"
        await asyncio.sleep(0.02)


class Counted:
    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def wrap(self, name: str, function: Any) -> Any:
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] = self.calls.get(name, 0) + 1
            return function(*args, **kwargs)

        return counted


@contextlib.asynccontextmanager
async def socket_mode_bot(db: Any, gateway: FakeSocketModeGateway, llm_url: str) -> AsyncIterator[Runtime]:
    """As `parley serve` builds it in Socket Mode (no signing secret, the timed jobs on), Slack being the gateway."""
    settings = Settings(slack_bot_token=BOT_TOKEN, slack_app_token=APP_TOKEN, slack_api_url=gateway.base_url, workers=2)
    async with httpx.AsyncClient(trust_env=False) as http, agent_for(llm_url, ["calculator"], http) as agent:
        yield build_runtime(settings, db, agent, llm_url=llm_url, update_interval_s=UPDATE_INTERVAL_S, run_jobs=True)


async def test_socket_mode_retries_until_slack_lets_it_in_then_answers_over_the_websocket(
    db, slack_api: FakeSlackApi, llm_server: FakeLLMServer, caplog, monkeypatch
):
    caplog.set_level(logging.INFO, logger="bot.slack.socket_mode")
    llm_server.respond_with(calculation("47 * 12", "564"))
    port = free_port()
    health_url = f"http://127.0.0.1:{port}{HEALTH_PATH}"
    async with (
        FakeSocketModeGateway(slack_api, refusals=2) as gateway,
        socket_mode_bot(db, gateway, llm_server.base_url) as bot,
        httpx.AsyncClient(trust_env=False, timeout=10) as http,
    ):
        counted = Counted()
        assert bot.jobs is not None
        for name, owner in {"queue.start": bot.pool, "jobs.start": bot.jobs}.items():
            monkeypatch.setattr(owner, "start", counted.wrap(name, owner.start))
        for name, owner in {"queue.stop": bot.pool, "jobs.shutdown": bot.jobs}.items():
            method = name.split(".")[1]
            monkeypatch.setattr(owner, method, counted.wrap(name, getattr(owner, method)))
        serving = asyncio.create_task(
            serve_socket_mode(bot, APP_TOKEN, host="127.0.0.1", port=port, first_retry_s=0.05, max_retry_s=0.1)
        )

        async def connected() -> dict[str, str] | None:
            assert not serving.done(), serving.result()
            with contextlib.suppress(httpx.TransportError):
                report = (await http.get(health_url)).json()
                return report if report["slack"] == "connected (Socket Mode)" else None
            return None

        report = await eventually(connected, "/healthz to report the Slack connection")
        assert report["database"] == "ok" and report["llm"] == "ok", report
        assert gateway.opened == [f"Bearer {APP_TOKEN}"] * 3  # refused twice, retried, let in
        refusals = [r for r in caplog.records if r.levelno == logging.ERROR]
        assert [r.getMessage()[: len(REFUSAL_LINE)] for r in refusals] == [REFUSAL_LINE] * 2
        assert all(r.exc_info is None for r in caplog.records), "a refusal is one line, not a traceback"
        assert "Socket Mode: connected to Slack after 2 failed attempts" in caplog.messages

        # A mention over the WebSocket: acknowledged on it, answered in its thread through the Web API.
        body = app_mention("What is 47 times 12?")
        envelope_id = await gateway.deliver(body)
        await eventually(lambda: any(ack.get("envelope_id") == envelope_id for ack in gateway.acks), "the ack")
        [answer] = await slack_api.wait_for_async(
            lambda: (found := slack_api.messages_in(CHANNEL, body["event"]["ts"])) and is_finished(found) and found,
            timeout_s=20,
            what="the answer in the mention's thread",
        )
        assert "564 [1]" in shown(answer)
        # GET /metrics is served beside /healthz (no ack over HTTP to time: the acks went over the WebSocket).
        page = Scrape.parse((await http.get(f"http://127.0.0.1:{port}/metrics")).raise_for_status().text)
        assert page.value("parley_runs_finished_total", status="solved", reason="answered") == 1
        assert page.value("parley_slack_ack_duration_seconds_count") == 0
        # The events arrive over the WebSocket only: over HTTP, /healthz, /metrics and nothing else.
        assert (await http.post(f"http://127.0.0.1:{port}/slack/events", content=b"{}")).status_code == 404
        assert (await http.get(f"http://127.0.0.1:{port}/")).status_code == 404

        serving.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(serving, STOP_S)
        # Started once (no ASGI lifespan start on top of serve_socket_mode's own), stopped once.
        assert counted.calls == {"queue.start": 1, "jobs.start": 1, "jobs.shutdown": 1, "queue.stop": 1}
        await eventually(lambda: all(socket.closed for socket in gateway.sockets), "the WebSocket closed")
        with pytest.raises(httpx.ConnectError):
            await http.get(health_url)
