"""`parley` as a person runs it: a separate process, its own environment, a working directory of its own.

Each test starts `python -m bot.cli` with an environment that has no `PARLEY_*` variables except those the
test sets, in a temporary directory (so no `config/parley.yaml` is found there and the shipped default is
used, unless the test writes a configuration). The LLM is the real fake HTTP server on loopback. The
user's data directory (where the default SQLite store lives) is the test's own, never the machine's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent import REPLAY_NOTICE, Limits
from bot.cli.demo import DEMO_FILES
from tests.fakes.llm_server import FakeLLMServer, FakeReply, completion_with_content, completion_with_tool_calls

pytestmark = pytest.mark.slow  # starts `parley` processes: `pytest -m "not slow"` leaves them out

REPO = Path(__file__).resolve().parents[2]
DEMOS = REPO / "config" / "demos"
TIMEOUT_S = 60
EXIT_OK = 0
EXIT_USAGE = 2  # configuration, question and command-line errors
SECRET = "sk-test-secret-123"
QUESTION = "What is 47 times 12?"
ANSWER = "47 × 12 = 564 [1]"
ZEPHYR = "How much did Zephyr Labs spend on launching satellites?"
RESULT_FIELDS = {
    "run_id",
    "status",
    "termination_reason",
    "answer",
    "citations",
    "completed",
    "missing",
    "steps",
    "llm_calls",
    "tool_calls",
    "retries",
    "critique_rounds",
    "escalation",
}
# A configuration whose LLM retries are quick, with the shipped tool set.
FAST_RETRIES = """\
limits: {llm_max_retries: 1, retry_backoff_base_s: 0.01, retry_backoff_max_s: 0.02}
tools:
  - builtin: calculator
  - builtin: knowledge_lookup
  - builtin: web_search
    fallbacks: [knowledge_lookup]
  - builtin: get_weather
"""
_DROPPED = ("PARLEY_",)
_PROXIES = {"http_proxy", "https_proxy", "all_proxy", "no_proxy"}  # loopback must not go through a proxy


@dataclass(frozen=True)
class Parley:
    """Runs the command line in `cwd`; `env` adds to a copy of this environment without `PARLEY_*`."""

    cwd: Path

    @property
    def data_dir(self) -> Path:
        return self.cwd / ".data"

    def environment(self, env: Mapping[str, str] | None = None) -> dict[str, str]:
        environ = {
            name: value
            for name, value in os.environ.items()
            if not name.startswith(_DROPPED) and name.lower() not in _PROXIES
        }
        environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), environ.get("PYTHONPATH")]))
        environ["PYTHONIOENCODING"] = "utf-8"
        environ["XDG_DATA_HOME"] = str(self.data_dir)  # the default store goes here, not into $HOME
        environ.update(env or {})
        return environ

    def __call__(self, *args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "bot.cli", *args],
            cwd=self.cwd,
            env=self.environment(env),
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=TIMEOUT_S,
            check=False,
        )

    def write(self, name: str, text: str) -> Path:
        path = self.cwd / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path


@pytest.fixture
def parley(tmp_path: Path) -> Parley:
    return Parley(tmp_path)


def llm_env(server: FakeLLMServer, **more: str) -> dict[str, str]:
    return {"PARLEY_LLM_BASE_URL": server.base_url, "PARLEY_LLM_MODEL": "test", **more}


def one_line(stderr: str) -> str:
    """The single line a failed command prints: no traceback, no log noise."""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got:\n{stderr}"
    return lines[0]


class CalculatorModel:
    """Plays a model that plans (or answers garbage for the plan), calls the calculator, then answers.

    Requests with `tools` are decisions; a completion before the first decision is the planner's, one after
    it the critic's. It routes by the request's shape, never by prompt wording.
    """

    PLAN = json.dumps(
        {
            "items": [
                {"description": "47 × 12 computed by the calculator", "tool": "calculator", "mentions": ["47", "12"]},
                {"description": "The answer states the product", "kind": "answer", "answer_terms": ["564"]},
            ]
        }
    )
    VERDICT = json.dumps({"satisfied": True, "gaps": [], "next_action": "finalize"})

    def __init__(self, plan: str = PLAN) -> None:
        self._plan = plan
        self._lock = threading.Lock()
        self.decisions = 0

    def __call__(self, body: Any) -> FakeReply:
        with self._lock:
            if "tools" not in body:
                return completion_with_content(self._plan if self.decisions == 0 else self.VERDICT)
            self.decisions += 1
        if any(message["role"] == "tool" for message in body["messages"]):
            return completion_with_content(ANSWER)
        return completion_with_tool_calls([("call_1", "calculator", {"expression": "47 * 12"})])


def tool_messages(server: FakeLLMServer) -> list[str]:
    return [m["content"] for body in server.chat_requests for m in body["messages"] if m["role"] == "tool"]


# --- refusals before anything runs ------------------------------------------------------------------------


def test_ask_without_an_llm_names_the_variables_to_set(parley: Parley) -> None:
    done = parley("ask", QUESTION)

    assert done.returncode == EXIT_USAGE
    line = one_line(done.stderr)
    assert "PARLEY_LLM_BASE_URL" in line and "PARLEY_LLM_MODEL" in line
    assert done.stdout == ""


@pytest.mark.parametrize("question", ["", "   ", "\n\t  "], ids=["empty", "spaces", "whitespace"])
def test_ask_refuses_an_empty_question(parley: Parley, llm_server: FakeLLMServer, question: str) -> None:
    done = parley("ask", question, env=llm_env(llm_server))

    assert done.returncode == EXIT_USAGE
    assert "the question is empty" in one_line(done.stderr)
    assert llm_server.requests == []


def test_ask_reports_an_empty_question_before_a_missing_llm(parley: Parley) -> None:
    done = parley("ask", "  ")

    assert done.returncode == EXIT_USAGE
    assert "the question is empty" in one_line(done.stderr)


def test_ask_refuses_a_question_over_the_limit(parley: Parley, llm_server: FakeLLMServer) -> None:
    done = parley("ask", "x" * 100_000, env=llm_env(llm_server))

    assert done.returncode == EXIT_USAGE
    line = one_line(done.stderr)
    assert "limit" in line and str(Limits().max_question_chars) in line
    assert llm_server.requests == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("limits: {max_steps: 6]\n", "line 1"),
        ("limits: {max_steps: 0}\n", "limits.max_steps"),
        ("limits: {max_stepz: 3}\n", "limits.max_stepz"),
        ("- just\n- a list\n", "mapping"),
        (None, "not found"),
    ],
    ids=["invalid-yaml", "max-steps-zero", "unknown-key", "not-a-mapping", "missing"],
)
@pytest.mark.parametrize("how", ["--config", "PARLEY_CONFIG"])
def test_ask_with_a_broken_config_names_the_file_and_the_setting(
    parley: Parley, llm_server: FakeLLMServer, text: str | None, expected: str, how: str
) -> None:
    path = parley.cwd / "team.yaml" if text is None else parley.write("team.yaml", text)
    if how == "--config":
        done = parley("ask", QUESTION, "--config", str(path), env=llm_env(llm_server))
    else:
        done = parley("ask", QUESTION, env=llm_env(llm_server, PARLEY_CONFIG=str(path)))

    assert done.returncode == EXIT_USAGE
    line = one_line(done.stderr)
    assert "team.yaml" in line and expected in line
    assert llm_server.requests == []


FIVE_PROMPTS = "".join(f"    - {{title: Prompt {n}, message: 'What is {n} + {n}?'}}\n" for n in range(5))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "assistant:\n  prompts:\n" + FIVE_PROMPTS,
            "assistant.prompts: Slack shows at most 4 suggested prompts (got 5)",
        ),
        (
            "assistant:\n  prompts:\n    - {title: '  ', message: 'Hi?'}\n",
            "assistant.prompts.0.title: must not be empty",
        ),
        ("assistant: {title: ''}\n", "assistant.title: must not be empty"),
        ("assistant: {prompts: [{title: Hi}]}\n", "assistant.prompts.0.message: Field required"),
    ],
    ids=["five-prompts", "blank-prompt-title", "empty-title", "no-message"],
)
def test_serve_with_broken_assistant_prompts_names_the_setting(parley: Parley, text: str, expected: str) -> None:
    path = parley.write("team.yaml", text)

    done = parley("serve", "--config", str(path))

    assert done.returncode == EXIT_USAGE
    line = one_line(done.stderr)
    assert "team.yaml" in line and expected in line, line


def test_ask_with_an_unknown_builtin_names_the_file(parley: Parley, llm_server: FakeLLMServer) -> None:
    path = parley.write("team.yaml", "tools:\n  - builtin: calculater\n")

    done = parley("ask", QUESTION, "--config", str(path), env=llm_env(llm_server))

    assert done.returncode == EXIT_USAGE
    line = one_line(done.stderr)
    assert "tools[0]" in line and "calculater" in line
    assert "team.yaml" in line


TICKETS_AS_FALLBACK = """\
tools:
  - builtin: get_weather
    fallbacks: [create_ticket]
  - name: create_ticket
    description: Open a support ticket
    http: {method: POST, url: "http://tickets.internal/v1/tickets"}
"""


@pytest.mark.parametrize(
    ("more", "because"),
    [
        ("    acting: true\n", "create_ticket is acting (acting: true)"),
        ("policies:\n  - {tool: create_ticket, requires_approval: true}\n", "a policy holds create_ticket calls"),
    ],
    ids=["acting", "held-by-a-policy"],
)
def test_ask_with_an_unsafe_fallback_names_both_tools(
    parley: Parley, llm_server: FakeLLMServer, more: str, because: str
) -> None:
    path = parley.write("team.yaml", TICKETS_AS_FALLBACK + more)

    done = parley("ask", QUESTION, "--config", str(path), env=llm_env(llm_server))

    assert done.returncode == EXIT_USAGE
    line = one_line(done.stderr)
    assert "team.yaml" in line and because in line
    assert "tools[0]: get_weather cannot fall back to create_ticket" in line
    assert llm_server.requests == []


def test_ask_refuses_an_llm_url_that_is_not_http(parley: Parley) -> None:
    done = parley("ask", QUESTION, env={"PARLEY_LLM_BASE_URL": "ftp://x", "PARLEY_LLM_MODEL": "test"})

    assert done.returncode == EXIT_USAGE
    line = one_line(done.stderr)
    assert "PARLEY_LLM_BASE_URL" in line and "http" in line


@pytest.mark.parametrize("key", ["changeme", "  CHANGEME ", "your-api-key"])
def test_ask_refuses_a_placeholder_api_key(parley: Parley, llm_server: FakeLLMServer, key: str) -> None:
    done = parley("ask", QUESTION, env=llm_env(llm_server, PARLEY_LLM_API_KEY=key))

    assert done.returncode == EXIT_USAGE
    assert "PARLEY_LLM_API_KEY" in one_line(done.stderr)
    assert llm_server.requests == []


# --- one question end to end against the fake LLM ---------------------------------------------------------


@pytest.mark.parametrize(
    ("plan", "planned_by"),
    [(CalculatorModel.PLAN, "(llm)"), ("Sure! Here is my plan: multiply.", "(rules")],
    ids=["llm-plan", "garbage-plan"],
)
def test_ask_json_prints_one_run_result(parley: Parley, llm_server: FakeLLMServer, plan: str, planned_by: str) -> None:
    llm_server.respond_with(CalculatorModel(plan))
    shipped = (REPO / "config" / "parley.yaml").read_text(encoding="utf-8")
    config = parley.write("config/parley.yaml", shipped.replace("planner: auto", "planner: llm", 1))
    assert "planner: llm" in config.read_text(encoding="utf-8")  # one question is no risk: only asked when told

    done = parley("ask", QUESTION, "--json", env=llm_env(llm_server))

    assert done.returncode == EXIT_OK, done.stderr
    result = json.loads(done.stdout)  # the whole of stdout is one JSON document
    assert isinstance(result, dict)
    assert result.keys() >= RESULT_FIELDS
    assert (result["status"], result["termination_reason"]) == ("solved", "answered")
    assert result["answer"] == ANSWER
    assert [(c["marker"], c["tool"], c["arguments"]) for c in result["citations"]] == [
        ("[1]", "calculator", {"expression": "47 * 12"})
    ]
    assert result["citations"][0]["tool_call_id"]
    assert result["escalation"] is None and result["missing"] == []
    assert result["tool_calls"] == 1 and result["steps"] == 2
    assert any("564" in content for content in tool_messages(llm_server))  # the calculator really ran
    assert f"Definition of Done {planned_by}" in done.stderr
    assert any(path.is_file() for path in parley.data_dir.rglob("*"))  # recorded in the default store


def test_ask_prints_the_answer_with_sources_and_progress(parley: Parley, llm_server: FakeLLMServer) -> None:
    llm_server.respond_with(CalculatorModel())

    done = parley("ask", QUESTION, env=llm_env(llm_server))

    assert done.returncode == EXIT_OK, done.stderr
    assert done.stdout.startswith(ANSWER + "\n")
    sources = done.stdout.split("Sources:\n", 1)[1]
    assert sources.lstrip().startswith("[1] calculator")
    assert "step 1:" not in done.stdout  # progress is for stderr; stdout stays pipeable
    progress = done.stderr
    assert progress.index("step 1:") < progress.index("✓ calculator") < progress.index("step 2:")
    assert "■ solved (answered)" in progress


def test_ask_quiet_prints_no_progress(parley: Parley, llm_server: FakeLLMServer) -> None:
    llm_server.respond_with(CalculatorModel())

    done = parley("ask", QUESTION, "--quiet", env=llm_env(llm_server))

    assert done.returncode == EXIT_OK
    assert done.stdout.startswith(ANSWER)
    assert done.stderr == ""


@pytest.mark.parametrize("as_json", [True, False], ids=["json", "text"])
def test_ask_when_the_llm_is_down_answers_degraded_and_escalates(
    parley: Parley, llm_server: FakeLLMServer, as_json: bool
) -> None:
    llm_server.respond_with(lambda body: FakeReply.with_status(503, "model overloaded"))
    config = parley.write("fast.yaml", FAST_RETRIES)

    done = parley("ask", QUESTION, "--config", str(config), *(["--json"] if as_json else []), env=llm_env(llm_server))

    assert done.returncode == EXIT_OK
    assert "Traceback" not in done.stderr
    assert len(llm_server.requests) >= 2  # retried, within the configured bound
    if as_json:
        result = json.loads(done.stdout)
        # llm_unavailable is in review.escalate_on by default: recovery ran out, a person looks at it.
        assert (result["status"], result["termination_reason"]) == ("awaiting_review", "llm_unavailable")
        assert result["escalation"]["kind"] == "exhausted"
        assert result["missing"] and result["citations"] == []
    else:
        assert done.stdout.startswith("⚠ PARTIAL ANSWER (awaiting review: llm_unavailable)")
        assert "A reviewer will look at this run" in done.stdout


@pytest.mark.parametrize("status", [401, 403, 500])
def test_ask_never_prints_the_api_key(parley: Parley, llm_server: FakeLLMServer, status: int) -> None:
    # Real providers echo (part of) the key in their error bodies; this one echoes all of it.
    llm_server.respond_with(lambda body: FakeReply.with_status(status, f"Incorrect API key provided: {SECRET}"))
    config = parley.write("fast.yaml", FAST_RETRIES)
    env = llm_env(llm_server, PARLEY_LLM_API_KEY=SECRET)

    for extra in (["--json"], []):
        done = parley("ask", QUESTION, "--config", str(config), *extra, env=env)

        assert done.returncode == EXIT_OK
        assert SECRET not in done.stdout and SECRET not in done.stderr
        assert "llm_unavailable" in done.stdout
    assert {request.headers["authorization"] for request in llm_server.requests} == {f"Bearer {SECRET}"}


# --- replay and the demos ---------------------------------------------------------------------------------


def test_ask_replay_solves_demo_a_without_an_llm(parley: Parley) -> None:
    shutil.copytree(DEMOS, parley.cwd / "config" / "demos")  # the relative path a user types from a checkout

    done = parley("ask", "--replay", "config/demos/demo_a.yaml", ZEPHYR, "--json")

    assert done.returncode == EXIT_OK, done.stderr
    result = json.loads(done.stdout)
    assert (result["status"], result["termination_reason"]) == ("solved", "answered")
    assert result["replayed"] is True
    assert "564 million USD" in result["answer"]
    assert {c["tool"] for c in result["citations"]} == {"knowledge_lookup", "calculator"}
    assert REPLAY_NOTICE in done.stderr


def test_ask_replay_of_another_question_is_not_solved(parley: Parley) -> None:
    done = parley("ask", "--replay", str(DEMOS / "demo_a.yaml"), "What is the weather in Paris?", "--json")

    assert done.returncode == EXIT_USAGE or json.loads(done.stdout)["status"] != "solved"


@pytest.mark.parametrize("text", ["decisions: [\n", "limits: {max_steps: 0}\n"], ids=["invalid-yaml", "no-decisions"])
def test_ask_replay_of_a_broken_script_says_so_in_one_line(parley: Parley, text: str) -> None:
    path = parley.write("script.yaml", text)

    done = parley("ask", "--replay", str(path), ZEPHYR)

    assert done.returncode == EXIT_USAGE
    assert "script.yaml" in one_line(done.stderr)


def test_ask_replay_of_a_missing_script_names_it(parley: Parley) -> None:
    done = parley("ask", "--replay", "nowhere.yaml", ZEPHYR)

    assert done.returncode == EXIT_USAGE
    assert "nowhere.yaml" in one_line(done.stderr)


def test_demo_replays_the_seeds_demos(parley: Parley) -> None:
    titles = [yaml.safe_load((DEMOS / name).read_text(encoding="utf-8"))["title"] for name in DEMO_FILES]

    done = parley("demo")

    assert done.returncode == EXIT_OK, done.stderr
    out = done.stdout
    assert len(titles) == 4 and all(f"=== {title}" in out for title in titles)
    assert out.count("solved (answered)") == 3
    # Seed 003's 8B model answered a bare "564 million USD": Parley cited the calculator's result, which rests on
    # the two lookups its call used.
    assert "564 million USD [3]" in out
    assert out.count("degraded (gave_up)") == 1
    assert REPLAY_NOTICE in out
    assert "Traceback" not in out + done.stderr


def test_one_replayed_script_ends_the_same_way_through_ask_and_demo(parley: Parley) -> None:
    """What goes to people is the engine's decision: `parley ask --replay` and `parley demo` store one outcome."""
    shipped = (REPO / "config" / "parley.yaml").read_text(encoding="utf-8")
    parley.write("config/parley.yaml", shipped + "\nreview:\n  escalate_on: [gave_up]\n")
    shutil.copytree(DEMOS, parley.cwd / "config" / "demos")
    question = yaml.safe_load((DEMOS / "demo_b.yaml").read_text(encoding="utf-8"))["question"]

    asked = parley("ask", "--replay", "config/demos/demo_b.yaml", question, "--json")
    demo = parley("demo")
    listed = parley("runs", "list", "--json")

    assert asked.returncode == demo.returncode == listed.returncode == EXIT_OK, asked.stderr + demo.stderr
    result = json.loads(asked.stdout)
    assert (result["status"], result["outcome"]) == ("awaiting_review", "escalated")
    assert result["escalation"]["kind"] == "exhausted" and result["escalation"]["reason"] == "gave_up"
    both = [run for run in json.loads(listed.stdout)["runs"] if run["question"] == question]
    assert [(run["status"], run["termination_reason"]) for run in both] == [("awaiting_review", "gave_up")] * 2
    assert "⚠ PARTIAL ANSWER (awaiting review: gave_up)" in demo.stdout  # the terminal says it the same way
    review = parley("review", "list")
    assert review.returncode == EXIT_OK and review.stdout.count("gave_up") == 2, review.stdout


# --- help -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [["--help"], ["ask", "--help"], ["demo", "--help"]], ids=" ".join)
def test_help_exits_zero(parley: Parley, args: list[str]) -> None:
    done = parley(*args)

    assert done.returncode == EXIT_OK
    assert done.stdout.startswith("usage: parley")


def test_no_command_prints_usage(parley: Parley) -> None:
    done = parley()

    assert done.returncode == EXIT_USAGE
    assert "usage: parley" in done.stderr
