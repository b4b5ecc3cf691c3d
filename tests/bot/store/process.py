"""`parley` as a separate process, with an environment of the test's choosing.

No `PARLEY_*` variable leaks in from the test's own environment, HOME and XDG_DATA_HOME point into the
test's directory (so the embedded default database is created there, never in the real home), and
loopback is not sent through a proxy.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
DEMO_A = REPO / "config" / "demos" / "demo_a.yaml"
ZEPHYR = "How much did Zephyr Labs spend on launching satellites?"
TIMEOUT_S = 60
_PROXIES = {"http_proxy", "https_proxy", "all_proxy", "no_proxy"}


def parley_env(home: Path, env: Mapping[str, str] | None = None) -> dict[str, str]:
    environ = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("PARLEY_") and name.lower() not in _PROXIES
    }
    environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), environ.get("PYTHONPATH")]))
    environ.update(PYTHONIOENCODING="utf-8", HOME=str(home), XDG_DATA_HOME=str(home / "data"))
    environ.update(env or {})
    return environ


def embedded_database(home: Path) -> Path:
    """Where the embedded default (platformdirs' user data dir) puts its SQLite file under `parley_env`."""
    return home / "data" / "parley" / "parley.db"


def parley(*args: str, home: Path, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `parley ARGS` to its end in `home`."""
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        cwd=home,
        env=parley_env(home, env),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=TIMEOUT_S,
        check=False,
    )


def start_parley(*args: str, home: Path, env: Mapping[str, str] | None = None) -> subprocess.Popen[bytes]:
    """Start `parley ARGS` in `home`; its output goes to files there (`parley.out`, `parley.err`)."""
    with (home / "parley.out").open("wb") as out, (home / "parley.err").open("wb") as err:
        return subprocess.Popen(
            [sys.executable, "-m", "bot.cli", *args], cwd=home, env=parley_env(home, env), stdout=out, stderr=err
        )


def one_line(stderr: str) -> str:
    """The single line a refused command prints: no traceback, no log noise."""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got:\n{stderr}"
    return lines[0]
