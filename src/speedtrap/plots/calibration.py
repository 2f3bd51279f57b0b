"""The calibration targets as simulated / published, with their tolerances."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from speedtrap.plots.common import interval_note

_CALIBRATION_FLOOR = 0.1
"""Lowest simulated / published ratio drawn by :func:`plot_calibration`; intervals reaching below
(zero or negative lower bounds of small-sample intervals) are cut there."""


def plot_calibration(table: pd.DataFrame, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """Each calibration target as simulated / published (log scale, 1 = the published value): the
    simulated mean with its 95% t-interval over replications (whiskers; the legend gives their
    number, from an ``n`` column when there is one), the range the target's
    pre-declared tolerance accepts (grey band), pass in blue and miss in red. ``table`` is
    :func:`speedtrap.validation.workflow.validate_workflow`'s (columns ``id``, ``published``,
    ``simulated``, ``ci_low``, ``ci_high``, ``accept_low``, ``accept_high``, ``passed``)."""
    rows = table.reset_index(drop=True)
    if ax is None:
        _, ax = plt.subplots(figsize=(7.0, 0.38 * len(rows) + 1.2), layout="constrained")
    published = rows["published"].astype(float)
    scale = published.where(published != 0)
    colours = sns.color_palette("colorblind")
    y = np.arange(len(rows))[::-1]
    for yi, (_, row), s in zip(y, rows.iterrows(), scale, strict=True):
        low, high = row["accept_low"] / s, row["accept_high"] / s
        ax.fill_betweenx([yi - 0.35, yi + 0.35], max(low, _CALIBRATION_FLOOR), high, color="0.88", lw=0)
        colour = colours[0] if row["passed"] else colours[3]
        mean = row["simulated"] / s
        if math.isfinite(row["ci_low"]) and math.isfinite(row["ci_high"]):
            lo, hi = max(row["ci_low"] / s, _CALIBRATION_FLOOR), row["ci_high"] / s
            ax.plot([lo, hi], [yi, yi], color=colour, lw=1.5)
        ax.plot([mean], [yi], "o", color=colour, ms=6)
    ax.axvline(1.0, color="0.3", lw=0.8, ls="--")
    ax.set_xscale("log")
    shown = [float(v) for line in ax.lines for v in np.asarray(line.get_xdata(), dtype=float)] + [0.5, 2.0]
    ax.set_xlim(max(min(shown) / 1.3, _CALIBRATION_FLOOR), max(shown) * 1.3)
    ticks = [2.0**k for k in range(-8, 9) if ax.get_xlim()[0] <= 2.0**k <= ax.get_xlim()[1]]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"×{v:g}"))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_yticks(y, rows["id"])
    ax.set_xlabel("simulated / published (log scale; grey band: what the tolerance accepts)")
    counts = rows["n"] if "n" in rows.columns else []
    handles = [
        plt.Line2D([], [], marker="o", color=colours[0], ls="", label="pass"),
        plt.Line2D([], [], marker="o", color=colours[3], ls="", label="miss"),
        plt.Line2D([], [], color="0.3", lw=1.5, label=interval_note("whiskers", counts, of="replications")),
    ]
    ax.legend(handles=handles, loc="upper right", frameon=False, fontsize="small")
    sns.despine(ax=ax)
    if title:
        ax.set_title(title)
    return ax
