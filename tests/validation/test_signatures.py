"""Behavioural signatures of patience and switching away (speedtrap.analysis.signatures): known
answers on synthetic pairs, a simulated headline run, and one function for logs and model."""

import math
from pathlib import Path

import numpy as np
import pytest

import speedtrap.sessions.targets as targets_module
import speedtrap.validation.signatures as model_module
from speedtrap.analysis import signatures as pure
from speedtrap.analysis.signatures import (
    AWAY_GAP_S,
    FAST_RESPONSE_S,
    LONG_STRETCH_S,
    MIN_RESPONSE_S,
    SHORT_STRETCH_S,
    SIGNATURE_STATISTICS,
    signature_bootstrap,
    signature_values,
)
from speedtrap.analysis.trace_structure import CACHE_STATISTICS
from speedtrap.models.results import RunResult
from speedtrap.models.workflow import simulate
from speedtrap.sessions import trace_from_result
from speedtrap.sessions.plain_trace import LoadReport, normalize_trace
from speedtrap.sessions.structure import LONG_GAP_S
from speedtrap.sessions.targets import trace_targets
from speedtrap.validation.signatures import signature_statistics, stretch_pairs
from speedtrap.validation.workflow import default_scenarios

ROOT = Path(__file__).resolve().parents[2]


def test_the_stayed_and_the_left_are_told_apart() -> None:
    """All fast after short stretches and all slow after long ones: shares 1 and 0, the medians
    the constructed responses, a perfect rank correlation."""
    stretch = [10.0, 20.0, 30.0, 400.0, 500.0, 600.0]
    response = [3.0, 5.0, 7.0, 200.0, 300.0, 400.0]
    v = signature_values(stretch, response)
    assert v["fast_response_share_after_short"] == 1.0
    assert v["fast_response_share_after_long"] == 0.0
    assert v["response_median_after_short"] == 5.0
    assert v["response_median_after_long"] == 300.0
    assert v["response_stretch_rank_correlation"] == pytest.approx(1.0)


def test_a_developer_who_always_leaves_answers_slowly_after_every_stretch() -> None:
    stretch = [10.0, 30.0, 50.0, 350.0, 700.0]
    response = [120.0, 90.0, 60.0, 300.0, 200.0]
    v = signature_values(stretch, response)
    assert v["fast_response_share_after_short"] == 0.0
    assert v["fast_response_share_after_long"] == 0.0
    assert v["response_median_after_short"] == 90.0
    assert v["response_stretch_rank_correlation"] == pytest.approx(
        0.5
    )  # ranks (1..5) vs (3, 2, 1, 5, 4): 1 − 6·10/120


def test_thresholds_are_the_stated_ones_and_their_edges() -> None:
    assert (FAST_RESPONSE_S, SHORT_STRETCH_S, LONG_STRETCH_S, MIN_RESPONSE_S) == (15.0, 60.0, 300.0, 1.0)
    assert AWAY_GAP_S == LONG_GAP_S  # the logs' time away and the signatures' agree
    # exactly 15 s is fast; a stretch of exactly 60 s is not short, of exactly 300 s not long
    v = signature_values([59.9, 60.0, 300.0, 300.1], [15.0, 1.0, 1.0, 15.01])
    assert v["fast_response_share_after_short"] == 1.0
    assert v["fast_response_share_after_long"] == 0.0
    assert v["response_median_after_short"] == 15.0


def test_time_away_messages_typed_ahead_and_broken_pairs_are_left_out() -> None:
    stretch = [10.0, 10.0, 10.0, math.nan, 10.0, -1.0]
    response = [2.0, AWAY_GAP_S, 5_000.0, 1.0, math.inf, 1.0]
    v = signature_values(stretch, response)
    assert v["fast_response_share_after_short"] == 1.0  # only (10, 2) is a pair
    assert v["response_median_after_short"] == 2.0
    typed_ahead = signature_values([10.0, 20.0, 30.0], [0.01, MIN_RESPONSE_S, 4.0])
    assert typed_ahead["response_median_after_short"] == pytest.approx((MIN_RESPONSE_S + 4.0) / 2)
    with pytest.raises(ValueError, match="differ in shape"):
        signature_values([1.0, 2.0], [1.0])


def test_no_pair_in_a_condition_gives_nan_not_zero() -> None:
    v = signature_values([10.0, 20.0], [1.0, 2.0])
    assert math.isnan(v["fast_response_share_after_long"])
    assert math.isnan(v["response_median_after_long"])
    assert math.isnan(v["response_stretch_rank_correlation"])  # two pairs are too few
    assert set(v) == set(SIGNATURE_STATISTICS)
    assert all(math.isnan(x) for x in signature_values([], []).values())
    assert math.isnan(signature_values([1.0, 2.0, 3.0], [5.0, 5.0, 5.0])["response_stretch_rank_correlation"])


def test_the_bootstrap_resamples_sessions_and_counts_what_is_behind_each_statistic() -> None:
    rng = np.random.default_rng(0)
    stretch = np.concatenate([rng.uniform(1, 59, 40), rng.uniform(301, 900, 40)])
    response = np.concatenate([rng.uniform(1, 10, 40), rng.uniform(100, 600, 40)])
    groups = np.array([f"s{k % 8}" for k in range(80)])
    est = signature_bootstrap(stretch, response, groups, n_boot=300, rng=np.random.default_rng(1))
    assert est["fast_response_share_after_short"].value == 1.0
    assert est["fast_response_share_after_long"].value == 0.0
    assert est["fast_response_share_after_short"].n == 40
    assert est["response_stretch_rank_correlation"].n == 80
    assert est["response_stretch_rank_correlation"].sessions == 8
    for e in est.values():
        assert e.low <= e.value + 1e-12 and e.value <= e.high + 1e-12
    again = signature_bootstrap(stretch, response, groups, n_boot=300, rng=np.random.default_rng(1))
    assert again == est
    single = signature_bootstrap(
        stretch, response, np.full(80, "one"), n_boot=50, rng=np.random.default_rng(1)
    )
    assert all(math.isnan(e.low) and math.isnan(e.high) and e.sessions == 1 for e in single.values())


@pytest.fixture(scope="module")
def headline_run() -> RunResult:
    scenario = default_scenarios(ROOT, names=("headline",))["headline"]
    return simulate(scenario.with_overrides({"developers": 4, "horizon_s": 2 * scenario.workday_s}), 3)


def test_a_headline_run_gives_every_signature(headline_run: RunResult) -> None:
    v = signature_statistics(headline_run)
    assert set(v) == set(SIGNATURE_STATISTICS)
    assert all(math.isfinite(x) for x in v.values()), v
    for name in ("fast_response_share_after_short", "fast_response_share_after_long"):
        assert 0.0 <= v[name] <= 1.0
    assert v["response_median_after_short"] >= 0 and v["response_median_after_long"] >= 0
    assert -1.0 <= v["response_stretch_rank_correlation"] <= 1.0
    stretch, response, developer = stretch_pairs(headline_run)
    assert len(stretch) == len(response) == len(developer) > 0
    assert (stretch >= 0).all() and (response >= 0).all()


def test_logs_and_model_use_one_function(headline_run: RunResult, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both sides reach the same pure function: counting its calls shows each goes through it, and
    the logs written from a run give the run's own signatures."""
    assert targets_module.signature_bootstrap is pure.signature_bootstrap
    assert model_module.signature_values is pure.signature_values
    calls: list[int] = []
    original = pure._values

    def counted(s: np.ndarray, r: np.ndarray) -> dict[str, float]:
        calls.append(len(s))
        return original(s, r)

    monkeypatch.setattr(pure, "_values", counted)
    model = signature_statistics(headline_run)
    assert len(calls) == 1
    trace = normalize_trace(trace_from_result(headline_run), LoadReport())
    logs = trace_targets(trace, n_boot=20).set_index("statistic")["value"]
    assert len(calls) == 1 + 1 + 20  # the point estimate and each bootstrap draw
    for name in SIGNATURE_STATISTICS:
        assert logs[name] == pytest.approx(model[name], abs=0.05, rel=0.05), name


def test_a_run_without_its_tables_is_refused(headline_run: RunResult) -> None:
    from dataclasses import replace

    with pytest.raises(ValueError, match="no stretches table"):
        signature_statistics(replace(headline_run, stretches=None))


def test_the_proposed_target_rows_fit_the_targets_table_and_the_logs_figures() -> None:
    """signature_target_rows.csv: the columns of workflow_targets.csv, statistics named as
    signature_statistics names them, on the headline, each value the pooled logs' figure with a
    positive observation and discrepancy sd and a note on how each was set."""
    import pandas as pd

    data = ROOT / "src" / "speedtrap" / "validation" / "data"
    rows = pd.read_csv(data / "signature_target_rows.csv")
    table_columns = list(pd.read_csv(data / "workflow_targets.csv", nrows=0).columns)
    assert list(rows.columns) == [c for c in table_columns if c in rows.columns]  # its columns, in order
    assert {"id", "published", "obs_sd", "discrepancy_sd", "error_note", "role"} <= set(rows.columns)
    assert (rows["role"] == "calibration").all()
    units = SIGNATURE_STATISTICS | CACHE_STATISTICS  # the cache signature is written beside them
    assert set(rows["statistic"]) <= set(units) and len(rows) >= 3
    assert (rows["scenario"] == "headline").all()
    assert rows["id"].is_unique
    assert (rows["obs_sd"] > 0).all() and (rows["discrepancy_sd"] > 0).all()
    assert (
        rows["error_note"].str.contains("obs: ").all()
        and rows["error_note"].str.contains("discrepancy").all()
    )
    assert set(rows["tolerance_kind"]) <= {"absolute", "relative"} and rows["tolerance"].gt(0).all()
    assert ((rows["low"] <= rows["published"]) & (rows["published"] <= rows["high"])).all()  # the logs'
    assert rows["error_note"].str.contains(r"bootstrap (?:95% )?interval").all()  # the logs' interval, stated
    logs = pd.read_csv(data / "session_trace_targets.csv")
    pooled = logs[logs["tool"] == "pooled"].set_index("statistic")
    for row in rows.itertuples():
        assert row.published == pytest.approx(pooled.loc[row.statistic, "value"], rel=1e-3)
        assert row.unit == units[row.statistic]


def test_the_signatures_move_with_patience() -> None:
    """What makes them targets for patience: across its sourced range (10 s to 600 s), developers
    who wait longer answer sooner after short and after long stretches, and the answer depends less
    on the stretch's length (two seeds each, six developers for five days)."""
    base = default_scenarios(ROOT, names=("headline",))["headline"]
    base = base.with_overrides({"developers": 6, "horizon_s": 5 * base.workday_s})

    def mean_signatures(patience_s: float) -> dict[str, float]:
        scenario = base.with_overrides({"developer.attention.patience_s.median": patience_s})
        runs = [signature_statistics(simulate(scenario, seed)) for seed in (0, 1)]
        return {name: float(np.mean([r[name] for r in runs])) for name in SIGNATURE_STATISTICS}

    impatient, patient = mean_signatures(10.0), mean_signatures(600.0)
    assert patient["response_median_after_short"] < impatient["response_median_after_short"]
    assert patient["response_median_after_long"] < impatient["response_median_after_long"]
    assert patient["fast_response_share_after_short"] > impatient["fast_response_share_after_short"]
    assert patient["response_stretch_rank_correlation"] < impatient["response_stretch_rank_correlation"]
