"""Model functions for the fault tests, importable by name in worker processes and driver scripts
(``tests/experiments`` is on the path of both)."""

from __future__ import annotations

import os
import time

from speedtrap.config.scenario import Scenario
from speedtrap.models.workflow import simulate_summary

RUN_S = "SPEEDTRAP_TEST_RUN_S"
"""Environment variable: seconds each run of :func:`sleepy_summary` waits before it runs (default 0)."""
DONE_LOG = "SPEEDTRAP_TEST_DONE_LOG"
"""Environment variable: a file to which :func:`sleepy_summary` appends a line as each run finishes."""

calls: list[int] = []
"""Seeds :func:`counted_summary` was called with in this process."""


def sleepy_summary(scenario: Scenario, seed: int) -> dict[str, float]:
    """:func:`simulate_summary`, after waiting ``$SPEEDTRAP_TEST_RUN_S`` seconds: a run that takes a
    known wall time whatever the machine's load (it sleeps rather than computes); noted in
    ``$SPEEDTRAP_TEST_DONE_LOG`` when it has finished."""
    time.sleep(float(os.environ.get(RUN_S, "0")))
    summary = simulate_summary(scenario, seed)
    if log := os.environ.get(DONE_LOG):
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{seed}\n")
    return summary


def counted_summary(scenario: Scenario, seed: int) -> dict[str, float]:
    """:func:`simulate_summary`, noting each call in :data:`calls` (serial executor only)."""
    calls.append(seed)
    return simulate_summary(scenario, seed)
