"""TcpProxy: a real TCP hop on 127.0.0.1:0 in front of a server (PostgreSQL), which a test can cut.

Clients connect to `proxy.port`; each connection is piped byte for byte to the upstream. `close()` stops
listening and aborts every piped connection at once, as a database crash or a network partition would: the
client's open connections drop mid-conversation and new ones are refused; `restore()` listens again on the
same port (the database is back). `freeze()` is the quieter failure:
connections stay open (and new ones are accepted) but nothing is passed on any more, like a database that
hangs or a network that drops packets. Runs on the test's event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

logger = logging.getLogger(__name__)

_CHUNK_BYTES = 64 * 1024
_CLOSE_DEADLINE_S = 5.0


class TcpProxy:
    """`async with TcpProxy(5432) as proxy:` → connect to 127.0.0.1:`proxy.port`; `await proxy.close()` cuts."""

    def __init__(self, upstream_port: int, upstream_host: str = "127.0.0.1") -> None:
        self._upstream = (upstream_host, upstream_port)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._handlers = 0
        self._idle = asyncio.Event()  # set while no connection is being piped
        self._idle.set()
        self._flowing = asyncio.Event()
        self._flowing.set()
        self.connections_made = 0
        self._port = 0  # kept across `close()`, so `restore()` listens where the clients connect

    @property
    def port(self) -> int:
        assert self._port, "start the proxy first"
        return self._port

    async def start(self) -> TcpProxy:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self._port)
        self._port = int(self._server.sockets[0].getsockname()[1])
        return self

    async def restore(self) -> None:
        """After `close()`: listen again on the same port and pass everything on (the database is back)."""
        assert self._server is None, "the proxy is still open"
        self._flowing.set()
        await self.start()

    def freeze(self) -> None:
        """From now on, forward nothing in either direction (until `close()`); connections stay open."""
        self._flowing.clear()

    async def close(self) -> None:
        """Stop listening and abort every connection; returns once every pipe has ended."""
        if self._server is None:
            return
        self._server.close()
        self._flowing.set()  # frozen pipes wake up and find their transports aborted
        for writer in list(self._writers):
            writer.transport.abort()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), _CLOSE_DEADLINE_S)
        self._server = None

    async def __aenter__(self) -> TcpProxy:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def _handle(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        self._handlers += 1
        self._idle.clear()
        try:
            self._writers.add(client_writer)
            await self._flowing.wait()
            if client_writer.transport.is_closing():  # cut while it waited
                self._writers.discard(client_writer)
                return
            try:
                upstream_reader, upstream_writer = await asyncio.open_connection(*self._upstream)
            except OSError as exc:
                logger.debug("tcp proxy: upstream %s:%s refused: %s", *self._upstream, exc)
                client_writer.transport.abort()
                self._writers.discard(client_writer)
                return
            self.connections_made += 1
            self._writers.update((client_writer, upstream_writer))
            try:
                await asyncio.gather(
                    _pipe(client_reader, upstream_writer, self._flowing),
                    _pipe(upstream_reader, client_writer, self._flowing),
                )
            finally:
                for writer in (client_writer, upstream_writer):
                    writer.transport.abort()
                    self._writers.discard(writer)
        finally:
            self._handlers -= 1
            if not self._handlers:
                self._idle.set()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, flowing: asyncio.Event) -> None:
    """Copy until either side ends; then end the other direction too (abort wakes its read)."""
    try:
        while data := await reader.read(_CHUNK_BYTES):
            await flowing.wait()  # frozen: what arrived is held, never delivered
            if writer.transport.is_closing():
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.transport.abort()
