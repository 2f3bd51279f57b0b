"""Replay that re-times honestly: the logged figures beside the replayed ones, request by request;
the backend speed that would match the logs, fitted where they allow it; rework signals; and a
fitted scenario checked against the replay of its own logs."""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from speedtrap.config.scenario import Scenario
from speedtrap.models.workflow import simulate
from speedtrap.sessions import Sessions, fit_scenario, load_sessions, trace_from_result
from speedtrap.sessions.check import CHECKS, check_lines, fit_check
from speedtrap.sessions.plain_trace import LoadReport, normalize_trace
from speedtrap.sessions.replay import replay, replay_pair
from speedtrap.sessions.retime import (
    MIN_SPEED_REQUESTS,
    expected_rework,
    fit_backend_speed,
    rework_signals,
    timing_check,
)

DAY = Scenario(name="replay", horizon_s=28_800.0)


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sessions" / "trace.csv"


@pytest.fixture(scope="module")
def example() -> pd.DataFrame:
    return load_sessions([EXAMPLE]).trace


@pytest.fixture(scope="module")
def slow_logs() -> pd.DataFrame:
    """A day of logs recorded on gpu-batched decoding at half its preset rate, with 1.5 s more to
    the first token: the truth a speed fit must find."""
    recorded = Scenario.model_validate(
        {
            "name": "slow",
            "developers": 3,
            "horizon_s": 28_800.0,
            "backends": {
                "gpu-batched": {"preset": "gpu-batched", "decode_speedup": 0.5, "ttft_overhead_s": 2.5}
            },
        }
    )
    return normalize_trace(trace_from_result(simulate(recorded, 7)), LoadReport())


def test_the_logged_column_shows_the_logs_not_a_re_simulation(example) -> None:
    table = replay_pair(example, DAY, "gpu-fast", recorded="gpu-batched", seed=0).set_index("measure")
    logged = (example["end_s"] - example["start_s"]).mean()
    assert table.loc["mean_request_s", "logged"] == pytest.approx(logged)
    assert math.isnan(table.loc["waiting_share", "logged"])  # the logs cannot say
    assert list(table.columns) == ["label", "logged", "recorded", "replayed", "change"]


def test_timing_is_checked_request_by_request(slow_logs) -> None:
    check = timing_check(replay(slow_logs, DAY.with_backend("gpu-batched"), seed=0))
    assert {"recorded_s", "replayed_s", "ratio", "ttft_s", "decode_s"} <= set(check.columns)
    assert len(check) > 100 and (check["ratio"] < 1).mean() > 0.9  # the preset is faster than the logs


def test_the_backend_speed_that_matches_the_logs_is_fitted(slow_logs) -> None:
    fit = fit_backend_speed(slow_logs, DAY, "gpu-batched")
    assert not fit.reason
    assert fit.decode_speedup_ci[0] <= 0.5 <= fit.decode_speedup_ci[
        1
    ] and fit.decode_speedup == pytest.approx(0.5, rel=0.05)
    assert fit.ttft_overhead_s == pytest.approx(2.5, abs=0.3)
    assert fit.before["median_abs_rel_error"] > 0.3 and fit.after["median_abs_rel_error"] < 0.05
    assert "would decode at 0.5" in " ".join(fit.lines())


def test_a_speed_is_not_fitted_from_too_few_requests(slow_logs) -> None:
    few = slow_logs[slow_logs["session"] == slow_logs["session"].iloc[0]].head(MIN_SPEED_REQUESTS - 1)
    fit = fit_backend_speed(few, DAY, "gpu-batched")
    assert fit.reason.startswith("too little data") and math.isnan(fit.decode_speedup)
    assert f"need {MIN_SPEED_REQUESTS}" in fit.reason


def test_rework_signals_scale_with_a_weaker_backend(example) -> None:
    trace = example.copy()
    trace.loc[[3, 10, 40], "rework"] = ["interrupted", "rejected", "interrupted"]
    assert rework_signals(trace)["interrupted"] == 2 and rework_signals(trace)["rejected"] == 1
    expected = expected_rework(trace, DAY, "gpu-batched", "wafer-distilled")
    assert expected["expected"] == pytest.approx(3 * 1.2)


def test_subagent_requests_load_the_fleet_in_a_replay(tmp_path, with_subagent) -> None:
    trace = load_sessions([with_subagent(tmp_path, [500] * 4)]).trace
    run = replay(trace, DAY.with_backend("gpu-batched"), seed=0)
    first = run.request_times().query("cycle == 0")
    assert len(first) == 6 and first["output_tokens"].sum() == 40 + 30 + 4 * 500
    assert run.result.requests["cost_usd"].sum() > 0


def test_a_fitted_scenario_is_checked_against_the_replay_of_its_logs(example) -> None:
    sessions = Sessions(example, LoadReport())
    table = fit_check(sessions, fit_scenario(sessions), seeds=(0, 1))
    assert list(table["measure"]) == [c.key for c in CHECKS]
    rows = table.set_index("measure")
    assert rows.loc["fixing_share", "within"] is None and "wrong" in rows.loc["fixing_share", "note"]
    for measure in ("request_median_s", "turns_per_task", "human_turns_per_task", "tool_share_of_agent_time"):
        assert rows.loc[measure, "within"], (measure, rows.loc[measure].to_dict())
    assert rows.loc["request_median_s", "logged"] == pytest.approx(
        np.median(example["end_s"] - example["start_s"])
    )
    lines = check_lines(table)
    assert lines[-1].endswith(f"of {len(CHECKS) - 1} measures within tolerance")
