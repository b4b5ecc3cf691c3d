"""ParleyCli: `python -m bot.cli` as a person runs it — its own process, environment and working directory."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
TIMEOUT_S = 60
EXIT_OK = 0
EXIT_USAGE = 2  # configuration and command-line errors, one line on stderr
DEFAULT_USER = "alice"  # the CLI records `cli:<login name>` as the asker
_PROXIES = {"http_proxy", "https_proxy", "all_proxy", "no_proxy"}
# Independent commands of one test run side by side: each process spends most of its second importing.
PARALLEL = 4


@dataclass(frozen=True)
class ParleyCli:
    """Runs `parley` in `cwd` against `database_url`, with no other `PARLEY_*` variable from this process."""

    cwd: Path
    database_url: str

    def environment(self, user: str = DEFAULT_USER, **more: str) -> dict[str, str]:
        environ = {
            name: value
            for name, value in os.environ.items()
            if not name.startswith("PARLEY_") and name.lower() not in _PROXIES
        }
        environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), environ.get("PYTHONPATH")]))
        environ["PYTHONIOENCODING"] = "utf-8"
        environ["LOGNAME"] = environ["USER"] = user  # what getpass.getuser() reads first
        environ["PARLEY_DATABASE_URL"] = self.database_url
        environ.update(more)
        return environ

    def __call__(self, *args: str, user: str = DEFAULT_USER) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "bot.cli", *args],
            cwd=self.cwd,
            env=self.environment(user),
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=TIMEOUT_S,
            check=False,
        )

    def many(self, *commands: Sequence[str]) -> list[subprocess.CompletedProcess[str]]:
        """Independent read-only commands, run concurrently; results in the order given."""
        with ThreadPoolExecutor(PARALLEL) as pool:
            return list(pool.map(lambda command: self(*command), commands))

    def start(self, *args: str) -> subprocess.Popen[bytes]:
        """A process whose output the test reads itself (e.g. stops reading, like `| head -1`)."""
        return subprocess.Popen(
            [sys.executable, "-m", "bot.cli", *args],
            cwd=self.cwd,
            env=self.environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def write(self, name: str, text: str) -> Path:
        path = self.cwd / name
        path.write_text(text, encoding="utf-8")
        return path


def ok(result: subprocess.CompletedProcess[str]) -> str:
    """stdout of a command that must have succeeded (the failure shows its stderr)."""
    assert result.returncode == EXIT_OK, f"exit {result.returncode}; stderr:\n{result.stderr}"
    return result.stdout


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    """The single line a refused command prints on stderr: exit 2, no traceback, nothing on stdout."""
    assert result.returncode == EXIT_USAGE, f"exit {result.returncode}; stderr:\n{result.stderr}"
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got:\n{result.stderr}"
    assert lines[0].startswith("parley: "), lines[0]
    assert result.stdout == ""
    return lines[0]
