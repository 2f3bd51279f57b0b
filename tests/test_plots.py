"""Tests of the presentation helpers in speedtrap.plots: display tables, line panels, and figures that
draw shares in % and name every interval they show."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes

from speedtrap.analysis.statistics import mean_ci, paired_differences, summarize
from speedtrap.config.ledger import LEDGER_CATEGORIES
from speedtrap.plots import (
    CATEGORY_LABELS,
    LOG_CUT_NOTE,
    ci_table,
    interval_note,
    plot_calibration,
    plot_ledger,
    plot_line_panels,
    plot_lines,
    plot_morris,
    plot_outcome,
    plot_sensitivity,
)


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
    assert _legend_texts(ax)[-1] == "whiskers: 95% t-interval (unpaired)"
    ax = plot_calibration(table.assign(n=[3, 5]))
    assert _legend_texts(ax)[-1] == (
        "whiskers: 95% t-interval over 3–5 replications (unpaired; only 3 replications: unreliable)"
    )
    plt.close("all")


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


def test_interval_note_says_level_count_pairing_and_caveat() -> None:
    assert interval_note("bands", [5, 5]) == "bands: 95% t-interval over 5 runs (unpaired)"
    assert interval_note("error bars", [3, 5], paired=True, of="seeds") == (
        "error bars: 95% t-interval over 3–5 seeds (paired by seed; only 3 seeds: unreliable)"
    )


def _legend_texts(ax: Axes) -> list[str]:
    legend = ax.get_legend()
    assert legend is not None
    return [" ".join(t.get_text().split()) for t in legend.get_texts()]


def test_ledger_and_outcome_bars_name_their_error_bars() -> None:
    runs = _runs()
    for c in LEDGER_CATEGORIES:
        runs[f"share_{c}"] = 1.0 / len(LEDGER_CATEGORIES)
    ax = plot_ledger(runs, "backend", workday_s=8 * 3600.0)
    texts = _legend_texts(ax)
    assert texts[: len(LEDGER_CATEGORIES)] == [CATEGORY_LABELS[c] for c in LEDGER_CATEGORIES]
    assert texts[-1] == "error bars: 95% t-interval over 3 runs (unpaired; only 3 runs: unreliable)"
    ax = plot_outcome(runs, "share", "share of time (%)", percent=True)
    assert _legend_texts(ax) == ["error bars: 95% t-interval over 3 runs (unpaired; only 3 runs: unreliable)"]
    heights = sorted(bar.get_height() for bar in ax.patches)
    assert heights == pytest.approx(sorted(100 * runs.groupby("backend")["share"].mean()))
    single = plot_outcome(runs[runs["seed"] == 1], "tasks", "tasks")
    assert single.get_legend() is None  # one run per bar: no interval, nothing to name
    plt.close("all")


def test_plot_lines_on_a_log_axis_cuts_bands_below_zero_and_says_so() -> None:
    runs = pd.DataFrame({"x": [1, 1, 1, 2, 2, 2], "y": [1.0, 10.0, 40.0, 100.0, 110.0, 120.0]})
    ax = plot_lines(runs, "x", "y", "wait (s)", log=True)
    assert ax.get_yscale() == "log"
    (note,) = _legend_texts(ax)
    assert note.startswith("bands: 95% t-interval over 3 runs") and note.endswith(LOG_CUT_NOTE)
    band = ax.collections[0].get_paths()[0].vertices[:, 1]
    assert band.min() == pytest.approx(17.0 / 2)  # half the smallest mean, not ≤ 0
    linear = plot_lines(runs, "x", "y", "wait (s)")
    assert LOG_CUT_NOTE not in _legend_texts(linear)[0]
    plt.close("all")


def test_sensitivity_indices_are_drawn_in_percent_with_named_error_bars() -> None:
    indices = pd.DataFrame(
        {
            "factor": ["a", "b"],
            "S1": [0.5, 0.1],
            "S1_conf": [0.05, 0.02],
            "ST": [0.6, 0.2],
            "ST_conf": [0.1, 0.05],
        }
    )
    ax = plot_sensitivity(indices)
    assert ax.get_xlabel() == "Sobol' index (% of output variance)"
    widths = sorted(bar.get_width() for bar in ax.patches)
    assert widths == pytest.approx([10.0, 20.0, 50.0, 60.0])
    assert _legend_texts(ax)[-1] == "error bars: 95% bootstrap interval"
    morris = pd.DataFrame(
        {"factor": ["a"], "mu": [1.0], "mu_star": [1.0], "mu_star_conf": [0.2], "sigma": [0.5]}
    )
    assert "μ* with its 95% bootstrap interval" in _legend_texts(plot_morris(morris))
    plt.close("all")


def test_morris_labels_of_clustered_factors_do_not_overlap() -> None:
    from speedtrap.plots import plot_morris

    indices = pd.DataFrame(
        {
            "factor": [f"factor.number_{i}" for i in range(6)],
            "mu": [0.1, 0.11, 0.12, 0.1, 2.0, 0.13],
            "mu_star": [0.1, 0.11, 0.12, 0.1, 2.0, 0.13],
            "mu_star_conf": [0.01] * 6,
            "sigma": [0.1, 0.1, 0.11, 0.12, 0.5, 0.1],
        }
    )
    ax = plot_morris(indices)
    fig = ax.get_figure(root=True)
    fig.canvas.draw()
    from matplotlib.text import Text

    boxes = [Text.get_window_extent(t) for t in ax.texts]  # the text alone, not its leader line
    assert len(boxes) == 6
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not a.overlaps(b), (a, b)
    inside = ax.get_window_extent()
    assert all(inside.y0 <= box.y0 and box.y1 <= inside.y1 for box in boxes)
    plt.close(fig)


def test_a_nested_design_says_members_and_seeds_in_the_differences_title() -> None:
    from speedtrap.plots.differences import plot_differences

    differences = pd.DataFrame(
        {
            "arm": ["fast"],
            "outcome": ["tasks_per_dev_day"],
            "n": [40],
            "mean": [0.5],
            "ci_low": [0.4],
            "ci_high": [0.6],
            "behaviour_low": [0.1],
            "behaviour_high": [1.4],
            "members": [20],
            "seeds_per_member": [2.0],
        }
    )
    outcomes = [("tasks_per_dev_day", "tasks per developer-day", 1.0, "")]
    fig = plot_differences(differences, "standard", outcomes)
    assert fig._suptitle is not None  # type: ignore[attr-defined]
    title = fig._suptitle.get_text()  # type: ignore[attr-defined]
    assert "20 members × 2 seeds (paired by member and seed)" in title
    assert "40 seeds" not in title
