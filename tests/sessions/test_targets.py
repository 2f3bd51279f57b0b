"""Trace statistics for the workflow calibration: values, bootstrap intervals, sessions behind them;
and the figures public real logs give (src/speedtrap/validation/data/session_trace_targets.csv)."""

from importlib import resources

import numpy as np
import pandas as pd
import pytest

from speedtrap.config.scenario import Scenario
from speedtrap.models.workflow import simulate
from speedtrap.sessions import trace_from_result
from speedtrap.sessions.plain_trace import LoadReport, normalize_trace
from speedtrap.sessions.targets import TARGET_STATISTICS, trace_targets


@pytest.fixture(scope="module")
def simulated() -> tuple[pd.DataFrame, object]:
    scenario = Scenario.model_validate({"name": "t", "developers": 3, "horizon_s": 2 * 28_800.0})
    result = simulate(scenario, 5)
    return normalize_trace(trace_from_result(result), LoadReport()), result


def test_every_statistic_has_an_interval_and_its_sessions(simulated) -> None:
    trace, _ = simulated
    table = trace_targets(trace, n_boot=500).set_index("statistic")
    assert list(table.index) == list(TARGET_STATISTICS)
    finite = table[np.isfinite(table["value"])]
    assert ((finite["low"] <= finite["value"] + 1e-12) & (finite["value"] <= finite["high"] + 1e-12)).all()
    assert (table["sessions"] == trace.groupby(["developer", "session"]).ngroups).all()
    shares = table.loc[
        ["concurrent_sessions_1", "concurrent_sessions_2", "concurrent_sessions_3plus"], "value"
    ]
    assert shares.sum() == pytest.approx(1.0)


def test_statistics_agree_with_the_simulation_that_wrote_the_logs(simulated) -> None:
    """The human response and agent stretch of the logs are the run's own stretches (export writes
    each stretch's hand-off and hand-back), so the medians match the run's."""
    trace, result = simulated
    table = trace_targets(trace, n_boot=200).set_index("statistic")
    st = result.stretches
    human = (st["back_s"] - st["need_s"]).dropna()
    assert table.loc["human_response_median", "value"] == pytest.approx(human.median(), rel=0.15)


def test_the_same_seed_gives_the_same_table(simulated) -> None:
    trace, _ = simulated
    pd.testing.assert_frame_equal(
        trace_targets(trace, n_boot=100, seed=3), trace_targets(trace, n_boot=100, seed=3)
    )


def test_the_recorded_figures_name_their_source_and_how_few_sessions_they_rest_on() -> None:
    path = resources.files("speedtrap.validation.data").joinpath("session_trace_targets.csv")
    with path.open("rb") as f:
        table = pd.read_csv(f)
    assert set(table["statistic"]) == set(TARGET_STATISTICS)
    assert set(table["tool"]) == {"claude_code", "codex"}
    for column in ("repository", "commit", "licence", "files", "how_computed", "note"):
        assert table[column].notna().all(), column
    assert table["commit"].str.fullmatch(r"[0-9a-f]{40}").all()
    bounded = table.dropna(subset=["low", "high"])
    assert ((bounded["low"] <= bounded["value"]) & (bounded["value"] <= bounded["high"])).all()
    assert (table["note"].str.contains("human sessions")).all()
    assert (table["sessions"] <= 8).all()  # a handful of sessions: the note says so
