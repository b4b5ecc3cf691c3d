"""`parley serve` (or any server) as a child process of a test: a free loopback port, started with its
output in files, stopped by SIGTERM as an orchestrator would, and killed whatever happens in the test."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import uvicorn


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def server_process(
    command: Sequence[str], *, env: Mapping[str, str], cwd: Path, stderr: Path, stdout: Path | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """The running process; on the way out it is killed if the test left it running (a failed assertion)."""
    with contextlib.ExitStack() as files:
        err = files.enter_context(stderr.open("wb"))
        out = files.enter_context(stdout.open("wb")) if stdout else subprocess.DEVNULL
        server = subprocess.Popen(list(command), env=dict(env), cwd=cwd, stdout=out, stderr=err)
    try:
        yield server
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def terminate(server: subprocess.Popen[bytes], timeout_s: float) -> None:
    """SIGTERM, as a container runtime stops it, and wait for the exit."""
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=timeout_s)


def alive(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie is gone for good: only its parent's wait is missing)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z")


def children(pid: int) -> list[int]:
    """The processes `pid` started that still run (Linux's /proc)."""
    listed = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(child) for child in listed if alive(int(child))]


async def until_started(server: uvicorn.Server, serving: asyncio.Future[Any], timeout_s: float = 10.0) -> None:
    """Until uvicorn `server`, being served by `serving`, listens; AssertionError when it exits or takes too long."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not server.started:
        if serving.done():
            raise AssertionError(f"uvicorn did not start: {serving.result()}")
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"uvicorn did not start within {timeout_s:g} s")
        await asyncio.sleep(0.01)
