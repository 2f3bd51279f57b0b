"""Outcomes across backends and design points: bars per backend, lines and grids of panels
along a factor with their confidence bands, and "mean ± half-width" display tables.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Collection, Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from speedtrap.analysis.statistics import ci_flag, mean_ci
from speedtrap.plots.common import (
    ERRORBAR_COLOUR,
    add_legend_entries,
    band_handle,
    errorbar_handle,
    interval_note,
)


def _t_interval(values: pd.Series) -> tuple[float, float]:
    _, low, high = mean_ci(values.to_numpy())
    return low, high


def _as_percent(frame: pd.DataFrame, column: str, label: str) -> pd.DataFrame:
    """``frame`` with the share ``column`` (0–1) in percent, for an axis whose ``label`` says "%"."""
    if "%" not in label:
        raise ValueError(f"a share drawn in percent needs '%' in its axis label, got {label!r}")
    return frame.assign(**{column: 100.0 * frame[column]})


def plot_outcome(
    frame: pd.DataFrame,
    outcome: str,
    label: str,
    by: str = "backend",
    *,
    order: Sequence[str] | None = None,
    ax: Axes | None = None,
    percent: bool = False,
) -> Axes:
    """Bars of the mean of ``outcome`` per level of ``by`` with 95% t confidence intervals over runs
    (unpaired), which a legend under the axes names (:func:`interval_note`). ``percent``: the
    outcome is a share (0–1) drawn in % (``label`` must say "%")."""
    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 3.2), layout="constrained")
    if percent:
        frame = _as_percent(frame, outcome, label)
    counts = frame.groupby(by)[outcome].count()
    many = counts.min() > 1
    sns.barplot(
        data=frame,
        x=by,
        y=outcome,
        order=order,
        hue=by,
        hue_order=order,
        palette="colorblind",
        legend=False,
        errorbar=_t_interval if many else None,
        err_kws={"color": ERRORBAR_COLOUR, "linewidth": 1.2},
        capsize=0.2,
        ax=ax,
    )
    ax.set_ylabel(label)
    ax.set_xlabel("")
    if many:
        note = textwrap.fill(interval_note("error bars", counts), 48)
        ax.legend(
            handles=[errorbar_handle(note)],
            loc="upper center",
            bbox_to_anchor=(0.5, -0.12),
            frameon=False,
            fontsize="small",
        )
    sns.despine(ax=ax)
    return ax


LOG_CUT_NOTE = "lower ends ≤ 0 cut off on the log axis"
"""Added to the band note of a log-scale :func:`plot_lines` whose t-intervals reach 0 or below."""


def plot_lines(
    frame: pd.DataFrame,
    x: str,
    y: str,
    label: str,
    *,
    hue: str | None = None,
    ax: Axes | None = None,
    percent: bool = False,
    color: str | None = None,
    log: bool = False,
) -> Axes:
    """Mean of ``y`` against ``x`` (one line per level of ``hue``) with 95% t confidence bands over
    runs (unpaired), which a legend entry names (:func:`interval_note`). ``percent``: ``y`` is a
    share (0–1) drawn in % (``label`` must say "%"); ``color``: the line's colour without ``hue``;
    ``log``: ``y`` on a log axis, where a band's lower end at or below 0 (a t-interval from few
    runs of a positive quantity can reach it) is cut at half the smallest mean, and the legend
    entry says so (:data:`LOG_CUT_NOTE`)."""
    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 3.2), layout="constrained")
    if percent:
        frame = _as_percent(frame, y, label)
    keys = [x, *([hue] if hue else [])]
    counts = frame.groupby(keys)[y].count()
    many = counts.min() > 1
    means = frame.groupby(keys)[y].mean()
    floor = float(means[means > 0].min()) / 2 if log and (means > 0).any() else None
    cut = []

    def interval(values: pd.Series) -> tuple[float, float]:
        low, high = _t_interval(values)
        if floor is not None and low <= 0:
            cut.append(low)
            low = floor
        return low, high

    sns.lineplot(
        data=frame,
        x=x,
        y=y,
        hue=hue,
        marker="o",
        palette="colorblind" if hue else None,
        color=None if hue else color,
        errorbar=interval if many else None,
        ax=ax,
    )
    ax.set_ylabel(label)
    if log:
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
    if many:
        note = interval_note("bands", counts) + (f"; {LOG_CUT_NOTE}" if cut else "")
        add_legend_entries(ax, [band_handle(textwrap.fill(note, 40))])
    sns.despine(ax=ax)
    return ax


def plot_line_panels(
    frame: pd.DataFrame,
    x: str,
    panels: Sequence[tuple[str, str]],
    *,
    hue: str | None = None,
    xlabel: str | None = None,
    xticks: Sequence[float] | None = None,
    ncols: int = 3,
    title: str | None = None,
    percent: Collection[str] = (),
) -> Figure:
    """A grid of :func:`plot_lines` panels, one per ``(outcome column, axis label)`` in ``panels``.

    Every panel plots the mean of its outcome against ``x`` (one line per level of ``hue``) with
    95% t confidence bands over runs; only the first panel keeps a legend (which names the bands).
    Outcomes in ``percent`` are shares (0–1) drawn in % (their labels must say "%"). ``xticks``
    puts the ticks at given values (e.g. the levels of a discrete factor). Unused grid cells are
    hidden. Returns the figure (nothing is shown or saved).
    """
    if not panels:
        raise ValueError("plot_line_panels needs at least one panel")
    ncols = max(1, min(ncols, len(panels)))
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(4.3 * ncols, 3.2 * nrows), layout="constrained", squeeze=False
    )
    for i, (ax, (outcome, label)) in enumerate(zip(axes.flat, panels, strict=False)):
        plot_lines(frame, x, outcome, label, hue=hue, ax=ax, percent=outcome in percent)
        ax.set_xlabel(xlabel if xlabel is not None else x)
        if xticks is not None:
            ax.set_xticks(list(xticks))
        legend = ax.get_legend()
        if legend is not None and i > 0:
            legend.remove()
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title)
    return fig


def ci_table(
    frame: pd.DataFrame,
    by: Sequence[str],
    columns: Mapping[str, str],
    *,
    digits: int | Mapping[str, int] = 2,
    percent: Collection[str] = (),
) -> pd.DataFrame:
    """A display table of means with confidence intervals: "mean ± half-width" per group and outcome.

    ``frame`` is long, one row per group × outcome with ``outcome``, ``mean``, ``ci_low`` and
    ``ci_high`` columns (the output of :func:`speedtrap.analysis.statistics.summarize` or
    :func:`~speedtrap.analysis.statistics.paired_differences`). ``columns`` maps the outcomes to
    show, in order, to their column titles (which should state the unit); outcomes in ``percent``
    are shares shown in percent (×100). ``digits``: decimals, one number or per outcome. The
    half-width is that of the interval (symmetric Student-t); without one (a single run) the cell
    holds the mean alone; a missing or NaN mean shows as "–". An interval from fewer than 5 values
    (``n`` column) is marked " (n=3)", one of zero width " (zero width)" (see
    :func:`speedtrap.analysis.statistics.ci_caveat`). Rows are indexed by ``by`` (at least
    one column), in their order in ``frame``.
    """
    by = list(by)
    if not by:
        raise ValueError("ci_table needs at least one grouping column in `by`")
    missing = [c for c in [*by, "outcome", "mean", "ci_low", "ci_high"] if c not in frame.columns]
    if missing:
        raise KeyError(f"ci_table: no column {missing[0]!r} (columns: {', '.join(map(str, frame.columns))})")
    unknown = [o for o in columns if o not in set(frame["outcome"])]
    if unknown:
        raise KeyError(f"ci_table: no outcome {unknown[0]!r} in the table")
    rows = frame[frame["outcome"].isin(list(columns))]
    counts = rows["n"] if "n" in rows.columns else pd.Series([None] * len(rows), index=rows.index)
    values = {
        (*key, outcome): (mean, low, high, n)
        for *key, outcome, mean, low, high, n in rows[[*by, "outcome", "mean", "ci_low", "ci_high"]]
        .assign(_n=counts)
        .itertuples(index=False, name=None)
    }
    keys = list(dict.fromkeys(map(tuple, rows[by].itertuples(index=False, name=None))))
    cells: dict[str, list[str]] = {title: [] for title in columns.values()}
    for key in keys:
        for outcome, title in columns.items():
            mean, low, high, n = values.get((*key, outcome), (math.nan, math.nan, math.nan, None))
            scale = 100.0 if outcome in percent else 1.0
            d = digits if isinstance(digits, int) else digits.get(outcome, 2)
            half = (high - low) / 2 * scale
            if not np.isfinite(mean):
                cells[title].append("–")  # no value: e.g. an empty group
            elif np.isfinite(half):
                flag = ci_flag(None if n is None or pd.isna(n) else int(n), low, high)
                cells[title].append(f"{mean * scale:.{d}f} ± {half:.{d}f}{flag}")
            else:
                cells[title].append(f"{mean * scale:.{d}f}")
    if len(by) > 1:
        index: pd.Index = pd.MultiIndex.from_tuples(keys, names=by)
    else:
        index = pd.Index([k[0] for k in keys], name=by[0])
    return pd.DataFrame(cells, index=index)
