"""``compare`` and ``demo`` report latency percentiles per arm (the mean over runs of each run's
p50/p90/p99 of time to first token, time between tokens and end to end): a table, ``compare --json``'s
``latency``, ``compare --latency-csv`` (every request of every run) and the demo's ``latency.csv``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from speedtrap.cli import app
from speedtrap.cli.compare import build_arms
from speedtrap.cli.latency import LATENCY_KEYS, run_percentiles
from speedtrap.config.outcomes import SUMMARY_KEYS
from speedtrap.experiments.seeds import replication_seeds
from speedtrap.models import simulate
from speedtrap.models.latency import request_metrics

runner = CliRunner()
SETS = ["developers=2", "horizon_s=7200"]
COMPARE = [
    "compare",
    "--backend",
    "gpu-batched",
    "--backend",
    "gpu-fast",
    *(a for s in SETS for a in ("--set", s)),
    "--single",
    "--replications",
    "2",
    "--seed",
    "5",
]


def _ordered(row: dict[str, float]) -> None:
    for prefix in ("ttft", "tbt", "e2e"):
        p50, p90, p99 = (row[f"{prefix}_p{p}_s"] for p in (50, 90, 99))
        assert 0 <= p50 <= p90 <= p99, row


def test_compare_json_has_each_arms_latency_percentiles(tmp_path: Path) -> None:
    result = runner.invoke(app, [*COMPARE, "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    latency = payload["latency"]
    assert [row["arm"] for row in latency] == ["gpu-batched", "gpu-fast"]
    assert payload["latency_csv"] is None
    arms = build_arms(None, ["gpu-batched", "gpu-fast"], [], SETS)
    for row in latency:
        assert row["runs"] == 2 and set(row) == {"arm", "runs", *LATENCY_KEYS}
        _ordered(row)
        per_run = [
            run_percentiles(request_metrics(simulate(arms[row["arm"]], s).requests))
            for s in replication_seeds(5, 2)
        ]
        for key in LATENCY_KEYS:
            assert row[key] == pytest.approx(np.mean([r[key] for r in per_run]))
    # the faster backend decodes faster
    assert latency[1]["tbt_p50_s"] < latency[0]["tbt_p50_s"]
    # the summary's differences are those of the summary's own outcomes
    assert {d["outcome"] for d in payload["differences"]} <= set(SUMMARY_KEYS)


def test_compare_prints_the_table_and_writes_every_request(tmp_path: Path) -> None:
    path = tmp_path / "out" / "requests.csv"
    result = runner.invoke(app, [*COMPARE, "--latency-csv", str(path)])
    assert result.exit_code == 0, result.output
    assert "Latency per arm (seconds; mean over runs of each run's percentile)" in result.stdout
    for label in ("time to first token", "time between tokens", "end to end", "p50", "p90", "p99"):
        assert label in result.stdout
    assert f"Wrote {path}" in result.stdout
    table = pd.read_csv(path)
    assert list(table.columns[:3]) == ["arm", "member", "seed"]
    assert {"ttft_s", "tbt_s", "e2e_s", "queue_s", "tokens"} <= set(table.columns)
    arms = build_arms(None, ["gpu-batched", "gpu-fast"], [], SETS)
    seeds = replication_seeds(5, 2)
    for label, scenario in arms.items():
        for seed in seeds:
            rows = table[(table["arm"] == label) & (table["seed"] == seed)]
            assert len(rows) == len(simulate(scenario, seed).requests) > 0  # one row per request
    assert set(table["member"]) == {-1}


def test_compare_refuses_a_latency_csv_it_cannot_write_before_running(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = runner.invoke(app, [*COMPARE, "--latency-csv", str(blocker / "requests.csv")])
    assert result.exit_code == 2
    assert "--latency-csv" in result.output and "runs done" not in result.output


def test_demo_prints_latency_and_writes_latency_csv(tmp_path: Path) -> None:
    result = runner.invoke(app, ["demo", "--quick", "--single", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "Latency per arm (seconds; mean over runs of each run's percentile)" in result.stdout
    table = pd.read_csv(tmp_path / "latency.csv")
    assert list(table["backend"]) == ["gpu-batched", "gpu-fast", "wafer-distilled"]
    assert list(table.columns) == ["backend", "runs", *LATENCY_KEYS]
    assert (table["runs"] == 3).all()
    for row in table.to_dict("records"):
        _ordered(row)
    assert str(tmp_path / "latency.csv") in result.stdout


def test_run_percentiles_are_nan_where_no_request_has_the_metric() -> None:
    metrics = pd.DataFrame({"ttft_s": [1.0, 2.0, 3.0], "tbt_s": [math.nan] * 3, "e2e_s": [2.0, 4.0, 6.0]})
    out = run_percentiles(metrics)
    assert list(out) == list(LATENCY_KEYS)
    assert out["ttft_p50_s"] == 2.0 and out["e2e_p99_s"] == pytest.approx(5.96)
    assert all(math.isnan(out[f"tbt_p{p}_s"]) for p in (50, 90, 99))
