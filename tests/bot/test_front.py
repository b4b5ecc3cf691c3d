"""The web front (`bot.front`) against a stand-in for the application on a real Unix socket, with Slack's real
signature: what it acknowledges by itself, what it relays, and what happens when the application is slow, down
or gone. `parley serve`'s own front process is tried in tests/bot/slack/test_serve_process.py."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from bot.front import ACK_SECONDS_HEADER, Front, front_server, upstream_client
from bot.slack.acks import EventAcks
from tests.fakes.slack_events import SIGNING_SECRET, _signed_request, app_mention
from tests.serving import free_port, until_started

START_S = 10


@dataclass
class Application:
    """What the front passes on: each request as received; `/slack/events` waits for `release` when held."""

    received: list[tuple[str, str, dict[str, str], bytes]] = field(default_factory=list)
    release: asyncio.Event = field(default_factory=asyncio.Event)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    def app(self) -> Starlette:
        async def events(request: Request) -> Response:
            body = await request.body()
            self.received.append((request.method, str(request.url.path), dict(request.headers), body))
            self.arrived.set()
            await self.release.wait()
            if body.startswith(b"{"):
                return JSONResponse({"bolt": "answered"})
            return PlainTextResponse("interactive answer", headers={"x-from": "application"})

        async def health(request: Request) -> Response:
            self.received.append(("GET", request.url.path + "?" + request.url.query, dict(request.headers), b""))
            return JSONResponse({"database": "ok"}, status_code=503)

        async def big(_: Request) -> Response:
            return Response(b"x" * 5_000_000, media_type="text/plain")

        return Starlette(
            routes=[
                Route("/slack/events", events, methods=["POST"]),
                Route("/healthz", health),
                Route("/metrics", big),
            ]
        )


@contextlib.asynccontextmanager
async def fronted(application: Application | None, *, acks: bool = True) -> AsyncIterator[str]:
    """The front on a free loopback port before `application` on a Unix socket (None: nothing listens there);
    the front's URL."""
    with tempfile.TemporaryDirectory() as private:
        path = os.path.join(private, "app.sock")
        app_server = None
        app_serving: asyncio.Future[object] | None = None
        if application is not None:
            config = uvicorn.Config(application.app(), uds=path, lifespan="off", log_level="warning")
            app_server = uvicorn.Server(config)
            app_serving = asyncio.ensure_future(app_server.serve())
            await until_started(app_server, app_serving)
        front = Front(upstream_client(path), EventAcks(SIGNING_SECRET) if acks else None)
        server = front_server(front, host="127.0.0.1", port=0, log_level="warning")
        serving = asyncio.ensure_future(front.serve(server))
        try:
            await until_started(server, serving)
            yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
        finally:
            if application is not None:
                application.release.set()
            server.should_exit = True
            await asyncio.wait_for(serving, START_S)
            if app_server is not None and app_serving is not None:
                app_server.should_exit = True
                await asyncio.wait_for(app_serving, START_S)


async def post(url: str, body: dict | bytes, *, signature: str | None = None, **extra_headers: str) -> httpx.Response:
    content, headers = _signed_request(body, SIGNING_SECRET, None, "http_timeout", None, signature)
    headers |= {name.replace("_", "-"): value for name, value in extra_headers.items()}
    async with httpx.AsyncClient(trust_env=False, timeout=START_S) as http:
        return await http.post(f"{url}/slack/events", content=content, headers=headers)


async def test_a_signed_event_is_acknowledged_before_the_application_answers_and_then_passed_on_whole():
    application = Application()  # held: it answers nothing until released
    body = app_mention("Wie spät ist es in 東京?")
    async with fronted(application) as url:
        response = await asyncio.wait_for(post(url, body), 5)
        assert (response.status_code, response.content) == (200, b"")
        await asyncio.wait_for(application.arrived.wait(), 5)
        application.release.set()
        [(method, path, headers, passed)] = application.received
    assert (method, path) == ("POST", "/slack/events")
    assert json.loads(passed) == body  # byte for byte: bolt verifies the same signature again
    assert headers["x-slack-signature"].startswith("v0=") and "x-slack-request-timestamp" in headers
    assert 0 <= float(headers[ACK_SECONDS_HEADER]) < 5


@pytest.mark.parametrize("forged", ["v0=" + "0" * 64, "garbage"])
async def test_a_forged_event_waits_for_the_applications_answer(forged: str):
    """The front acknowledges nothing it cannot verify: bolt decides (here the stand-in answers), and Slack
    hears what bolt said."""
    application = Application()
    application.release.set()
    async with fronted(application) as url:
        response = await post(url, app_mention("hi"), signature=forged, x_parley_ack_seconds="0.000001")
    assert response.json() == {"bolt": "answered"}
    [(_, _, headers, _)] = application.received
    assert ACK_SECONDS_HEADER not in headers


async def test_interactivity_and_health_are_relayed_with_the_applications_status_headers_and_body():
    application = Application()
    application.release.set()
    async with fronted(application) as url:
        interactive = await post(url, b"payload=%7B%22type%22%3A%22block_actions%22%7D")
        async with httpx.AsyncClient(trust_env=False, timeout=START_S) as http:
            health = await http.get(f"{url}/healthz?verbose=1")
            metrics = await http.get(f"{url}/metrics")
    assert (interactive.status_code, interactive.text) == (200, "interactive answer")
    assert interactive.headers["x-from"] == "application"
    assert (health.status_code, health.json()) == (503, {"database": "ok"})
    assert ("GET", "/healthz?verbose=1") in [(m, p) for m, p, _, _ in application.received]
    assert len(metrics.content) == 5_000_000


async def test_without_a_signing_secret_every_event_waits_for_the_application():
    application = Application()
    application.release.set()
    async with fronted(application, acks=False) as url:
        response = await post(url, app_mention("hi"))
    assert response.json() == {"bolt": "answered"}


async def test_with_the_application_gone_requests_get_503_and_an_acknowledged_event_is_logged_as_lost(caplog):
    caplog.set_level(logging.WARNING, logger="bot.front")
    async with fronted(None) as url:
        async with httpx.AsyncClient(trust_env=False, timeout=START_S) as http:
            health = await http.get(f"{url}/healthz")
        event = await post(url, app_mention("hi"))  # Slack hears 200: the event was signed
    assert health.status_code == 503 and "not answering" in health.text
    assert event.status_code == 200
    assert any("is lost" in record.getMessage() for record in caplog.records), caplog.text


async def test_a_front_told_to_stop_first_passes_on_what_it_acknowledged():
    """An event acknowledged while the application's socket refused connections (a restart, a full backlog) is
    tried again; a front told to stop meanwhile finishes passing it on before it exits."""
    with tempfile.TemporaryDirectory() as private:
        path = os.path.join(private, "app.sock")
        front = Front(upstream_client(path), EventAcks(SIGNING_SECRET))
        server = front_server(front, host="127.0.0.1", port=0, log_level="warning")
        serving = asyncio.ensure_future(front.serve(server))
        await until_started(server, serving)
        url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
        assert (await post(url, app_mention("eins"))).status_code == 200  # nothing listens on the socket yet
        await asyncio.sleep(0.2)  # its first tries were refused
        application = Application()
        application.release.set()
        app_server = uvicorn.Server(uvicorn.Config(application.app(), uds=path, lifespan="off", log_level="warning"))
        app_serving = asyncio.ensure_future(app_server.serve())
        await until_started(app_server, app_serving)
        assert application.received == []
        server.should_exit = True
        await asyncio.wait_for(serving, START_S)
        assert len(application.received) == 1  # passed on before the front's serve() returned
        app_server.should_exit = True
        await asyncio.wait_for(app_serving, START_S)


def test_the_front_imports_nothing_of_the_application():
    """It starts in a fraction of the application's time, and nothing of a run can slow it down."""
    probe = (
        "import sys, bot.front; print(sorted(m for m in sys.modules"
        " if m.split('.')[0] in {'agent', 'sqlalchemy', 'slack_bolt', 'mcp'}"
        " or m.startswith(('bot.store', 'bot.core', 'bot.assembly', 'bot.web'))))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "[]"


@pytest.mark.slow
def test_the_front_process_stops_when_its_standard_input_ends(tmp_path: Path):
    port = free_port()
    command = [sys.executable, "-m", "bot.front", "--host", "127.0.0.1", "--port", str(port)]
    front = subprocess.Popen(
        [*command, "--upstream", str(tmp_path / "none.sock")], stdin=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        for _ in range(START_S * 20):
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1, trust_env=False).status_code == 503:
                    break
            assert front.poll() is None, front.stderr.read() if front.stderr else ""
            subprocess.run(["sleep", "0.05"], check=True)
        assert front.stdin is not None
        front.stdin.close()  # as when parley serve is gone
        assert front.wait(START_S) == 0
        assert b"Traceback" not in (front.stderr.read() if front.stderr else b"")
    finally:
        if front.poll() is None:
            front.kill()
            front.wait()
