"""`parley eval` as a team runs it in CI: its own process, the real engine, the fake LLM on loopback (or recorded
decisions), a real PostgreSQL store; reports read back as JSON, JUnit (with a JUnit reader) and HTML."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from junitparser import Failure, JUnitXml

from bot.core import FeedbackVerdict, RunService
from bot.store import connect
from tests.bot.history.parley_cli import REPO, TIMEOUT_S, ParleyCli
from tests.bot.history.postgres import create_database, drop_database
from tests.bot.store.postgres import emptied
from tests.bot.test_cli import FAST_RETRIES, CalculatorModel
from tests.fakes.llm_server import FakeLLMServer, FakeReply, completion_with_content, completion_with_tool_calls

pytestmark = pytest.mark.slow  # each test starts `parley` processes

EXIT_HELD, EXIT_FAILED, EXIT_BAD_FILE = 0, 1, 2
SEEDS_CASES = 10
CONFIG = (  # the shipped tools, quick LLM retries, and prices for the model the tests name
    FAST_RETRIES + "eval:\n  prices:\n    test: {prompt: 2.0, completion: 8.0}\n"
)
PRODUCT = """\
cases:
  - id: product
    question: "What is 47 times 12?"
    expect:
      outcome: answered
      figures: ["{figure}"]
      tools: [calculator]
      not_tools: [web_search]
      max_steps: 4
"""
ZEPHYR = "How much did Zephyr Labs spend on launching satellites?"
REPLAYED = f"""\
cases:
  - id: zephyr-spend
    question: "{ZEPHYR}"
    expect:
      outcome: answered
      figures: ["564"]
      not_figures: ["574"]
      tools: [knowledge_lookup, calculator]
      max_steps: 6
    replay: {REPO / "config/demos/demo_a.yaml"}
  - id: market-share
    question: "What is Zephyr Labs' current market share?"
    tools:
      - builtin: knowledge_lookup
      - builtin: web_search
        options: {{{{outage: true}}}}
        fallbacks: [knowledge_lookup]
    expect:
      outcome: {{share_outcome}}
    replay: {REPO / "config/demos/demo_b.yaml"}
"""


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    name, url = create_database("parley_eval")
    try:
        done = ParleyCli(REPO, url)("db", "upgrade")
        assert done.returncode == 0, done.stderr
        yield url
    finally:
        drop_database(name)


class Eval(ParleyCli):
    """`parley` in the test's directory, on the test's (emptied) database, with the LLM it is given."""

    llm: str | None = None

    def run(self, *args: str, llm: FakeLLMServer | None = None) -> subprocess.CompletedProcess[str]:
        more = {"PARLEY_LLM_BASE_URL": llm.base_url, "PARLEY_LLM_MODEL": "test"} if llm else {}
        return subprocess.run(
            [sys.executable, "-m", "bot.cli", *args],
            cwd=self.cwd,
            env=self.environment(**more),
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=TIMEOUT_S * 3,
            check=False,
        )


@pytest.fixture
def parley(database: str, tmp_path: Path) -> Eval:
    asyncio.run(_empty(database))
    cli = Eval(tmp_path, database)
    cli.write("parley.yaml", CONFIG)
    return cli


async def _empty(url: str) -> None:
    async with emptied(url):
        pass


def report_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode in (EXIT_HELD, EXIT_FAILED), done.stderr
    return json.loads(done.stdout)


def runs_of(report: dict[str, Any], case: str) -> list[dict[str, Any]]:
    return next(c["runs"] for c in report["cases"] if c["id"] == case)


# --- a file of cases against the model -----------------------------------------------------------------------


def test_eval_a_passing_file_exits_0_and_records_its_runs_apart(parley: Eval, llm_server: FakeLLMServer) -> None:
    llm_server.respond_with(CalculatorModel())
    parley.write("cases.yaml", PRODUCT.format(figure="564"))

    done = parley.run("eval", "cases.yaml", "--config", "parley.yaml", llm=llm_server)

    assert done.returncode == EXIT_HELD, done.stdout + done.stderr
    assert "✔ product" in done.stdout
    for check in ("outcome (answered)", "figure 564 (grounded)", "tool calculator (called)", "not_tool web_search"):
        assert f"✔ {check}" in done.stdout
    assert "fabrications accepted 0" in done.stdout
    run_id = done.stdout.split("· run ")[1].split()[0]
    shown = parley.run("runs", "show", run_id)
    assert shown.returncode == 0 and "47" in shown.stdout  # the run is stored like any other …
    assert "47 times 12" not in parley.run("runs", "list").stdout  # … and kept out of the team's list
    assert run_id[:8] in parley.run("runs", "list", "--source", "eval").stdout


def test_eval_a_failing_case_exits_1_and_says_which_expectation(parley: Eval, llm_server: FakeLLMServer) -> None:
    llm_server.respond_with(CalculatorModel())
    parley.write("cases.yaml", PRODUCT.format(figure="565"))

    done = parley.run("eval", "cases.yaml", "--config", "parley.yaml", "--format", "json", llm=llm_server)

    assert done.returncode == EXIT_FAILED
    report = report_of(done)
    (run,) = runs_of(report, "product")
    failed = [c for c in run["checks"] if not c["ok"]]
    assert [(c["name"], c["seen"]) for c in failed] == [("figure 565", "not in the answer")]
    assert run["outcome"] == "answered" and run["tools"] == ["calculator"]
    assert run["tokens"] > 0 and run["cost_usd"] > 0  # priced from eval.prices of the configuration
    assert report["totals"]["failed"] == 1 and report["totals"]["fabrications_accepted"] == 1


def test_eval_repeat_flags_a_flaky_case(parley: Eval, llm_server: FakeLLMServer) -> None:
    answers = iter(["47 × 12 = 564 [1]", "47 × 12 = 574 [1]"])
    model = CalculatorModel()

    def flaky(body: Any) -> FakeReply:
        reply = model(body)
        if "tools" in body and any(m["role"] == "tool" for m in body["messages"]):
            return completion_with_content(next(answers, "47 × 12 = 574 [1]"))
        return reply

    llm_server.respond_with(flaky)
    parley.write("cases.yaml", PRODUCT.format(figure="564"))

    done = parley.run(
        "eval", "cases.yaml", "--config", "parley.yaml", "--repeat", "2", "--jobs", "1", "--format", "json",
        llm=llm_server,
    )  # fmt: skip

    report = report_of(done)
    runs = runs_of(report, "product")
    assert [run["passed"] for run in runs] == [True, False]
    assert report["totals"]["flaky"] == 1 and report["totals"]["pass_rate"] == 0.0  # pass^2
    assert runs[1]["standing"] == "caught"  # 574 rests on no result: refused, never accepted
    assert report["totals"]["fabrications_accepted"] == 0


# --- replayed decisions, baselines, CI formats ----------------------------------------------------------------


def test_eval_replayed_cases_need_no_llm(parley: Eval) -> None:
    parley.write("cases.yaml", REPLAYED.format(share_outcome="partial"))

    done = parley.run("eval", "cases.yaml", "--config", "parley.yaml", "--format", "json")

    assert done.returncode == EXIT_HELD, done.stderr
    report = report_of(done)
    assert report["model"] == "replay"
    zephyr, share = runs_of(report, "zephyr-spend")[0], runs_of(report, "market-share")[0]
    assert zephyr["replayed"] and zephyr["standing"] == "kept" and zephyr["tokens"] == 0
    assert any(line.startswith("564") for line in zephyr["grounding"])
    assert share["outcome"] == "partial" and share["reason"] == "gave_up"
    assert report["totals"]["kept"] == 1 and report["totals"]["partial_rate"] == 0.5


def test_eval_baseline_shows_the_flip_and_fail_on_regression_exits_1(parley: Eval) -> None:
    parley.write("cases.yaml", REPLAYED.format(share_outcome="partial"))
    blessed = parley.run("eval", "cases.yaml", "--config", "parley.yaml", "--save-baseline", "base.json")
    assert blessed.returncode == EXIT_HELD, blessed.stderr

    same = parley.run("eval", "cases.yaml", "--baseline", "base.json", "--fail-on-regression")
    assert same.returncode == EXIT_HELD, same.stdout
    assert "no case changed" in same.stdout and "nothing regressed" in same.stdout

    parley.write("cases.yaml", REPLAYED.format(share_outcome="answered"))  # the expectation moved: it fails now
    done = parley.run("eval", "cases.yaml", "--baseline", "base.json", "--fail-on-regression")

    assert done.returncode == EXIT_FAILED
    flip = next(line for line in done.stdout.splitlines() if "pass→fail" in line)
    assert "market-share" in flip and "parley runs show" in flip
    assert "regressed: market-share: pass→fail" in done.stdout
    assert "pass_rate: 1 → 0.5" in done.stdout


def test_eval_tolerance_bounds_how_far_the_kept_rate_may_fall(parley: Eval) -> None:
    parley.write("cases.yaml", REPLAYED.format(share_outcome="partial"))
    assert parley.run("eval", "cases.yaml", "--save-baseline", "base.json").returncode == EXIT_HELD
    base = json.loads((parley.cwd / "base.json").read_text(encoding="utf-8"))
    base["totals"]["kept_rate"] = 0.52  # the blessed run kept a little more than this one (0.5)
    (parley.cwd / "base.json").write_text(json.dumps(base), encoding="utf-8")

    within = parley.run("eval", "cases.yaml", "--baseline", "base.json", "--fail-on-regression", "--tolerance", "0.05")
    beyond = parley.run("eval", "cases.yaml", "--baseline", "base.json", "--fail-on-regression", "--tolerance", "0.01")

    assert within.returncode == EXIT_HELD, within.stdout
    assert beyond.returncode == EXIT_FAILED and "kept rate fell from 52.0% to 50.0%" in beyond.stdout


def test_eval_junit_is_read_by_a_junit_reader(parley: Eval) -> None:
    parley.write("cases.yaml", REPLAYED.format(share_outcome="answered"))

    done = parley.run("eval", "cases.yaml", "--format", "junit", "--output", "eval.xml", "--html", "eval.html")

    assert done.returncode == EXIT_FAILED and done.stdout == ""
    suites = JUnitXml.fromfile(str(parley.cwd / "eval.xml"))
    cases = {case.name: case for suite in suites for case in suite}
    assert set(cases) == {"zephyr-spend", "market-share"}
    assert cases["zephyr-spend"].is_passed
    (failure,) = cases["market-share"].result
    assert isinstance(failure, Failure) and "outcome (partial)" in (failure.message or "")
    page = (parley.cwd / "eval.html").read_text(encoding="utf-8")
    assert "<svg" in page and "market-share" in page and "Runs by outcome" in page
    assert "<script" not in page and "src=" not in page and "href=" not in page  # nothing it would have to fetch


def test_eval_markdown_is_a_table(parley: Eval) -> None:
    parley.write("cases.yaml", REPLAYED.format(share_outcome="partial"))

    done = parley.run("eval", "cases.yaml", "--format", "markdown")

    assert done.returncode == EXIT_HELD
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ✔")]
    assert len(rows) == 2 and "zephyr-spend" in rows[0]


# --- a case file that cannot be used -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("cases:\n  - id: a\n    question: q\n    expect: {outcome: answred}\n", "case 'a': expect.outcome:"),
        ("cases:\n  - id: a\n    question: q\n    expect: {figurez: ['1']}\n", "case 'a': expect.figurez:"),
        ("cases:\n  - {id: a, question: q}\n  - {id: b}\n", "case 'b': question:"),
        ("cases:\n  - {id: a, question: q}\n  - {id: a, question: r}\n", "two cases have the id 'a'"),
        ("cases:\n  - {id: a, question: q, replay: nowhere.yaml}\n", "case 'a': replay:"),
        ("cases: [\n", "cannot read the case file"),
    ],
    ids=["outcome", "unknown-key", "no-question", "same-id", "missing-replay", "not-yaml"],
)
def test_eval_a_bad_case_file_exits_2_naming_the_case_and_field(parley: Eval, text: str, named: str) -> None:
    parley.write("cases.yaml", text)

    done = parley.run("eval", "cases.yaml")

    assert done.returncode == EXIT_BAD_FILE
    assert named in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert done.stdout == ""


def test_eval_schema_is_the_published_one(parley: Eval) -> None:
    done = parley.run("eval", "--schema")

    assert done.returncode == EXIT_HELD
    published = (REPO / "config" / "eval" / "cases.schema.json").read_text(encoding="utf-8")
    assert json.loads(done.stdout) == json.loads(published)


# --- the seeds suite ------------------------------------------------------------------------------------------


def test_eval_seeds_suite_replayed_holds_and_stays_out_of_the_reviewers_queue(parley: Eval) -> None:
    done = parley.run("eval", "--suite", "seeds", "--format", "json")

    assert done.returncode == EXIT_HELD, done.stdout[-3000:] + done.stderr
    report = report_of(done)
    totals = report["totals"]
    assert totals["cases"] == SEEDS_CASES and totals["passed"] == SEEDS_CASES
    assert totals["fabrications_accepted"] == 0 and totals["wrong_answers_caught"] >= 2
    (caught,) = runs_of(report, "fabricated-total-caught")
    assert caught["rejected"] == ["grounding"] and caught["standing"] == "kept"
    (looping,) = runs_of(report, "repeat-loop")
    assert looping["outcome"] == "escalated"  # stored as awaiting review …
    waiting = parley.run("review", "list")
    assert waiting.returncode == 0 and looping["run_id"] not in waiting.stdout  # … but shown to no reviewer


def test_eval_seeds_suite_with_a_model_that_fabricates_reports_it_caught(
    parley: Eval, llm_server: FakeLLMServer
) -> None:
    """The team's model makes figures up: whatever it is asked, it answers at once with a total it invented."""

    def fabricator(body: Any) -> FakeReply:
        if "tools" not in body:  # the planner and the critic: it says all is well
            return completion_with_content(json.dumps({"satisfied": True, "gaps": [], "next_action": "finalize"}))
        if not any(m["role"] == "tool" for m in body["messages"]):
            return completion_with_tool_calls([("call_1", "knowledge_lookup", {"key": "satellites_launched"})])
        return completion_with_content("Zephyr Labs spent 574 million USD [1].")

    llm_server.respond_with(fabricator)

    live = ("eval", "--suite", "seeds", "--live", "--config", "parley.yaml", "--format", "json")
    done = parley.run(*live, llm=llm_server)

    assert done.returncode == EXIT_FAILED
    report = report_of(done)
    assert report["model"] == "test"
    assert report["totals"]["fabrications_accepted"] == 0 and report["totals"]["kept"] == 0
    for case in ("demo-a-zephyr-spend", "fabricated-total-caught"):
        (run,) = runs_of(report, case)
        assert run["standing"] == "caught" and "grounding" in run["rejected"]
        assert "574" not in json.dumps(run["grounding"])


# --- from feedback to cases -------------------------------------------------------------------------------


def test_eval_import_feedback_writes_candidates_a_person_must_complete(parley: Eval) -> None:
    asked = parley.run("ask", "--replay", str(REPO / "config/demos/demo_a_8b.yaml"), ZEPHYR, "--json", "--quiet")
    assert asked.returncode == 0, asked.stderr
    run_id = json.loads(asked.stdout)["run_id"]
    asyncio.run(_thumbs_down(parley.database_url, run_id, "the answer should say how many satellites"))

    done = parley.run("eval", "import", "--feedback", "down", "--since", "7d")

    assert done.returncode == EXIT_HELD, done.stderr
    (case,) = yaml.safe_load(done.stdout)["cases"]
    assert case["question"] == ZEPHYR and case["expect"] is None
    assert case["feedback"]["run_id"] == run_id and case["feedback"]["answer"].startswith("564 million USD")
    assert case["feedback"]["notes"] == ["the answer should say how many satellites"]
    called = [r["tool"] for r in case["feedback"]["tool_results"]]
    assert called[:3] == ["knowledge_lookup", "knowledge_lookup", "calculator"]
    assert "47" in case["feedback"]["tool_results"][0]["returned"]
    parley.write("candidates.yaml", done.stdout)
    unfinished = parley.run("eval", "candidates.yaml")
    assert unfinished.returncode == EXIT_BAD_FILE and f"case 'feedback-{run_id[:8]}': expect:" in unfinished.stderr
    assert yaml.safe_load(parley.run("eval", "import", "--feedback", "up").stdout)["cases"] == []


async def _thumbs_down(url: str, run_id: str, comment: str) -> None:
    db = connect(url)
    try:
        service = RunService(db)
        await service.feedback(run_id, "U0ASKER", FeedbackVerdict.DOWN, note=lambda by_asker, text: text or "")
        assert await service.comment(run_id, "U0ASKER", comment)
    finally:
        await db.aclose()
