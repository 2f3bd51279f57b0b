"""Figures of a history-matching calibration (``experiments/calibrate.py``): the share of the
parameter space ruled out wave by wave, each wave's emulators against runs they were not fitted to,
and the non-implausible region as a pairs plot. Pure matplotlib over the tables of
:func:`speedtrap.experiments.calibration.run_history_matching`; no simulation."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

__all__ = ["plot_emulator_predictions", "plot_non_implausible_pairs", "plot_ruled_out"]

Range = tuple[float, float, str]
"""A parameter's ``(low, high, scale)``; scale ``linear`` or ``log``."""


def plot_ruled_out(summary: pd.DataFrame) -> Figure:
    """The share of the parameter space ruled out after each wave (``summary``: one row per wave
    with ``wave``, ``ruled_out_share``, ``remaining_share``, ``remaining_se``, ``non_implausible``):
    bars of the share ruled out (%), and the share left on a log scale (where waves that rule out
    99% and 99.99% differ), both with ±2 standard errors of the estimate."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.9), layout="constrained")
    waves = summary["wave"].to_numpy(dtype=int)
    share = 100.0 * summary["ruled_out_share"].to_numpy(dtype=float)
    remaining = summary["remaining_share"].to_numpy(dtype=float)
    err = 2.0 * summary["remaining_se"].to_numpy(dtype=float)
    left.bar(waves, share, color="#4c72b0", width=0.6)
    left.errorbar(
        waves, share, yerr=100.0 * err, fmt="none", ecolor="black", capsize=4, label="±2 standard errors"
    )
    for w, s_ in zip(waves, share, strict=True):
        left.annotate(f"{s_:.2f}%", (w, s_), xytext=(0, 4), textcoords="offset points", ha="center")
    left.set_ylim(0, 112)
    left.set_ylabel("parameter space ruled out (%)")
    left.set_title("Ruled out, cumulative")
    left.legend(loc="lower right", fontsize="small")
    shown = np.where(remaining > 0, remaining, np.nan)
    right.errorbar(waves, shown, yerr=np.minimum(err, 0.999 * shown), fmt="o-", capsize=4, color="#4c72b0")
    for w, r, n_left in zip(waves, remaining, summary["non_implausible"], strict=True):
        label = f"{int(n_left)} left" if r > 0 else "none left"
        right.annotate(
            label,
            (w, r if r > 0 else np.nanmin(shown) if np.isfinite(shown).any() else 1.0),
            xytext=(6, 4),
            textcoords="offset points",
            fontsize="small",
        )
    if np.isfinite(shown).any():
        right.set_yscale("log")
    right.set_ylabel("share of the space left (non-implausible)")
    right.set_title("Left after each wave (candidates kept)")
    for ax in (left, right):
        ax.set_xticks(waves, [f"wave {w}" for w in waves])
    return fig


def plot_emulator_predictions(
    check: pd.DataFrame,
    targets: Sequence[str] | None = None,
    *,
    bands: Mapping[str, tuple[float, float]] | None = None,
    columns: int = 4,
) -> Figure:
    """One panel per target: each wave's emulator prediction (± 3 sd of the expected output) against
    the simulated mean of runs it was not fitted to (``check``: rows with ``wave``, ``target``,
    ``predicted``, ``sd``, ``simulated``, ``inside``), the identity line, per wave the share of runs
    within 3 sd (seed noise included) and, from ``bands`` (target → value, sd of obs + discrepancy),
    the target's value ± 3 sd on both axes."""
    names = list(dict.fromkeys(check["target"])) if targets is None else list(targets)
    if not names:
        raise ValueError("no targets to plot")
    rows = math.ceil(len(names) / columns)
    fig, axes = plt.subplots(
        rows, columns, figsize=(3.6 * columns, 3.3 * rows), layout="constrained", squeeze=False
    )
    colors = plt.get_cmap("tab10")
    for ax, name in zip(axes.flat, names, strict=False):
        part = check[check["target"] == name].dropna(subset=["predicted", "simulated"])
        notes = []
        for i, (wave, rows_) in enumerate(part.groupby("wave")):
            ax.errorbar(
                rows_["simulated"],
                rows_["predicted"],
                yerr=3.0 * rows_["sd"],
                fmt="o",
                ms=3,
                alpha=0.7,
                color=colors(i),
                label=f"wave {wave}",
            )
            notes.append(f"w{wave}: {100 * rows_['inside'].mean():.0f}% in 3 sd")
        values = part[["simulated", "predicted"]].to_numpy(dtype=float)
        if len(values):
            lo, hi = float(np.nanmin(values)), float(np.nanmax(values))
            ax.plot([lo, hi], [lo, hi], color="grey", lw=1, ls="--")
        if bands is not None and name in bands:
            value, sd = bands[name]
            ax.axvspan(value - 3 * sd, value + 3 * sd, color="#dd8452", alpha=0.15, lw=0)
            ax.axhspan(value - 3 * sd, value + 3 * sd, color="#dd8452", alpha=0.15, lw=0)
            ax.axvline(value, color="#dd8452", lw=1)
        ax.set_title(name, fontsize="medium")
        ax.set_xlabel("simulated (mean of runs)")
        ax.set_ylabel("emulated (± 3 sd)")
        if notes:
            ax.text(0.02, 0.98, "\n".join(notes), transform=ax.transAxes, va="top", fontsize="x-small")
            ax.legend(fontsize="x-small", loc="lower right")
    for ax in list(axes.flat)[len(names) :]:
        ax.set_visible(False)
    fig.suptitle("Emulators against runs they were not fitted to (next wave's design, final check)")
    return fig


def constrained_order(points: pd.DataFrame, ranges: Mapping[str, Range]) -> list[str]:
    """The parameters of ``ranges`` ordered by how narrow the points' spread is on the unit scale
    (standard deviation of their unit coordinates; 1/√12 ≈ 0.29 for a uniform spread): the most
    constrained first."""
    spreads = {}
    for name, (low, high, scale) in ranges.items():
        x = points[name].to_numpy(dtype=float)
        u = np.log(x / low) / math.log(high / low) if scale == "log" else (x - low) / (high - low)
        spreads[name] = float(np.std(u)) if len(u) > 1 else 0.0
    return sorted(spreads, key=lambda n: spreads[n])


def plot_non_implausible_pairs(
    points: pd.DataFrame, ranges: Mapping[str, Range], *, shown: int = 6, title: str | None = None
) -> Figure:
    """A pairs plot of non-implausible points (one column per parameter path) over the ``shown``
    most constrained parameters (:func:`constrained_order`): histograms on the diagonal, scatter
    below it, every axis spanning the parameter's whole range (log axes for log ranges)."""
    if points.empty:
        raise ValueError("no non-implausible points to plot")
    names = constrained_order(points, ranges)[:shown]
    k = len(names)
    fig, axes = plt.subplots(k, k, figsize=(2.1 * k + 1, 2.1 * k + 1), layout="constrained", squeeze=False)
    for i, row_name in enumerate(names):
        for j, col_name in enumerate(names):
            ax = axes[i, j]
            low, high, scale = ranges[col_name]
            if j > i:
                ax.set_visible(False)
                continue
            x = points[col_name].to_numpy(dtype=float)
            if scale == "log":
                ax.set_xscale("log")
            if i == j:
                bins = np.geomspace(low, high, 16) if scale == "log" else np.linspace(low, high, 16)
                ax.hist(x, bins=bins, color="#4c72b0")
                ax.set_yticks([])
            else:
                y = points[row_name].to_numpy(dtype=float)
                ylow, yhigh, yscale = ranges[row_name]
                ax.scatter(x, y, s=3, alpha=0.4, color="#4c72b0")
                if yscale == "log":
                    ax.set_yscale("log")
                ax.set_ylim(ylow, yhigh)
            ax.set_xlim(low, high)
            if i == k - 1:
                ax.set_xlabel(".".join(col_name.split(".")[-2:]), fontsize="small")
            if j == 0 and i > 0:
                ax.set_ylabel(".".join(row_name.split(".")[-2:]), fontsize="small")
            ax.tick_params(labelsize="x-small")
    fig.suptitle(
        title or f"Non-implausible region: {len(points)} points, the {k} most constrained parameters"
    )
    return fig
