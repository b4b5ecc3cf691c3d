"""`parley eval --suite seeds` with its recorded decisions: how long a team waits for the seeds suite (target: under
a minute), measured as a team runs it — the `parley` command in its own process, wall-clock from start to exit,
imports and the store included.

Each run gets a store of its own: a fresh SQLite file (the embedded default), or with `--database URL` the given
PostgreSQL database (migrated first; its eval runs accumulate). `--jobs` is passed to `parley eval`.

    .venv/bin/python bench/eval_seeds.py                     # 3 runs, SQLite, --jobs 4
    .venv/bin/python bench/eval_seeds.py --runs 5 --jobs 1
    .venv/bin/python bench/eval_seeds.py --database postgresql://postgres@127.0.0.1:5432/parley_bench
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def parley(*args: str, database: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}
    env["PARLEY_DATABASE_URL"] = database
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args], env=env, cwd=REPO, capture_output=True, text=True, check=False
    )


def main() -> int:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--runs", type=int, default=3)
    options.add_argument("--jobs", type=int, default=4)
    options.add_argument("--database", help="a PostgreSQL URL (default: a fresh SQLite file per run)")
    args = options.parse_args()
    times = []
    for run in range(1, args.runs + 1):
        with tempfile.TemporaryDirectory() as tmp:
            database = args.database or f"sqlite:///{tmp}/parley.db"
            migrated = parley("db", "upgrade", database=database)
            if migrated.returncode != 0:
                print(migrated.stderr, file=sys.stderr)
                return 1
            started = time.perf_counter()
            done = parley("eval", "--suite", "seeds", "--jobs", str(args.jobs), database=database)
            took = time.perf_counter() - started
        held = done.returncode == 0
        totals = done.stdout.strip().splitlines()[-3:]
        print(f"run {run}: {took:.1f} s, exit {done.returncode}{'' if held else ' (NOT held)'}")
        if not held:
            print(done.stdout[-2000:] + done.stderr[-2000:], file=sys.stderr)
        times.append(took)
    print("\n".join(totals))
    print(f"wall-clock: median {statistics.median(times):.1f} s, max {max(times):.1f} s over {len(times)} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
