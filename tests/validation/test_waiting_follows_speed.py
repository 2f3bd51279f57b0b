"""On the headline scenario a faster backend leaves less waiting per task done: the same model in
fast mode (gpu-fast, ≈2× the speed of gpu-batched at the same quality) waits fewer developer
seconds per completed task than gpu-batched, by more than the paired 95% interval of the difference.
Four seeds of the headline population cut to 4 developers × 5 developer-days, each seed run on both
backends (common random numbers); the criterion — the interval's upper end below zero — was fixed
before these seeds were run.

(The waiting *share of the day* is not a monotone function of speed once developers leave slow
agents for away episodes: on a slow backend they wait less of the day and spend it away, on other
work, while their tasks take longer — so this test is stated per completed task.)"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from speedtrap.analysis.statistics import paired_differences
from speedtrap.config import Scenario
from speedtrap.models import simulate_summary

HEADLINE = Path(__file__).resolve().parents[2] / "experiments" / "scenarios" / "headline.toml"


@pytest.mark.xfail(
    strict=True,
    reason="measured on the presets of the fitted serving physics (the scenario file's own values): "
    "gpu-batched 1195 s and gpu-fast 1154 s of waiting per completed task (4 seeds; paired difference "
    "-41 s, 95% interval -429 to +348 s): at 2.34× the speed developers watch more of the shorter waits "
    "instead of leaving, and the two nearly cancel",
)
def test_faster_backend_waits_less_per_completed_task_by_more_than_the_paired_interval() -> None:
    headline = Scenario.from_toml(HEADLINE)
    small = headline.with_overrides({"developers": 4, "horizon_s": 5 * headline.workday_s})
    rows = []
    for backend in ("gpu-batched", "gpu-fast"):
        for seed in (21, 22, 23, 24):
            s = simulate_summary(small.with_backend(backend), seed)
            waited_s = s["waiting_share"] * s["developers"] * s["horizon_s"]
            rows.append(
                {"backend": backend, "seed": seed, "wait_per_task_s": waited_s / s["tasks_completed"]}
            )
    paired = paired_differences(
        pd.DataFrame(rows), "backend", "gpu-batched", outcomes=["wait_per_task_s"], by=[]
    )
    fast = paired.set_index("backend").loc["gpu-fast"]
    assert fast["ci_high"] < 0, fast.to_dict()
