"""Latency percentiles of runs (speedtrap.analysis.latency): per-run percentiles and their mean per
group, the run-wide columns and per-tier ones."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from speedtrap.analysis.latency import LATENCY_KEYS, latency_by, latency_table, run_percentiles


def _runs() -> pd.DataFrame:
    rows = []
    for point, share in enumerate((0.0, 0.5)):
        for seed in range(3):
            row: dict[str, float | int] = {"point": point, "policy.share": share, "seed": seed}
            row.update({key: 1.0 + point + seed + i for i, key in enumerate(LATENCY_KEYS)})
            row.update({f"fast_{key}": (math.nan if share == 0 else 10.0 + seed) for key in LATENCY_KEYS})
            rows.append(row)
    return pd.DataFrame(rows)


def test_run_percentiles_match_numpy() -> None:
    metrics = pd.DataFrame(
        {"ttft_s": [1.0, 2.0, 3.0, np.nan], "tbt_s": [0.1] * 4, "e2e_s": [4.0, 5.0, 6.0, 7.0]}
    )
    out = run_percentiles(metrics)
    assert list(out) == list(LATENCY_KEYS)
    assert out["ttft_p90_s"] == np.percentile([1.0, 2.0, 3.0], 90)
    assert out["e2e_p50_s"] == 5.5


def test_latency_by_is_the_mean_per_group_with_the_run_count() -> None:
    table = latency_by(_runs(), "policy.share")
    assert list(table.columns) == ["policy.share", "runs", *LATENCY_KEYS]
    assert table["runs"].tolist() == [3, 3]
    assert table["ttft_p50_s"].tolist() == [2.0, 3.0]  # the mean of 1, 2, 3 and of 2, 3, 4


def test_latency_table_has_a_block_per_set_of_columns_and_names_the_tier() -> None:
    table = latency_table(_runs(), ["policy.share"])
    assert table is not None
    assert list(table.columns) == ["policy.share", "tier", "runs", *LATENCY_KEYS]
    assert table["tier"].fillna("").tolist() == ["", "", "fast", "fast"]
    fast = table[table["tier"] == "fast"]
    assert math.isnan(fast["ttft_p50_s"].iloc[0]) and fast["ttft_p50_s"].iloc[1] == 11.0  # no fast runs at 0


def test_latency_table_without_latency_columns_is_none() -> None:
    assert latency_table(pd.DataFrame({"backend": ["a"], "tasks_per_dev_day": [1.0]}), ["backend"]) is None
