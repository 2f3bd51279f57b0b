"""On the headline scenario the waiting share follows the backend's speed: wafer-distilled
(≈1150 tok/s) leaves less of the day waiting than gpu-batched (≈65 tok/s), by more than the paired
95% interval of the difference. Four seeds of the headline population cut to 4 developers × 5
developer-days, each seed run on both backends (common random numbers); the criterion — the
interval's upper end below zero — was fixed before these seeds were run."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from speedtrap.analysis.statistics import paired_differences
from speedtrap.config import Scenario
from speedtrap.models import simulate_summary

HEADLINE = Path(__file__).resolve().parents[2] / "experiments" / "scenarios" / "headline.toml"


def test_faster_backend_waits_less_by_more_than_the_paired_interval() -> None:
    headline = Scenario.from_toml(HEADLINE)
    small = headline.with_overrides({"developers": 4, "horizon_s": 5 * headline.workday_s})
    rows = [
        {"backend": backend, "seed": seed, **simulate_summary(small.with_backend(backend), seed)}
        for backend in ("gpu-batched", "wafer-distilled")
        for seed in (21, 22, 23, 24)
    ]
    paired = paired_differences(
        pd.DataFrame(rows), "backend", "gpu-batched", outcomes=["waiting_share"], by=[]
    )
    wafer = paired.set_index("backend").loc["wafer-distilled"]
    assert wafer["ci_high"] < 0, wafer.to_dict()
