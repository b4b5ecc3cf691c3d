"""The web front of `parley serve` over HTTP: a process of its own on the public port, in front of the application.

Why a process. The application's interpreter runs the runs: the engine, the fact-checker, the store's writes,
Slack's updates. A request it serves waits for that work, whether behind the ready callbacks of one event loop
or for the interpreter's lock from a thread of its own (bench/RESULTS.md, issue 18), while Slack wants its 200
within 3 s and Parley aims at tens of milliseconds. The front shares nothing with the runs. It reads a request;
an event callback Slack signed (`bot.slack.acks`) is answered 200 at once and passed on; every other request
(interactivity, slash commands, URL verification, /healthz, /metrics, anything unknown) is passed to the
application and answered with what the application says, or 503 when it does not answer.

The application listens on a Unix socket in a private directory and starts the front as its child
(`bot.serving`). The front stops on SIGTERM or SIGINT, and when its standard input (a pipe from the
application) ends: a front never outlives the application it serves. It imports nothing of the application.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from bot.slack.acks import EVENTS_PATH, EventAcks

log = logging.getLogger(__name__)

# How long the front took to acknowledge an event it passes on: the application counts it as the ack's time.
ACK_SECONDS_HEADER = "x-parley-ack-seconds"
SIGNING_SECRET_ENV = "PARLEY_FRONT_SIGNING_SECRET"  # Slack's signing secret, handed to the front (not in argv)
UPSTREAM_TIMEOUT_S = 30.0  # a request to the application; Slack itself gives up after 3 s
PASS_ON_DELAYS_S = (0.05, 0.5)  # an acknowledged event the application's socket refused is tried again after these
# Events passed on at once, each on a kept connection: the application takes them one at a time on its loop
# anyway, and a burst with a request (and a connection) per event kept the front's own loop busy for 100s of ms.
PASS_ON_LANES = 4
DRAIN_TIMEOUT_S = 10.0  # acknowledged events still being passed on when the front stops
STDIN = 0
METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
# Headers that describe one connection, not the request or the response: never relayed.
HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "content-length"}
)


NOT_RELAYED = HOP_BY_HOP | {ACK_SECONDS_HEADER}  # only the front says how long its acknowledgement took
NOT_RETURNED = HOP_BY_HOP | {"content-encoding"}  # httpx has decoded the body already


def upstream_client(socket_path: str) -> httpx.AsyncClient:
    """A client of the application's Unix socket (the host in a URL is only a name)."""
    return httpx.AsyncClient(
        transport=httpx.AsyncHTTPTransport(uds=socket_path),
        base_url="http://parley",
        timeout=UPSTREAM_TIMEOUT_S,
        trust_env=False,
    )


class Front:
    """The front's ASGI app: Slack's signed events acknowledged at once (with `acks`; without, every request
    waits for the application's answer), everything relayed to `upstream`."""

    def __init__(self, upstream: httpx.AsyncClient, acks: EventAcks | None) -> None:
        self._upstream = upstream
        self._acks = acks
        self._passing: set[asyncio.Task[None]] = set()
        self._lanes = asyncio.Semaphore(PASS_ON_LANES)
        self.app = Starlette(routes=[Route("/{path:path}", self._relay, methods=METHODS)])

    async def _relay(self, request: Request) -> Response:
        started = time.perf_counter()
        body = await request.body()
        headers = [(name, value) for name, value in request.headers.items() if name not in NOT_RELAYED]
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        if (
            self._acks is not None
            and request.method == "POST"
            and request.url.path == EVENTS_PATH
            and self._acks.owed_at_once(body, request.headers)
        ):
            headers.append((ACK_SECONDS_HEADER, f"{time.perf_counter() - started:.6f}"))
            task = asyncio.create_task(self._pass_on(target, body, headers))
            self._passing.add(task)  # a strong reference until it ends
            task.add_done_callback(self._passing.discard)
            return Response(status_code=200)
        try:
            answer = await self._upstream.request(request.method, target, content=body, headers=headers)
        except httpx.HTTPError as exc:
            log.warning("the application did not answer %s %s: %s", request.method, request.url.path, _said(exc))
            return PlainTextResponse("Parley's application is not answering; try again shortly", status_code=503)
        kept = {name: value for name, value in answer.headers.items() if name not in NOT_RETURNED}
        return Response(answer.content, status_code=answer.status_code, headers=kept)

    async def _pass_on(self, target: str, body: bytes, headers: list[tuple[str, str]]) -> None:
        """An acknowledged event to the application: Slack will not send it again, so a refused connection is
        tried again, and an event that cannot be passed on is logged as lost."""
        for delay in (*PASS_ON_DELAYS_S, None):
            try:
                async with self._lanes:
                    answer = await self._upstream.post(target, content=body, headers=headers)
            except httpx.TransportError as exc:
                if delay is not None:
                    await asyncio.sleep(delay)
                    continue
                log.error("an event Slack was told Parley took could not be passed on, and is lost: %s", _said(exc))
                return
            if answer.status_code >= 400:
                log.error(
                    "the application refused an event the front acknowledged: %s %s",
                    answer.status_code,
                    answer.text[:200],
                )
            return

    async def serve(self, server: uvicorn.Server) -> int | str | None:
        """`server` (serving this front) until told to exit; then the events being passed on are finished and the
        upstream client closed. The status uvicorn exits with when it cannot start (a port in use: it logged why)."""
        try:
            try:
                await server.serve()
            except SystemExit as exc:
                return exc.code if exc.code is not None else 1
            return None
        finally:
            if self._passing:
                await asyncio.wait(self._passing, timeout=DRAIN_TIMEOUT_S)
            await self._upstream.aclose()


def front_server(front: Front, *, host: str, port: int, log_level: str = "info") -> uvicorn.Server:
    config = uvicorn.Config(front.app, host=host, port=port, lifespan="off", log_level=log_level)
    config.access_log = False
    return uvicorn.Server(config)


def _said(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _stop_when_stdin_ends(server: uvicorn.Server) -> None:
    """The application holds our stdin's other end: when it is gone (exited, killed), the front stops too."""

    def watch() -> None:
        try:  # the descriptor, not sys.stdin: a thread blocked in a buffered read would hold its lock at exit
            while os.read(STDIN, 4096):
                pass
        except OSError:
            pass
        server.should_exit = True

    threading.Thread(target=watch, name="parley-front-stdin", daemon=True).start()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bot.front", description="Parley's web front (started by parley serve)"
    )
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--upstream", required=True, help="the application's Unix socket")
    args = parser.parse_args(argv)
    secret = os.environ.pop(SIGNING_SECRET_ENV, "")
    front = Front(upstream_client(args.upstream), EventAcks(secret) if secret else None)
    server = front_server(front, host=args.host, port=args.port)
    _stop_when_stdin_ends(server)
    # uvicorn catches SIGTERM and SIGINT while it serves, then raises them again to the handlers it found: these,
    # so that the front still finishes passing on what it acknowledged (Python's own would end it at once).
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: setattr(server, "should_exit", True))
    status = asyncio.run(front.serve(server))
    return 0 if status is None else status if isinstance(status, int) else 1


if __name__ == "__main__":
    sys.exit(main())
