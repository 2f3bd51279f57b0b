"""The app's latency table (speedtrap.app.latency): each arm's percentiles as run and compare give them."""

from __future__ import annotations

import math
from pathlib import Path

from speedtrap.analysis.latency import run_percentiles
from speedtrap.app.latency import latency_html
from speedtrap.config.scenario import Scenario
from speedtrap.models.latency import request_metrics
from speedtrap.models.workflow import simulate

ROOT = Path(__file__).resolve().parents[2]


def test_latency_table_gives_each_arms_percentiles_and_na_without_requests() -> None:
    base = Scenario.from_toml(ROOT / "experiments" / "scenarios" / "headline.toml").with_overrides(
        {"developers": 2, "horizon_s": 3600.0}
    )
    results = {
        "gpu-fast": simulate(base.with_backend("gpu-fast"), 1),
        "manual": simulate(base.with_backend("manual"), 1),
    }
    html = latency_html(results)
    expected = run_percentiles(request_metrics(results["gpu-fast"].requests))
    assert f"{expected['ttft_p50_s']:.3g} s" in html and f"{expected['e2e_p99_s']:.3g} s" in html
    assert math.isfinite(expected["ttft_p50_s"])  # requests finished in the hour
    assert html.count("<tr>") == 1 + 3 * len(results)
    assert "<td>manual</td><td>time to first token</td><td>n/a</td>" in html
