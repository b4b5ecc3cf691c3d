"""The property tests' settings: the same examples in every CI run, more when a developer asks for a soak."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings


def checks(examples: int) -> settings:
    """`examples` examples, derandomised so that a red build is reproducible; `PARLEY_HYPOTHESIS_EXAMPLES=N` runs N
    random ones instead (a local soak)."""
    return settings(
        max_examples=int(os.environ.get("PARLEY_HYPOTHESIS_EXAMPLES", examples)),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
        derandomize="PARLEY_HYPOTHESIS_EXAMPLES" not in os.environ,
    )
