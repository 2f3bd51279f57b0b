"""Statistics: Student-t intervals against scipy, grouped summaries, paired differences."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from speedtrap.analysis import mean_ci, paired_differences, summarize

DATA = [12.1, 9.8, 11.4, 10.7, 13.0, 10.2, 11.9]


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_mean_ci_matches_scipy_t_interval(confidence: float) -> None:
    mean, low, high = mean_ci(DATA, confidence)
    x = np.array(DATA)
    expected = stats.t.interval(confidence, df=x.size - 1, loc=x.mean(), scale=stats.sem(x))
    assert mean == pytest.approx(x.mean())
    assert (low, high) == pytest.approx(expected)


def test_mean_ci_edge_cases() -> None:
    mean, low, high = mean_ci([4.0])
    assert mean == 4.0 and math.isnan(low) and math.isnan(high)
    assert all(math.isnan(v) for v in mean_ci([]))
    assert mean_ci([1.0, math.nan, 3.0]) == pytest.approx(mean_ci([1.0, 3.0]))  # NaNs are dropped
    assert mean_ci([2.0, 2.0, 2.0]) == (2.0, 2.0, 2.0)
    with pytest.raises(ValueError, match="confidence"):
        mean_ci(DATA, 1.0)


def test_mean_ci_covers_the_true_mean_at_its_nominal_rate() -> None:
    rng = np.random.default_rng(np.random.SeedSequence(42))
    trials, n = 4000, 5
    samples = rng.normal(3.0, 2.0, size=(trials, n))
    covered = sum(low <= 3.0 <= high for _, low, high in (mean_ci(s) for s in samples))
    p = covered / trials
    se = math.sqrt(0.95 * 0.05 / trials)
    assert abs(p - 0.95) <= 4 * se


def table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "point": [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3],
            "replication": [0, 1, 2] * 4,
            "seed": [7, 8, 9] * 4,
            "backend": ["a"] * 3 + ["b"] * 3 + ["a"] * 3 + ["b"] * 3,
            "threshold_s": [1.0] * 6 + [10.0] * 6,
            "tasks": [10.0, 12.0, 11.0, 13.0, 16.0, 14.0, 9.0, 11.0, 10.0, 10.0, 12.0, 11.0],
            "usd": [1.0, 2.0, 3.0, 2.0, 4.0, math.nan, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0],
        }
    )


def test_summarize_is_long_format_with_intervals() -> None:
    df = table()
    summary = summarize(df, by=["backend"], outcomes=["tasks", "usd"])
    assert list(summary.columns) == ["backend", "outcome", "n", "mean", "std", "ci_low", "ci_high"]
    assert summary[["backend", "outcome"]].values.tolist() == [
        ["a", "tasks"],
        ["a", "usd"],
        ["b", "tasks"],
        ["b", "usd"],
    ]
    row = summary.iloc[0]
    values = df.loc[df["backend"] == "a", "tasks"]
    assert (
        row["n"] == 6
        and row["mean"] == pytest.approx(values.mean())
        and row["std"] == pytest.approx(values.std())
    )
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(mean_ci(values)[1:])
    assert summary.iloc[3]["n"] == 5  # the NaN is left out


def test_summarize_defaults_to_numeric_outcomes_or_recorded_ones() -> None:
    df = table()
    assert summarize(df, by=["backend", "threshold_s"])["outcome"].unique().tolist() == ["tasks", "usd"]
    assert summarize(df)["outcome"].tolist() == ["threshold_s", "tasks", "usd"]  # no attrs: every number
    df.attrs = {"factors": ["backend", "threshold_s"], "outcomes": ["tasks"]}
    overall = summarize(df)
    assert overall["outcome"].tolist() == ["tasks"] and overall["n"].tolist() == [12]
    with pytest.raises(KeyError, match="no column 'nope'"):
        summarize(df, by=["nope"])


def test_paired_differences_pair_on_seed_within_other_factors() -> None:
    df = table()
    df.attrs = {"factors": ["backend", "threshold_s"], "outcomes": ["tasks", "usd"]}
    diffs = paired_differences(df, "backend", "a")
    assert list(diffs.columns) == [
        "threshold_s", "backend", "outcome", "n", "baseline_mean", "level_mean", "mean", "std",
        "ci_low", "ci_high", "ratio",
    ]  # fmt: skip
    tasks = diffs[(diffs["threshold_s"] == 1.0) & (diffs["outcome"] == "tasks")].iloc[0]
    d = np.array([13.0, 16.0, 14.0]) - np.array([10.0, 12.0, 11.0])
    assert tasks["backend"] == "b" and tasks["n"] == 3
    assert tasks["mean"] == pytest.approx(d.mean()) and tasks["std"] == pytest.approx(d.std(ddof=1))
    assert (tasks["ci_low"], tasks["ci_high"]) == pytest.approx(mean_ci(d)[1:])
    assert tasks["ratio"] == pytest.approx(np.mean([13, 16, 14]) / np.mean([10, 12, 11]))
    usd = diffs[(diffs["threshold_s"] == 1.0) & (diffs["outcome"] == "usd")].iloc[0]
    assert usd["n"] == 2 and usd["mean"] == pytest.approx(1.5)  # the pair with a NaN is dropped
    flat = diffs[(diffs["threshold_s"] == 10.0) & (diffs["outcome"] == "usd")].iloc[0]
    assert (flat["mean"], flat["std"], flat["ci_low"], flat["ci_high"]) == (1.0, 0.0, 1.0, 1.0)


def test_paired_differences_needs_unambiguous_pairs() -> None:
    df = table()  # no attrs: every non-outcome column but the factor is a pairing key
    by_default = paired_differences(df, "backend", "a", outcomes=["tasks", "usd"])
    assert by_default["threshold_s"].tolist() == [1.0, 1.0, 10.0, 10.0]
    with pytest.raises(ValueError, match="several runs share seed, backend and"):
        paired_differences(df, "backend", "a", outcomes=["tasks"], by=[])
    with pytest.raises(ValueError, match=r"backend has no level 'c' \(levels: \['a', 'b'\]\)"):
        paired_differences(df, "backend", "c", outcomes=["tasks"])
