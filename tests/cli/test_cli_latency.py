"""``speedtrap run`` reports TTFT, time-between-tokens and end-to-end latency percentiles per
backend (table and ``--json``'s ``latency``, the summary's keys unchanged) and ``--export`` writes
the per-request metrics."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from speedtrap.cli import app
from speedtrap.config import Scenario
from speedtrap.config.outcomes import SUMMARY_KEYS
from speedtrap.models import simulate
from speedtrap.models.latency import latency_percentiles

TWO = Path(__file__).resolve().parents[2] / "experiments" / "scenarios" / "two_backends.toml"
runner = CliRunner()


def test_run_json_has_latency_percentiles_per_backend_and_the_same_summary() -> None:
    result = runner.invoke(
        app, ["run", "--set", "developers=2", "--set", "horizon_s=3600", "--seed", "3", "--json"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert list(payload["summary"]) == list(SUMMARY_KEYS)
    expected = latency_percentiles(simulate(Scenario(developers=2, horizon_s=3600.0), 3).requests)
    assert payload["latency"].keys() == expected.keys() and payload["latency"]
    for backend, entry in payload["latency"].items():
        assert entry["requests"] == expected[backend]["requests"]
        for metric in ("ttft_s", "tbt_s", "e2e_s"):
            assert list(entry[metric]) == ["p50", "p90", "p99"]
            assert entry[metric] == pytest.approx(expected[backend][metric])


def test_run_prints_latency_percentiles_and_exports_request_metrics(tmp_path: Path) -> None:
    args = ["run", str(TWO), "--set", "developers=2", "--set", "horizon_s=3600", "--export", str(tmp_path)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "Latency per request" in result.stdout
    for label in ("time to first token", "time between tokens", "end to end", "p50", "p90", "p99"):
        assert label in result.stdout, result.stdout
    metrics = pd.read_parquet(tmp_path / "request_metrics.parquet")
    requests = pd.read_parquet(tmp_path / "requests.parquet")
    assert len(metrics) == len(requests)
    assert {"queue_s", "ttft_s", "tbt_s", "e2e_s", "tokens", "backend", "tier"} <= set(metrics.columns)
    assert set(metrics["backend"]) == set(requests["backend"])
    for backend in set(requests["backend"]):
        assert backend in result.stdout
