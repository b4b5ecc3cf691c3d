"""Diagnosis only: loaded into `parley serve` by `bench/slack_ack.py --gc MODE` (through PYTHONPATH).

PARLEY_BENCH_GC=watch  logs every garbage-collection pass of generation 2, and any pass over 5 ms, to stderr
                       (the bench counts them from the log);
PARLEY_BENCH_GC=off    disables the cyclic collector (as a control: what the acks cost without it);
PARLEY_BENCH_GC=freeze watches, and calls gc.freeze() PARLEY_BENCH_GC_FREEZE_AFTER_S seconds after the
                       interpreter started (by then the server is up: what a gc.freeze() after start-up in
                       `parley serve` would do).
"""

import gc
import os
import sys
import threading
import time

_mode = os.environ.get("PARLEY_BENCH_GC", "")
_started_at = time.monotonic()
_pass_began = [0.0]


def _watch(phase: str, info: dict) -> None:
    if phase == "start":
        _pass_began[0] = time.perf_counter()
        return
    took_ms = (time.perf_counter() - _pass_began[0]) * 1000
    if took_ms > 5 or info["generation"] == 2:
        sys.stderr.write(
            f"parley: WARNING gcdiag: gen{info['generation']} {took_ms:.1f} ms at "
            f"+{time.monotonic() - _started_at:.2f}s, collected {info['collected']}\n"
        )


def _freeze() -> None:
    gc.collect()
    gc.freeze()
    sys.stderr.write(
        f"parley: WARNING gcdiag: froze {gc.get_freeze_count()} objects at +{time.monotonic() - _started_at:.2f}s\n"
    )


if _mode in ("watch", "freeze"):
    gc.callbacks.append(_watch)
if _mode == "off":
    gc.disable()
if _mode == "freeze":
    timer = threading.Timer(float(os.environ.get("PARLEY_BENCH_GC_FREEZE_AFTER_S", "2")), _freeze)
    timer.daemon = True
    timer.start()
