"""`parley serve` as operators run it: its own process, environment and port; refused configurations exit 2
with one line; a good one answers /healthz and a signed mention, and SIGTERM ends it cleanly."""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from uvicorn.config import STARTUP_FAILURE

from bot.assembly import build_runtime
from bot.settings import Settings
from tests.bot.slack.harness import agent_for, calculation
from tests.bot.slack.seen import is_finished, shown
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_events import CHANNEL, SIGNING_SECRET, app_mention, post_event
from tests.fakes.slack_workspace import BOT_TOKEN
from tests.serving import alive, children, free_port, server_process, terminate

pytestmark = pytest.mark.slow  # starts `parley` processes: `pytest -m "not slow"` leaves them out

REPO = Path(__file__).resolve().parents[3]
PARLEY = Path(sys.executable).with_name("parley")
EXIT_CONFIG = 2
RUN_TIMEOUT_S = 30
READY_S = 20
STOP_S = 15
# Fast retries so that a test never waits on back-off; one tool is all the mention needs.
CONFIG = """\
limits: {retry_backoff_base_s: 0.01, retry_backoff_max_s: 0.05, llm_max_retries: 1}
tools:
  - builtin: calculator
"""


def environment(home: Path, **settings: str) -> dict[str, str]:
    """This process's environment without any Parley or Slack setting (nor proxies), HOME in `home`."""
    inherited = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("PARLEY_", "SLACK_")) and name.lower() not in {"http_proxy", "https_proxy", "all_proxy"}
    }
    return inherited | {
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "NO_PROXY": "127.0.0.1,localhost",
        "PYTHONPATH": str(REPO),
        "PYTHONIOENCODING": "utf-8",
        **settings,
    }


def serve_environment(
    home: Path, database: str, slack: FakeSlackApi, llm: FakeLLMServer, *, workers: int = 2, **settings: str
) -> dict[str, str]:
    """The environment of a `parley serve` answering the fake Slack with the fake LLM, on `database`."""
    return environment(
        home,
        SLACK_BOT_TOKEN=BOT_TOKEN,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        PARLEY_SLACK_API_URL=slack.base_url,
        PARLEY_DATABASE_URL=database,
        PARLEY_LLM_BASE_URL=llm.base_url,
        PARLEY_LLM_MODEL="test-model",
        PARLEY_WORKERS=str(workers),
        **settings,
    )


def parley(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PARLEY), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False
    )


# Slack settings `parley serve` must refuse, and the word its one line of complaint must contain.
REFUSED = {
    "no bot token": ({"SLACK_SIGNING_SECRET": SIGNING_SECRET}, "SLACK_BOT_TOKEN"),
    "no signing secret": ({"SLACK_BOT_TOKEN": BOT_TOKEN}, "SLACK_SIGNING_SECRET"),
    "user token": ({"SLACK_BOT_TOKEN": "xoxp-a-user-token", "SLACK_SIGNING_SECRET": SIGNING_SECRET}, "xoxb-"),
    "garbage token": ({"SLACK_BOT_TOKEN": "not-a-token", "SLACK_SIGNING_SECRET": SIGNING_SECRET}, "xoxb-"),
}


@pytest.fixture(scope="module")
def refusals(tmp_path_factory: pytest.TempPathFactory) -> dict[str, subprocess.CompletedProcess[str]]:
    """`parley serve` under each refused setting, all at once (each process spends its second importing)."""
    home = tmp_path_factory.mktemp("refused")

    def serve(case: str) -> subprocess.CompletedProcess[str]:
        slack, _ = REFUSED[case]
        env = environment(home, PARLEY_LLM_BASE_URL="http://127.0.0.1:9/v1", PARLEY_LLM_MODEL="test", **slack)
        return parley("serve", "--port", str(free_port()), env=env, cwd=home)

    with ThreadPoolExecutor(len(REFUSED)) as pool:
        return dict(zip(REFUSED, pool.map(serve, REFUSED), strict=True))


@pytest.mark.parametrize("case", list(REFUSED))
def test_serve_refuses_incomplete_slack_settings_with_one_line(refusals, case):
    done, complaint = refusals[case], REFUSED[case][1]
    assert done.returncode == EXIT_CONFIG, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("parley: ") and complaint in lines[0]
    assert done.stdout == ""
    for secret in (SIGNING_SECRET, "xoxp-a-user-token", "not-a-token"):
        assert secret not in done.stderr  # named, never echoed


def wait_until_healthy(url: str, server: subprocess.Popen[bytes], stderr: Path) -> httpx.Response:
    deadline = time.monotonic() + READY_S
    while True:
        if server.poll() is not None:
            raise AssertionError(f"parley serve exited with {server.returncode}:\n{stderr.read_text()}")
        try:
            response = httpx.get(url, timeout=2, trust_env=False)
            if response.status_code == 200:
                return response
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"parley serve was not healthy within {READY_S}s:\n{stderr.read_text()}")
        time.sleep(0.1)


def test_serve_answers_health_and_a_signed_mention_then_stops_cleanly_on_sigterm(
    tmp_path: Path, serve_db: str, slack_api: FakeSlackApi, llm_server: FakeLLMServer
):
    llm_server.respond_with(calculation("47 * 12", "564"))
    port = free_port()
    config = tmp_path / "parley.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    env = serve_environment(tmp_path, serve_db, slack_api, llm_server, workers=2)
    stdout, stderr = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    command = [str(PARLEY), "serve", "--port", str(port), "--host", "127.0.0.1", "--config", str(config)]
    with server_process(command, env=env, cwd=tmp_path, stderr=stderr, stdout=stdout) as server:
        health = wait_until_healthy(f"http://127.0.0.1:{port}/healthz", server, stderr)
        assert health.json()["database"] == "ok" and health.json()["llm"] == "ok", health.json()

        body = app_mention("What is 47 times 12?")
        response = post_event(f"http://127.0.0.1:{port}/slack/events", body, SIGNING_SECRET)
        assert response.status_code == 200
        thread = body["event"]["ts"]
        [answer] = slack_api.wait_for(
            lambda: (found := slack_api.messages_in(CHANNEL, thread)) and is_finished(found) and found,
            timeout_s=20,
            what="the answer of `parley serve` in the thread",
        )
        assert "564 [1]" in shown(answer) and "✅ solved" in shown(answer)

        [front] = children(server.pid)  # the web front, on the public port
        terminate(server, STOP_S)
        assert not alive(front), "the web front outlived parley serve"

    errors = stderr.read_text(encoding="utf-8")
    assert server.returncode in (0, -signal.SIGTERM), errors
    assert "Traceback" not in errors and "Error" not in errors.replace("parley: ", ""), errors


def test_the_web_front_stops_when_parley_serve_is_killed(
    tmp_path: Path, serve_db: str, slack_api: FakeSlackApi, llm_server: FakeLLMServer
):
    """kill -9 leaves no handler to stop the front: it sees its standard input (a pipe from parley serve) end,
    and stops too, so the port is free for the replacement."""
    port = free_port()
    env = serve_environment(tmp_path, serve_db, slack_api, llm_server)
    stderr = tmp_path / "stderr.txt"
    command = [str(PARLEY), "serve", "--port", str(port), "--host", "127.0.0.1"]
    with server_process(command, env=env, cwd=tmp_path, stderr=stderr) as server:
        wait_until_healthy(f"http://127.0.0.1:{port}/healthz", server, stderr)
        [front] = children(server.pid)
        server.kill()
        server.wait(STOP_S)
        deadline = time.monotonic() + STOP_S
        while alive(front) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(front), "the web front outlived a killed parley serve"
    with socket.socket() as again:  # the port is free
        again.bind(("127.0.0.1", port))


def test_serve_on_a_port_in_use_exits_with_uvicorns_reason(
    tmp_path: Path, serve_db: str, slack_api: FakeSlackApi, llm_server: FakeLLMServer
):
    env = serve_environment(tmp_path, serve_db, slack_api, llm_server)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = parley("serve", "--port", str(port), "--host", "127.0.0.1", env=env, cwd=tmp_path)
    assert done.returncode == STARTUP_FAILURE, done.stderr  # uvicorn's status, as the front exited with it
    assert "address already in use" in done.stderr.lower() and "web front exited" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr


def test_serve_without_slack_serves_health_and_metrics_and_says_slack_is_off(
    tmp_path: Path, serve_db: str, llm_server: FakeLLMServer
):
    """No Slack variable at all: not a configuration error, but an application with Slack off — health and
    metrics answered, the timed jobs running, and one plain line in the log saying why nothing else is."""
    port = free_port()
    env = environment(
        tmp_path, PARLEY_DATABASE_URL=serve_db, PARLEY_LLM_BASE_URL=llm_server.base_url, PARLEY_LLM_MODEL="m"
    )
    stderr = tmp_path / "stderr.txt"
    command = [str(PARLEY), "serve", "--port", str(port), "--host", "127.0.0.1"]
    with server_process(command, env=env, cwd=tmp_path, stderr=stderr) as server:
        health = wait_until_healthy(f"http://127.0.0.1:{port}/healthz", server, stderr).json()
        assert (health["database"], health["slack"]) == ("ok", "off"), health
        metrics = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5, trust_env=False)
        assert metrics.status_code == 200 and "parley_store_up 1.0" in metrics.text
        events = httpx.post(f"http://127.0.0.1:{port}/slack/events", content=b"{}", timeout=5, trust_env=False)
        assert events.status_code == 404  # nothing of Slack is served
        terminate(server, STOP_S)

    errors = stderr.read_text(encoding="utf-8")
    assert server.returncode in (0, -signal.SIGTERM), errors
    assert errors.count("Slack is off") == 1 and "SLACK_BOT_TOKEN" in errors, errors
    assert "Traceback" not in errors, errors


async def test_a_correct_slack_configuration_starts_without_warnings(db, slack_api, llm_server, monkeypatch, caplog):
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)  # as `parley serve` runs: the token is in the environment
    monkeypatch.setenv("SLACK_SIGNING_SECRET", SIGNING_SECRET)
    caplog.set_level(logging.WARNING)
    settings = Settings()  # what the entry point builds from that environment
    async with httpx.AsyncClient() as http, agent_for(llm_server.base_url, ["calculator"], http) as agent:
        build_runtime(settings.model_copy(update={"slack_api_url": slack_api.base_url}), db, agent)
    assert [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING] == []
