"""Several `parley serve` processes on one PostgreSQL, as operators run them: a replica killed with queued and
running runs, the database cut for 10 s under a run that finishes and a question that cannot start, and a
backlog far longer than the staleness threshold. Each thread sees exactly one true message, and the store ends
with the true status; no run is answered twice, none waiting is dropped.

The processes are real (`parley serve`, its own environment and port), so are PostgreSQL, the TCP proxy that
cuts it, and the HTTP fakes of Slack and the LLM. Every wait has a deadline; the tests poll, never sleep.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from bot.store import Database, connect
from bot.store.models import AuditEvent, Run
from bot.wording import NOT_STARTED_DATABASE_UNAVAILABLE
from tests.bot.slack.harness import question_of
from tests.bot.slack.seen import shown
from tests.bot.slack.test_serve_process import PARLEY, serve_environment
from tests.bot.store.postgres import PG_PORT
from tests.fakes.llm_server import FakeLLMServer, FakeReply, completion_with_content, completion_with_tool_calls
from tests.fakes.scripted_llm import RequestKind, classify
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_events import CHANNEL, SIGNING_SECRET, app_mention, post_event_async
from tests.fakes.slack_workspace import Message
from tests.fakes.tcp_proxy import TcpProxy
from tests.serving import free_port, server_process

pytestmark = pytest.mark.slow  # starts `parley` processes: `pytest -m "not slow"` leaves them out

FINAL = "47 * 12 = 564 [1]"
PLAN_PROSE = "Sure! I would first look things up, then answer."
HOLD_S = 90.0  # the longest a held final decision waits for the test (the brain waits 120 s: CONFIG)
READY_S = 30.0
CONFIG = """\
limits: {{retry_backoff_base_s: 0.01, retry_backoff_max_s: 0.05, llm_max_retries: 1, run_timeout_s: 300}}
brain: {{timeout_s: 120}}
tools:
{tools}{review}"""
CALCULATOR = "  - builtin: calculator\n"
ANSWERED = "✅ solved"
STOPPED = "Parley stopped (a crash or restart)"


class Calculations:
    """The fake LLM of every run, answering from each request alone (runs interleave): a calculator call, then
    the cited final. `hold(phrase)` keeps the final decision of the questions containing `phrase` until the
    test lets them go; `finals` counts the final decisions served per question (a run answered twice shows)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holds: dict[str, tuple[threading.Event, threading.Event]] = {}
        self.finals: dict[str, int] = {}
        self.decision_s = 0.0  # how long each decision takes, as a real model's would

    def hold(self, phrase: str) -> tuple[threading.Event, threading.Event]:
        """(set when a run of `phrase` reached its final decision, set it to let that decision through)"""
        events = (threading.Event(), threading.Event())
        with self._lock:
            self._holds[phrase] = events
        return events

    def release_all(self) -> None:
        with self._lock:
            for _, release in self._holds.values():
                release.set()

    def __call__(self, body: Any) -> FakeReply:
        if classify(body) is not RequestKind.DECIDE:
            return completion_with_content(PLAN_PROSE)
        if not any(message.get("role") == "tool" for message in body.get("messages", [])):
            call = (f"call_{time.monotonic_ns()}", "calculator", {"expression": "47 * 12"})
            return completion_with_tool_calls([call]).after(self.decision_s)
        question = question_of(body)
        with self._lock:
            held = [events for phrase, events in self._holds.items() if phrase in question]
        for arrived, release in held:
            arrived.set()
            release.wait(HOLD_S)
        with self._lock:
            self.finals[question] = self.finals.get(question, 0) + 1
        return completion_with_content(FINAL).after(self.decision_s)


@dataclass
class Replica:
    """One `parley serve` process."""

    url: str
    process: Any
    stderr: Path

    async def health(self) -> dict[str, str]:
        async with httpx.AsyncClient(trust_env=False, timeout=5) as http:
            return dict((await http.get(f"{self.url}/healthz")).json())

    async def ask(self, question: str) -> str:
        """Mention Parley in a new thread through this replica; the thread's ts."""
        body = app_mention(question)
        response = await post_event_async(f"{self.url}/slack/events", body, SIGNING_SECRET)
        assert response.status_code == 200, response.text
        return str(body["event"]["ts"])


def write_config(home: Path, review: str, tools: str = CALCULATOR) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    config = home / "parley.yaml"
    config.write_text(CONFIG.format(review=review, tools=tools), encoding="utf-8")
    return config


@contextlib.asynccontextmanager
async def replica(
    home: Path,
    database_url: str,
    slack: FakeSlackApi,
    llm: FakeLLMServer,
    *,
    workers: int,
    review: str = "",
    tools: str = CALCULATOR,
    env: dict[str, str] | None = None,
) -> AsyncIterator[Replica]:
    """`parley serve` on its own port and home, healthy; killed on the way out if the test left it running."""
    config = write_config(home, review, tools)
    port = free_port()
    env = {**serve_environment(home, database_url, slack, llm, workers=workers), **(env or {})}
    command = [str(PARLEY), "serve", "--port", str(port), "--host", "127.0.0.1", "--config", str(config)]
    stderr = home / "stderr.txt"
    with server_process(command, env=env, cwd=home, stderr=stderr) as process:
        served = Replica(f"http://127.0.0.1:{port}", process, stderr)
        await until(lambda: _healthy(served), READY_S, f"{home.name} to answer /healthz", served)
        yield served


async def _healthy(served: Replica) -> bool:
    if served.process.poll() is not None:
        raise AssertionError(f"parley serve exited with {served.process.returncode}:\n{served.stderr.read_text()}")
    try:
        return (await served.health()).get("database") == "ok"
    except httpx.TransportError:
        return False


async def until(check: Callable[[], Any], timeout_s: float, what: str, *replicas: Replica) -> Any:
    """Poll `check()` (sync or async) until truthy; fail naming `what`, with the replicas' logs, at the deadline."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            logs = "\n".join(f"--- {r.url}\n{r.stderr.read_text()[-4000:]}" for r in replicas)
            raise AssertionError(f"not within {timeout_s:g} s: {what}\n{logs}")
        await asyncio.sleep(0.05)


def bot_messages(slack: FakeSlackApi, thread: str) -> list[Message]:
    return slack.messages_in(CHANNEL, thread)


def queued(slack: FakeSlackApi, thread: str) -> bool:
    messages = bot_messages(slack, thread)
    return bool(messages) and shown(messages[0]).startswith("🕒")


def ended(slack: FakeSlackApi, thread: str) -> bool:
    """The thread shows a final message (no placeholder, no progress)."""
    messages = bot_messages(slack, thread)
    return bool(messages) and all(not shown(m).startswith(("⏳", "🕒")) for m in messages)


async def run_of(db: Database, thread: str) -> Run:
    async with db.sessions() as session:
        [run] = (await session.scalars(select(Run).where(Run.thread_ts == thread))).all()
    return run


async def recovered(db: Database) -> list[AuditEvent]:
    async with db.sessions() as session:
        return list((await session.scalars(select(AuditEvent).where(AuditEvent.action == "run_recovered"))).all())


@pytest.fixture
def calculations(llm_server: FakeLLMServer) -> Iterator[Calculations]:
    script = Calculations()
    llm_server.respond_with(script)
    try:
        yield script
    finally:
        script.release_all()  # a held request of a killed replica must not keep the fake's thread


@pytest.fixture
async def store(serve_db: str) -> AsyncIterator[Database]:
    """The replicas' database, read directly (never through the proxy a test cuts)."""
    db = connect(serve_db)
    try:
        yield db
    finally:
        await db.aclose()


@pytest.mark.timeout(180)  # the shipped 20 s hold runs out first, then the 90 s budget
async def test_replicas_a_killed_replicas_runs_are_answered_by_the_survivor_once(
    tmp_path: Path,
    serve_db: str,
    store: Database,
    slack_api: FakeSlackApi,
    llm_server: FakeLLMServer,
    calculations: Calculations,
) -> None:
    """kill -9 with two runs between their steps (at their final decision) and three waiting; the shipped heartbeat
    settings (5 s, 20 s). The survivor resumes the two from their last step and answers the three."""
    questions = [f"What is 47 times 12? (thread {n})" for n in range(5)]
    gates = [calculations.hold(question) for question in questions]
    async with (
        replica(tmp_path / "a", serve_db, slack_api, llm_server, workers=2) as doomed,
        replica(tmp_path / "b", serve_db, slack_api, llm_server, workers=2) as survivor,
    ):
        threads = [await doomed.ask(question) for question in questions]
        await until(lambda: gates[0][0].is_set() and gates[1][0].is_set(), 30, "two runs at their final", doomed)
        await until(lambda: all(queued(slack_api, t) for t in threads[2:]), 30, "three runs queued behind", doomed)
        doomed.process.kill()  # kill -9: no goodbye, no end written, its hold simply stops being renewed
        doomed.process.wait()
        killed_at = time.monotonic()
        calculations.release_all()

        await until(lambda: all(ended(slack_api, t) for t in threads), 90, "every thread ended", survivor)
        took_s = time.monotonic() - killed_at
        health = await survivor.health()

    assert took_s < 90
    for thread, question in zip(threads[:2], questions[:2], strict=True):  # running: resumed after step 1
        [message] = bot_messages(slack_api, thread)
        assert "564 [1]" in shown(message) and ANSWERED in shown(message) and STOPPED not in shown(message)
        run = await run_of(store, thread)
        assert (run.status, run.termination_reason, run.resumes, run.steps) == ("solved", "answered", 1, 2)
        assert calculations.finals[question] == 2  # the dead replica's final decision, and the survivor's
    for thread, question in zip(threads[2:], questions[2:], strict=True):  # waiting: answered by the survivor
        [message] = bot_messages(slack_api, thread)
        assert "564 [1]" in shown(message) and ANSWERED in shown(message)
        run = await run_of(store, thread)
        assert (run.status, run.termination_reason, run.trace_complete) == ("solved", "answered", True)
        assert calculations.finals[question] == 1  # answered once
    outcomes = sorted(str(event.detail["outcome"]) for event in await recovered(store))
    assert outcomes == ["resumed", "resumed", "taken_over", "taken_over", "taken_over"]
    assert health["pending_ends"] == "0"


OUTAGE_REVIEW = "ownership: {heartbeat_s: 0.5, stale_after_s: 2}\njobs: {interval_s: 1}\n"  # stale after 2 s


@dataclass
class Outage:
    """Two replicas on one database behind a proxy, and two threads told while the database was cut."""

    proxy: TcpProxy
    busy: Replica  # took both questions
    other: Replica
    finished: str  # the thread of the run that finished while the database was away: answered
    unstarted: str  # the thread of the question queued behind it, which could not start: told so

    async def statuses(self, store: Database) -> list[str]:
        return [(await run_of(store, thread)).status for thread in (self.finished, self.unstarted)]


@contextlib.asynccontextmanager
async def told_in_an_outage(
    tmp_path: Path, serve_db: str, slack: FakeSlackApi, llm: FakeLLMServer, calculations: Calculations, label: str
) -> AsyncIterator[Outage]:
    """The first question reaches its final decision, the second waits behind it (one worker), the database
    is cut for both replicas; then the first is answered and the second told it cannot start. Yields with the
    database still cut and both ends kept by the busy replica."""
    finishing = f"What is 47 times 12? ({label}: finishes in the outage)"
    arrived, release = calculations.hold(finishing)
    async with TcpProxy(PG_PORT) as proxy:
        through_proxy = serve_db.replace(f":{PG_PORT}/", f":{proxy.port}/")
        async with (
            replica(tmp_path / "a", through_proxy, slack, llm, workers=1, review=OUTAGE_REVIEW) as busy,
            replica(tmp_path / "b", through_proxy, slack, llm, workers=1, review=OUTAGE_REVIEW) as other,
        ):
            finished = await busy.ask(finishing)
            await until(arrived.is_set, 30, "the first run at its final decision", busy)
            unstarted = await busy.ask(f"What is 47 times 12? ({label}: cannot start)")
            await until(lambda: queued(slack, unstarted), 30, "the second question queued", busy)
            await proxy.close()  # the database is gone for everyone
            release.set()
            await until(lambda: ended(slack, finished) and ended(slack, unstarted), 30, "both told", busy)
            assert (await busy.health())["pending_ends"] == "2"  # its two ends, kept
            yield Outage(proxy, busy, other, finished, unstarted)


def assert_told_once(slack: FakeSlackApi, outage: Outage) -> None:
    """One message per thread: the answer, and the database's outage named as the cause."""
    [answer] = bot_messages(slack, outage.finished)
    assert "564 [1]" in shown(answer) and ANSWERED in shown(answer)
    [told] = bot_messages(slack, outage.unstarted)
    assert "database is unavailable" in shown(told) and STOPPED not in shown(told)


@pytest.mark.timeout(120)
async def test_replicas_a_database_cut_for_10_s_contradicts_no_answer_and_tells_a_question_once(
    tmp_path: Path,
    serve_db: str,
    store: Database,
    slack_api: FakeSlackApi,
    llm_server: FakeLLMServer,
    calculations: Calculations,
) -> None:
    """The database cut under two replicas for 10 s, five times their staleness threshold: once it is back,
    the busy replica writes the two ends it kept, and nobody takes anybody for dead."""
    async with told_in_an_outage(tmp_path, serve_db, slack_api, llm_server, calculations, "cut") as outage:
        cut_at = time.monotonic()
        during = await outage.busy.health()
        await asyncio.sleep(max(0.0, 10 - (time.monotonic() - cut_at)))
        await outage.proxy.restore()

        async def settled() -> bool:
            return await outage.statuses(store) == ["solved", "degraded"]

        await until(settled, 30, "the kept ends written", outage.busy, outage.other)
        # Long enough for either replica to have taken the other for dead and said so (2 s stale, 0.5 s beats).
        await asyncio.sleep(5)
        after = await outage.busy.health()

    assert during["database"].startswith("unreachable") and after["pending_ends"] == "0"
    assert_told_once(slack_api, outage)
    run = await run_of(store, outage.finished)
    assert (run.status, run.termination_reason, run.answer, run.trace_complete) == ("solved", "answered", FINAL, False)
    run = await run_of(store, outage.unstarted)
    assert (run.status, run.termination_reason) == ("degraded", "cancelled")
    assert run.answer == NOT_STARTED_DATABASE_UNAVAILABLE
    assert await recovered(store) == []
    assert list(calculations.finals.values()) == [1]


@pytest.mark.timeout(120)
async def test_replicas_what_a_replica_told_before_it_died_in_an_outage_is_what_the_store_records(
    tmp_path: Path,
    serve_db: str,
    store: Database,
    slack_api: FakeSlackApi,
    llm_server: FakeLLMServer,
    calculations: Calculations,
) -> None:
    """As above, but the busy replica is killed before the database is back: the ends it kept die with it.
    Once the database is back, the other replica reads the threads back (their message metadata) and records
    what they show; it posts nothing."""
    async with told_in_an_outage(tmp_path, serve_db, slack_api, llm_server, calculations, "killed") as outage:
        outage.busy.process.kill()
        outage.busy.process.wait()
        await outage.proxy.restore()

        async def recorded() -> bool:
            return await outage.statuses(store) == ["solved", "degraded"]

        await until(recorded, 30, "the survivor recording what the threads show", outage.other)

    assert_told_once(slack_api, outage)
    run = await run_of(store, outage.finished)
    assert (run.status, run.termination_reason, run.trace_complete) == ("solved", "answered", False)
    assert run.answer is not None and "564 [1]" in run.answer
    run = await run_of(store, outage.unstarted)
    assert (run.status, run.termination_reason, run.trace_complete) == ("degraded", "cancelled", False)
    assert sorted(str(event.detail["outcome"]) for event in await recovered(store)) == ["as_shown", "as_shown"]
    assert list(calculations.finals.values()) == [1]
    reads = slack_api.calls("conversations.replies")  # Slack returns metadata only when asked for it
    assert reads and all(str(call.params.get("include_all_metadata")).lower() in ("true", "1") for call in reads)


@pytest.mark.timeout(300)
async def test_replicas_a_backlog_far_past_the_staleness_threshold_is_answered_whole(
    tmp_path: Path,
    serve_db: str,
    store: Database,
    slack_api: FakeSlackApi,
    llm_server: FakeLLMServer,
    calculations: Calculations,
) -> None:
    """50 questions on one worker, the staleness threshold at 2 s: most wait many times that, alive. An idle
    second replica recovers whatever it takes for left behind: nothing."""
    review = "ownership: {heartbeat_s: 0.5, stale_after_s: 2}\njobs: {interval_s: 1}\n"
    calculations.decision_s = 0.1  # a run takes 0.2 s at least: the last of 50 waits 10 s at least
    async with (
        replica(tmp_path / "a", serve_db, slack_api, llm_server, workers=1, review=review) as one_worker,
        replica(tmp_path / "b", serve_db, slack_api, llm_server, workers=1, review=review) as idle,
    ):
        threads = await asyncio.gather(*(one_worker.ask(f"What is 47 times 12? (number {n})") for n in range(50)))
        await until(lambda: all(ended(slack_api, t) for t in threads), 240, "all 50 answered", one_worker, idle)

    waited_s = []
    for thread in threads:
        [message] = bot_messages(slack_api, thread)
        assert "564 [1]" in shown(message) and ANSWERED in shown(message), shown(message)
        run = await run_of(store, thread)
        assert run.status == "solved" and run.started_at is not None
        waited_s.append((run.started_at - run.created_at).total_seconds())
    assert max(waited_s) > 4  # the backlog outlasted the staleness threshold twice over
    assert await recovered(store) == []
    assert sorted(calculations.finals.values()) == [1] * 50
