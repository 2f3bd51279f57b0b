"""Tests of the presentation helpers in speedtrap.plots added for notebooks: ci_table and plot_line_panels."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from speedtrap.analysis.statistics import mean_ci, paired_differences, summarize
from speedtrap.plots import ci_table, plot_calibration, plot_line_panels


def _runs() -> pd.DataFrame:
    """Three seeds × two backends; ``share`` is a fraction, ``usd`` dollars."""
    return pd.DataFrame(
        {
            "seed": [1, 2, 3, 1, 2, 3],
            "backend": ["b", "b", "b", "a", "a", "a"],
            "tasks": [10.0, 12.0, 17.0, 20.0, 21.0, 25.0],
            "share": [0.10, 0.20, 0.30, 0.05, 0.05, 0.08],
            "usd": [1.0, 2.0, 4.0, 8.0, 9.0, 13.0],
        }
    )


def _cell(values: list[float], digits: int, scale: float = 1.0) -> str:
    mean, low, high = mean_ci(np.asarray(values) * scale)
    return f"{mean:.{digits}f} ± {(high - low) / 2:.{digits}f} (n={len(values)})"  # fewer than 5: marked


def test_ci_table_formats_mean_and_half_width_of_summarize_output() -> None:
    runs = _runs()
    summary = summarize(runs, by=["backend"], outcomes=["tasks", "share", "usd"])
    table = ci_table(
        summary,
        ["backend"],
        {"usd": "US$ per task", "share": "share (%)"},
        digits={"usd": 3},
        percent={"share"},
    )
    assert list(table.columns) == ["US$ per task", "share (%)"]  # the order of `columns`
    assert list(table.index) == ["a", "b"]  # summarize sorts its groups; the table keeps that order
    assert table.index.name == "backend"
    assert table.loc["a", "US$ per task"] == _cell([8.0, 9.0, 13.0], 3)
    assert table.loc["b", "share (%)"] == _cell([0.10, 0.20, 0.30], 2, scale=100.0)
    assert table.loc["b", "share (%)"].startswith("20.00 ± ")


def test_ci_table_of_paired_differences_and_several_group_columns() -> None:
    runs = _runs()
    paired = paired_differences(runs, "backend", "a", outcomes=["tasks"], by=[])
    table = ci_table(paired, ["backend"], {"tasks": "Δ tasks"}, digits=1)
    assert list(table.index) == ["b"]
    diffs = [10.0 - 20.0, 12.0 - 21.0, 17.0 - 25.0]
    assert table.loc["b", "Δ tasks"] == _cell(diffs, 1)

    runs["sessions"] = [1, 2, 1, 2, 1, 2]
    two = summarize(runs, by=["sessions", "backend"], outcomes=["tasks"])
    table = ci_table(two, ["sessions", "backend"], {"tasks": "tasks"}, digits=0)
    assert table.index.names == ["sessions", "backend"]
    assert len(table) == 4
    assert table.loc[(1, "b"), "tasks"] == _cell([10.0, 17.0], 0)
    assert table.loc[(2, "b"), "tasks"] == "12"  # a single run has no interval: the mean alone


def test_ci_table_marks_missing_values_and_rejects_unknown_names() -> None:
    summary = pd.DataFrame(
        {
            "g": ["x", "x", "y"],
            "outcome": ["u", "v", "u"],
            "mean": [1.0, math.nan, 3.0],
            "ci_low": [0.5, math.nan, 2.0],
            "ci_high": [1.5, math.nan, 4.0],
        }
    )
    table = ci_table(summary, ["g"], {"u": "u", "v": "v"}, digits=1)
    assert table.loc["x", "u"] == "1.0 ± 0.5"  # no n column: only a zero width would be marked
    assert table.loc["x", "v"] == "–"  # NaN mean
    assert table.loc["y", "v"] == "–"  # no row for this group and outcome
    with pytest.raises(KeyError, match="no outcome 'w'"):
        ci_table(summary, ["g"], {"w": "w"})
    with pytest.raises(KeyError, match="no column 'h'"):
        ci_table(summary, ["h"], {"u": "u"})
    with pytest.raises(ValueError, match="grouping column"):
        ci_table(summary, [], {"u": "u"})


def test_plot_line_panels_draws_one_panel_per_outcome_with_one_legend() -> None:
    runs = _runs()
    runs["sessions"] = [1, 1, 2, 2, 4, 4]
    runs["backend"] = ["a", "b", "a", "b", "a", "b"]
    panels = [("tasks", "tasks per day"), ("share", "share of time"), ("usd", "US$ per task")]
    fig = plot_line_panels(
        runs, "sessions", panels, hue="backend", xlabel="sessions", xticks=[1, 2, 4], ncols=2
    )
    try:
        visible = [ax for ax in fig.axes if ax.get_visible()]
        assert len(fig.axes) == 4 and len(visible) == 3  # a 2 × 2 grid, the last cell hidden
        assert [ax.get_ylabel() for ax in visible] == [label for _, label in panels]
        assert all(ax.get_xlabel() == "sessions" for ax in visible)
        assert all(list(ax.get_xticks()) == [1, 2, 4] for ax in visible)
        assert [ax.get_legend() is not None for ax in visible] == [True, False, False]
        for ax, (outcome, _) in zip(visible, panels, strict=True):
            # one line per backend, through the mean at each x (one run per point here)
            lines = [line for line in ax.get_lines() if len(line.get_xdata()) == 3]
            assert len(lines) == 2
            expected = runs.groupby(["backend", "sessions"])[outcome].mean()
            got = sorted(tuple(line.get_ydata()) for line in lines)
            want = sorted(tuple(expected[b].to_numpy()) for b in ("a", "b"))
            assert np.allclose(got, want)
    finally:
        plt.close(fig)
    with pytest.raises(ValueError, match="at least one panel"):
        plot_line_panels(runs, "sessions", [])


def test_plot_calibration_draws_each_target_relative_to_its_published_value() -> None:
    table = pd.DataFrame(
        {
            "id": ["ratio", "share"],
            "published": [2.0, 0.1],
            "simulated": [3.0, 0.1],
            "ci_low": [2.5, 0.09],
            "ci_high": [3.5, 0.11],
            "accept_low": [1.5, 0.08],
            "accept_high": [2.5, 0.12],
            "passed": [False, True],
        }
    )
    ax = plot_calibration(table)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["ratio", "share"]
    means = {
        round(float(line.get_ydata()[0])): float(line.get_xdata()[0])
        for line in ax.lines
        if line.get_marker() == "o"
    }
    assert means == pytest.approx({1: 1.5, 0: 1.0})  # "ratio" is drawn on top (y = 1)
    band = ax.collections[0].get_paths()[0].vertices[:, 0]
    assert (band.min(), band.max()) == pytest.approx((0.75, 1.25))
    plt.close(ax.figure)


def test_ci_table_marks_intervals_that_cannot_be_read_as_such() -> None:
    summary = pd.DataFrame(
        {
            "g": ["x", "y", "z"],
            "outcome": ["u", "u", "u"],
            "n": [10, 3, 10],
            "mean": [6.75, 2.0, 3.0],
            "ci_low": [6.75, 1.0, 2.0],
            "ci_high": [6.75, 3.0, 4.0],
        }
    )
    table = ci_table(summary, ["g"], {"u": "u"})
    assert table.loc["x", "u"] == "6.75 ± 0.00 (zero width)"
    assert table.loc["y", "u"] == "2.00 ± 1.00 (n=3)"
    assert table.loc["z", "u"] == "3.00 ± 1.00"
