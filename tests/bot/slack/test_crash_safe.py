"""Crash-safe runs with real `parley serve` replicas: kill -9 in the middle of a tool call, and a run that kills
its process every time it is resumed.

The tools are a team's HTTP API on 127.0.0.1 (`FakeHttpApi`), which counts what it was asked to do: a call in
flight when its replica died is made again only when its tool is declared idempotent. The LLM is the fake one;
Slack, the fake Web API; PostgreSQL, real.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.store import Database
from tests.bot.slack.harness import question_of
from tests.bot.slack.seen import shown
from tests.bot.slack.test_replicas import (
    ANSWERED,
    STOPPED,
    Calculations,
    Replica,
    bot_messages,
    ended,
    recovered,
    replica,
    run_of,
    store,  # noqa: F401  (a fixture)
    until,
)
from tests.bot.slack.test_serve_process import environment, parley
from tests.bot.store.postgres import PG_PORT
from tests.fakes.http_api import ApiReply, FakeHttpApi
from tests.fakes.llm_server import FakeLLMServer, FakeReply, completion_with_content, completion_with_tool_calls
from tests.fakes.scripted_llm import RequestKind, classify
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.tcp_proxy import TcpProxy
from tests.serving import terminate

pytestmark = pytest.mark.slow

FAST = "ownership: {heartbeat_s: 0.5, stale_after_s: 2}\njobs: {interval_s: 1}\n"  # a dead replica is seen in ~2 s
IN_FLIGHT_S = 120.0  # how long a call the test kills its replica during would take
RATE = {"pair": "EURUSD", "rate": 1.0825}
RATE_ANSWER = "EUR/USD is at 1.0825 [1]."
TOOLS = """\
  - name: get_rate
    description: The exchange rate of a currency pair
    parameters: {{type: object, properties: {{pair: {{type: string}}}}, required: [pair]}}
    idempotent: true
    http: {{method: GET, url: "{base}/rate", timeout_s: 150}}
  - name: book_table
    description: Book a table at the restaurant for a number of guests
    parameters: {{type: object, properties: {{guests: {{type: integer}}}}, required: [guests]}}
    acting: true
    http: {{method: POST, url: "{base}/book", timeout_s: 150}}
"""


class Calls:
    """The fake LLM: a question about the rate calls get_rate, one about a table calls book_table; once a tool
    answered, the final answer (the rate, cited). Counts the decisions made per question."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.decisions: dict[str, int] = {}

    def __call__(self, body: Any) -> FakeReply:
        if classify(body) is not RequestKind.DECIDE:
            return completion_with_content("Sure! I would first look things up, then answer.")
        question = question_of(body)
        with self._lock:
            self.decisions[question] = self.decisions.get(question, 0) + 1
        if any(message.get("role") == "tool" for message in body.get("messages", [])):
            return completion_with_content(RATE_ANSWER)
        if "table" in question:
            return completion_with_tool_calls([(f"call_{time.monotonic_ns()}", "book_table", {"guests": 4})])
        return completion_with_tool_calls([(f"call_{time.monotonic_ns()}", "get_rate", {"pair": "EURUSD"})])


@pytest.fixture
def api() -> Iterator[FakeHttpApi]:
    with FakeHttpApi() as fake:
        yield fake


@pytest.fixture
def calls(llm_server: FakeLLMServer) -> Calls:
    script = Calls()
    llm_server.respond_with(script)
    return script


def asked(api: FakeHttpApi, path: str) -> int:
    return sum(1 for request in api.requests if request.path == path)


def kill(doomed: Replica) -> None:
    doomed.process.kill()  # kill -9: no goodbye, nothing written
    doomed.process.wait()


async def holder_of(store_db: Database, thread: str, replicas: list[Replica]) -> Replica:
    """The replica whose process holds the run of `thread` now (its owner id names its pid)."""
    run = await run_of(store_db, thread)
    assert run.owner is not None
    pid = int(run.owner.split(":")[-2])
    [holder] = [r for r in replicas if r.process.pid == pid]
    return holder


@pytest.mark.timeout(180)
async def test_crash_a_call_that_acts_is_not_made_again_and_the_thread_says_its_outcome_is_unknown(
    tmp_path: Path,
    serve_db: str,
    store: Database,  # noqa: F811
    slack_api: FakeSlackApi,
    llm_server: FakeLLMServer,
    calls: Calls,
    api: FakeHttpApi,
) -> None:
    """kill -9 while book_table (acting, POST) is in flight: the survivor resumes the run and never books again."""
    api.route("/book", ApiReply.with_json({"booking": "B-1"}).after(IN_FLIGHT_S))
    tools = TOOLS.format(base=api.base_url)
    async with (
        replica(tmp_path / "a", serve_db, slack_api, llm_server, workers=1, review=FAST, tools=tools) as doomed,
        replica(tmp_path / "b", serve_db, slack_api, llm_server, workers=1, review=FAST, tools=tools) as survivor,
    ):
        thread = await doomed.ask("Book a table for 4 tonight, please.")
        await until(lambda: asked(api, "/book") == 1, 60, "the booking in flight", doomed)
        kill(doomed)
        await until(lambda: ended(slack_api, thread), 60, "the thread told how it ended", survivor)
        health = await survivor.health()
        async with httpx.AsyncClient(trust_env=False, timeout=5) as http:
            metrics = (await http.get(f"{survivor.url}/metrics")).text

    assert asked(api, "/book") == 1  # never made again
    assert (health["resumed"], health["outcome_unknown"]) == ("1", "1")
    assert "parley_runs_resumed_total 1.0" in metrics and "parley_tool_calls_outcome_unknown_total 1.0" in metrics
    [message] = bot_messages(slack_api, thread)
    said = shown(message)
    assert 'book_table {"guests": 4}: whether it took effect is unknown' in said and STOPPED not in said
    run = await run_of(store, thread)
    assert run.resumes == 1 and run.status in ("degraded", "awaiting_review", "solved")
    assert run.answer is not None and "whether it took effect is unknown" in run.answer
    assert [str(event.detail["outcome"]) for event in await recovered(store)] == ["resumed"]
    shown_run = parley("runs", "show", run.id, env=environment(tmp_path, PARLEY_DATABASE_URL=serve_db), cwd=tmp_path)
    assert shown_run.returncode == 0, shown_run.stderr
    assert f"resumed by {run.owner} after step 0" in shown_run.stdout
    assert 'outcome unknown: book_table({"guests": 4}) at step 1' in shown_run.stdout


@pytest.mark.timeout(180)
async def test_crash_an_idempotent_call_in_flight_is_made_once_more_and_the_answer_comes(
    tmp_path: Path,
    serve_db: str,
    store: Database,  # noqa: F811
    slack_api: FakeSlackApi,
    llm_server: FakeLLMServer,
    calls: Calls,
    api: FakeHttpApi,
) -> None:
    """kill -9 while get_rate (idempotent: true) is in flight: made once more by the survivor, and answered."""
    api.route("/rate", ApiReply.with_json(RATE).after(IN_FLIGHT_S), ApiReply.with_json(RATE))
    tools = TOOLS.format(base=api.base_url)
    async with (
        replica(tmp_path / "a", serve_db, slack_api, llm_server, workers=1, review=FAST, tools=tools) as doomed,
        replica(tmp_path / "b", serve_db, slack_api, llm_server, workers=1, review=FAST, tools=tools) as survivor,
    ):
        question = "What is the EUR/USD rate?"
        thread = await doomed.ask(question)
        await until(lambda: asked(api, "/rate") == 1, 60, "the rate call in flight", doomed)
        kill(doomed)
        await until(lambda: ended(slack_api, thread), 60, "the thread answered", survivor)

    assert asked(api, "/rate") == 2  # the call in flight, and once more
    [message] = bot_messages(slack_api, thread)
    assert "1.0825 [1]" in shown(message) and ANSWERED in shown(message)
    run = await run_of(store, thread)
    assert (run.status, run.termination_reason, run.resumes, run.tool_calls) == ("solved", "answered", 1, 1)
    # The dead replica decided to call; the survivor did not decide that again, it went on with the call.
    assert sum(calls.decisions.values()) == 2


@pytest.mark.timeout(300)
async def test_crash_a_run_that_kills_its_replica_every_time_ends_after_two_resumes(
    tmp_path: Path,
    serve_db: str,
    store: Database,  # noqa: F811
    slack_api: FakeSlackApi,
    llm_server: FakeLLMServer,
    calls: Calls,
    api: FakeHttpApi,
) -> None:
    """Each replica that takes the run is killed during its call: after the second resume, the next replica ends
    it honestly instead of running it again."""
    api.route("/rate", ApiReply.with_json(RATE).after(IN_FLIGHT_S))  # every call hangs: every holder is killed
    tools = TOOLS.format(base=api.base_url)

    def start(name: str) -> Any:
        return replica(tmp_path / name, serve_db, slack_api, llm_server, workers=1, review=FAST, tools=tools)

    async with start("a") as first, start("b") as second:
        thread = await first.ask("What is the EUR/USD rate?")
        await until(lambda: asked(api, "/rate") == 1, 60, "the first call in flight", first)
        kill(first)
        await until(lambda: asked(api, "/rate") == 2, 60, "the call made again after the first resume", second)
        async with start("c") as third:
            kill(second)
            await until(lambda: asked(api, "/rate") == 3, 60, "the call made again after the second resume", third)
            async with start("d") as last:
                kill(third)
                await until(lambda: ended(slack_api, thread), 60, "the run ended", last)

    assert asked(api, "/rate") == 3  # never a fourth time
    [message] = bot_messages(slack_api, thread)
    assert STOPPED in shown(message)
    run = await run_of(store, thread)
    assert (run.status, run.termination_reason, run.resumes) == ("degraded", "cancelled", 2)
    outcomes = [str(event.detail["outcome"]) for event in await recovered(store)]
    assert outcomes == ["resumed", "resumed", "ended"]


ROLLING = "ownership: {heartbeat_s: 0.5, stale_after_s: 2, shutdown_grace_s: 1}\njobs: {interval_s: 1}\n"


@pytest.mark.timeout(420)
async def test_crash_a_rolling_restart_with_20_questions_under_way_answers_each_once_and_cancels_none(
    tmp_path: Path,
    serve_db: str,
    store: Database,  # noqa: F811
    slack_api: FakeSlackApi,
    llm_server: FakeLLMServer,
) -> None:
    """SIGTERM A, start A', SIGTERM B, start B', with 20 questions running or queued on A and B (2 workers each,
    a second per decision, a one-second grace): the queued ones are handed over at once, the running ones after
    the grace period; every thread ends with its answer, in one message, and no run is cancelled."""
    calculations = Calculations()
    calculations.decision_s = 1.0
    llm_server.respond_with(calculations)

    def start(name: str) -> Any:
        return replica(tmp_path / name, serve_db, slack_api, llm_server, workers=2, review=ROLLING)

    threads: list[str] = []
    async with start("a") as a, start("b") as b:
        for n in range(20):
            threads.append(await (a if n % 2 == 0 else b).ask(f"What is 47 times 12? (rolling {n})"))
        await until(lambda: all(bot_messages(slack_api, t) for t in threads), 60, "every question announced", a, b)
        terminate(a.process, 60)
        async with start("a2") as a2:
            terminate(b.process, 60)
            async with start("b2") as b2:
                await until(lambda: all(ended(slack_api, t) for t in threads), 240, "all 20 answered", a2, b2)

    for thread in threads:
        [message] = bot_messages(slack_api, thread)
        assert "564 [1]" in shown(message) and ANSWERED in shown(message), shown(message)
        run = await run_of(store, thread)
        assert (run.status, run.termination_reason) == ("solved", "answered")
    outcomes = {str(event.detail["outcome"]) for event in await recovered(store)}
    assert outcomes <= {"taken_over", "resumed"} and outcomes  # handed over, never ended


@pytest.mark.timeout(180)
@pytest.mark.parametrize("offset_s", ["600", "-600"])
async def test_crash_a_replica_whose_clock_is_ten_minutes_off_takes_nobody_for_dead(
    tmp_path: Path,
    serve_db: str,
    store: Database,  # noqa: F811
    slack_api: FakeSlackApi,
    llm_server: FakeLLMServer,
    offset_s: str,
) -> None:
    """Two replicas, one whose clock runs 10 minutes ahead (or behind): runs held at their final decision far
    longer than the staleness threshold are neither ended nor taken over by either; every question is answered
    once, by the replica it was asked on."""
    calculations = Calculations()
    llm_server.respond_with(calculations)
    questions = [f"What is 47 times 12? (skew {n})" for n in range(4)]
    gates = [calculations.hold(question) for question in questions]
    skewed = {"PARLEY_CLOCK_OFFSET_S": offset_s}
    try:
        async with (
            replica(tmp_path / "a", serve_db, slack_api, llm_server, workers=2, review=FAST) as right,
            replica(tmp_path / "b", serve_db, slack_api, llm_server, workers=2, review=FAST, env=skewed) as wrong,
        ):
            threads = [await (right if n % 2 == 0 else wrong).ask(q) for n, q in enumerate(questions)]
            await until(lambda: all(arrived.is_set() for arrived, _ in gates), 60, "all at their final", right, wrong)
            await asyncio.sleep(6)  # three times the staleness threshold, every run under way
            calculations.release_all()
            await until(lambda: all(ended(slack_api, t) for t in threads), 60, "every thread answered", right, wrong)
    finally:
        calculations.release_all()

    for thread, question in zip(threads, questions, strict=True):
        [message] = bot_messages(slack_api, thread)
        assert "564 [1]" in shown(message) and ANSWERED in shown(message)
        run = await run_of(store, thread)
        assert (run.status, run.resumes) == ("solved", 0)
        assert calculations.finals[question] == 1
    assert await recovered(store) == []


@pytest.mark.timeout(240)
async def test_crash_a_replica_cut_off_alone_past_the_staleness_threshold_shows_nothing_and_calls_nothing_again(
    tmp_path: Path,
    serve_db: str,
    store: Database,  # noqa: F811
    slack_api: FakeSlackApi,
    llm_server: FakeLLMServer,
    calls: Calls,
    api: FakeHttpApi,
) -> None:
    """The issue's outage: one replica cut off alone from the database for 12 s (stale after 2 s) while its
    booking is in flight. The other takes the run over and says the booking's outcome is unknown; the cut-off
    replica, whose booking then comes back, fences itself: it posts nothing, books nothing more, and once the
    database is back it defers to what was recorded. One true message in the thread, one booking."""
    api.route("/book", ApiReply.with_json({"booking": "B-1"}).after(6))
    tools = TOOLS.format(base=api.base_url)
    async with TcpProxy(PG_PORT) as proxy:
        through_proxy = serve_db.replace(f":{PG_PORT}/", f":{proxy.port}/")
        async with (
            replica(tmp_path / "a", through_proxy, slack_api, llm_server, workers=1, review=FAST, tools=tools) as cut,
            replica(tmp_path / "b", serve_db, slack_api, llm_server, workers=1, review=FAST, tools=tools) as other,
        ):
            thread = await cut.ask("Book a table for 4 tonight, please.")
            await until(lambda: asked(api, "/book") == 1, 60, "the booking in flight", cut)
            await proxy.close()  # the database is gone for this replica alone
            cut_at = time.monotonic()
            await until(lambda: ended(slack_api, thread), 60, "the other replica telling the thread", cut, other)
            await asyncio.sleep(max(0.0, 12 - (time.monotonic() - cut_at)))  # the booking came back meanwhile
            during = await cut.health()
            await proxy.restore()
            await until(lambda: _settled(cut), 30, "the cut-off replica back on the database", cut)
            await asyncio.sleep(3)  # time enough for anything it kept to be written, or posted
            health = await other.health()

    assert during["database"].startswith("unreachable")
    assert asked(api, "/book") == 1  # never made again, by either
    [message] = bot_messages(slack_api, thread)  # exactly one message: the other replica's
    said = shown(message)
    assert 'book_table {"guests": 4}: whether it took effect is unknown' in said and STOPPED not in said
    assert RATE_ANSWER not in said  # the cut-off replica's answer (from the booking it got back) is never shown
    run = await run_of(store, thread)
    assert run.owner is not None and int(run.owner.split(":")[-2]) == other.process.pid
    assert run.resumes == 1 and run.answer is not None and "whether it took effect is unknown" in run.answer
    assert [str(event.detail["outcome"]) for event in await recovered(store)] == ["resumed"]
    assert (health["resumed"], health["outcome_unknown"]) == ("1", "1")


async def _settled(served: Replica) -> bool:
    health = await served.health()
    return health["database"] == "ok" and health["pending_ends"] == "0"
