"""``break_even``: speed-up × failure multiplier of one backend, relative to the backend as is.

For each point the simulated tasks per developer-day and $ per task are divided by those of the
reference point (speed-up 1, multiplier 1) run with the same seed (common random numbers), and
averaged over seeds with a 95% t interval. Over the map goes the break-even contour of the
analytic mean-value model (:func:`speedtrap.analysis.mean_value.break_even_grid`): the multiplier
m*(speed-up) at which the faster backend only matches the reference. The simulation's own
break-even (where the relative value crosses 1, interpolated between multipliers) is drawn too,
where the intervals resolve it (:func:`plot_map`).

Every point has the reference's price list, so its economics against the reference
(:func:`economics_table`, :mod:`speedtrap.analysis.value`, paired by seed) answer: at the
scenario's value of developer time, what is the point's net value per developer-day, above which
developer cost does it pay, and by how much could its prices rise before it stops paying?
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.colors import CenteredNorm
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from speedtrap.analysis.mean_value import break_even_grid, scope_problems
from speedtrap.analysis.statistics import caveat_suffix, mean_ci
from speedtrap.analysis.value import VALUE_COLUMNS, arm_value, paired_runs, value_sentence
from speedtrap.config.experiment import Experiment
from speedtrap.config.value import LOADED_USD_PER_DEV_HOUR
from speedtrap.experiments.canonical import Contrast, Report
from speedtrap.models.latency import simulate_summary_with_latency
from speedtrap.plots import figure_of, interval_note, save_figure

MODEL = simulate_summary_with_latency  # the summary, and each run's latency percentiles (latency.csv)
METRICS: dict[str, str] = {
    "tasks_per_dev_day": "tasks per developer-day",
    "usd_per_task": "$ per task",
}
ARTICLE_POINT = (6.0, 1.2)
"""'6x the speed at the cost of 20% more mistakes' (docs/design.md §1)."""
REFERENCE = (1.0, 1.0)
"""The backend as is: speed-up 1, failure multiplier 1."""


def _reference_runs(table: pd.DataFrame, spec: Experiment) -> pd.DataFrame:
    """The runs of the reference point, or ``ValueError`` when the design lacks it."""
    speed, mult = spec.factor_paths
    ref = table[(table[speed] == REFERENCE[0]) & (table[mult] == REFERENCE[1])]
    if ref.empty:
        raise ValueError("break_even needs the reference point (speed-up 1.0, multiplier 1.0) in its design")
    return ref


def relative_table(table: pd.DataFrame, spec: Experiment) -> pd.DataFrame:
    """Per point and metric: the mean over seeds of value / reference value (same seed), with a 95% CI."""
    speed, mult = spec.factor_paths
    ref = _reference_runs(table, spec).set_index("seed")
    rows = []
    for (s, m), group in table.groupby([speed, mult]):
        for metric in METRICS:
            ratios = group[metric].to_numpy() / ref.loc[group["seed"], metric].to_numpy()
            mean, low, high = mean_ci(ratios)
            rows.append(
                {"speedup": s, "failure_multiplier": m, "metric": metric, "relative": mean}
                | {"ci_low": low, "ci_high": high, "n": len(ratios)}
            )
    return pd.DataFrame(rows)


def point_label(speedup: float, failure_multiplier: float) -> str:
    """A point's name: "6× speed, 1.2× mistakes"."""
    return f"{speedup:g}× speed, {failure_multiplier:g}× mistakes"


def economics_table(table: pd.DataFrame, spec: Experiment) -> pd.DataFrame:
    """Per point but the reference: its economics against the reference point at the scenario's
    value of developer time (:func:`speedtrap.analysis.value.arm_value`, paired by seed on the
    design points' runs). Columns ``speedup``, ``failure_multiplier``, then
    :data:`~speedtrap.analysis.value.VALUE_COLUMNS` (net US$ per developer-day with its 95% CI, per
    developer-month, the break-even price multiple — the factor by which the point's prices, the
    reference's today, could rise before it stops paying — and the break-even developer cost)."""
    speed, mult = spec.factor_paths
    reference = int(_reference_runs(table, spec)["point"].iloc[0])
    scenario = spec.scenario
    rows = []
    for (s, m), group in table.groupby([speed, mult]):
        point = int(group["point"].iloc[0])
        if point == reference:
            continue
        pairs = paired_runs(table, "point", reference, point)
        value = arm_value(pairs, point_label(s, m), value=scenario.value, workday_s=scenario.workday_s)
        rows.append({"speedup": s, "failure_multiplier": m} | asdict(value))
    return pd.DataFrame(rows, columns=["speedup", "failure_multiplier", *VALUE_COLUMNS])


def simulated_break_even(relative: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per speed-up: the multiplier where the mean relative value crosses 1 (linear between levels;
    NaN if it does not cross within the multipliers simulated)."""
    rows = []
    better = 1.0 if metric == "tasks_per_dev_day" else -1.0
    for s, group in relative[relative["metric"] == metric].groupby("speedup"):
        g = group.sort_values("failure_multiplier")
        m, gain = g["failure_multiplier"].to_numpy(), better * (g["relative"].to_numpy() - 1.0)
        crossing = np.nan
        for i in range(len(m) - 1):
            if gain[i] >= 0 > gain[i + 1]:
                crossing = m[i] + (m[i + 1] - m[i]) * gain[i] / (gain[i] - gain[i + 1])
                break
        rows.append({"speedup": s, "metric": metric, "m_star_simulated": crossing})
    return pd.DataFrame(rows)


def _cell_edges(levels: Sequence[float], *, log: bool) -> np.ndarray:
    """Edges of the cells centred on the sorted ``levels``: midpoints between neighbours (geometric
    on a log axis), the outer edges as far out as the nearest inner one (a lone level: ×/÷ 1.5 on a
    log axis, ± 10% on a linear one)."""
    v = np.asarray(levels, dtype=float)
    t = np.log(v) if log else v
    if len(t) == 1:
        half = np.log(1.5) if log else max(0.1 * abs(t[0]), 0.05)
        edges = np.array([t[0] - half, t[0] + half])
    else:
        mids = (t[:-1] + t[1:]) / 2
        edges = np.concatenate([[2 * t[0] - mids[0]], mids, [2 * t[-1] - mids[-1]]])
    return np.exp(edges) if log else edges


def crossing_resolved(relative: pd.DataFrame, metric: str) -> pd.DataFrame:
    """:func:`simulated_break_even` per speed-up with ``resolved``: whether the 95% CI of at least
    one of the two cells around the crossing excludes 1 on its side (the cell below better than the
    reference, or the cell above worse). Unresolved crossings rest on intervals that all include 1."""
    better = 1.0 if metric == "tasks_per_dev_day" else -1.0
    cells = relative[relative["metric"] == metric].set_index(["speedup", "failure_multiplier"])
    rows = simulated_break_even(relative, metric)
    resolved = []
    for s, m_star in zip(rows["speedup"], rows["m_star_simulated"], strict=True):
        if not np.isfinite(m_star):
            resolved.append(False)
            continue
        levels = np.sort(cells.loc[s].index.to_numpy(dtype=float))
        below, above = levels[levels <= m_star], levels[levels > m_star]
        low = cells.loc[(s, below[-1])] if len(below) else None
        high = cells.loc[(s, above[0])] if len(above) else None
        gain_low = low is not None and min(better * (low["ci_low"] - 1), better * (low["ci_high"] - 1)) > 0
        loss_high = (
            high is not None and max(better * (high["ci_low"] - 1), better * (high["ci_high"] - 1)) < 0
        )
        resolved.append(bool(gain_low or loss_high))
    return rows.assign(resolved=resolved)


def plot_map(relative: pd.DataFrame, contour: pd.DataFrame, metric: str, ax: Axes) -> None:
    """Map of the relative ``metric`` on numeric axes, with the analytic and simulated break-even lines.

    Cells are drawn at their true coordinates (``pcolormesh``): speed-up on a log axis with cell
    edges at the geometric midpoints between levels, failure multiplier on a linear axis with edges
    at the midpoints, so that the lines through the levels sit where they belong. Each cell shows
    its mean ratio over the paired runs and, below it, the 95% t-interval (paired by seed); the
    colour scale is centred on 1 (the reference) and symmetric around it. The article's point
    (6×, 1.2×) is outlined, its star on the outline's corner, so that its value stays readable.

    The simulated break-even (where the mean ratio crosses 1, linear between multipliers) is drawn
    only at the speed-ups where the crossing is resolved (:func:`crossing_resolved`: a neighbouring
    cell's 95% CI excludes 1 on its side); the legend says how many runs each cell averages.
    """
    cells = relative[relative["metric"] == metric]
    grid = cells.pivot(index="failure_multiplier", columns="speedup", values="relative").sort_index()
    grid = grid.reindex(columns=sorted(grid.columns))
    low = cells.pivot(index="failure_multiplier", columns="speedup", values="ci_low").reindex_like(grid)
    high = cells.pivot(index="failure_multiplier", columns="speedup", values="ci_high").reindex_like(grid)
    speeds = grid.columns.to_numpy(dtype=float)
    mults = grid.index.to_numpy(dtype=float)
    x_edges, y_edges = _cell_edges(speeds, log=True), _cell_edges(mults, log=False)
    values = grid.to_numpy(dtype=float)
    spread = float(np.nanmax(np.abs(values - 1.0))) if np.isfinite(values).any() else 0.0
    norm = CenteredNorm(vcenter=1.0, halfrange=max(spread, 0.01))
    cmap = "RdBu" if metric == "tasks_per_dev_day" else "RdBu_r"
    mesh = ax.pcolormesh(x_edges, y_edges, np.ma.masked_invalid(values), cmap=cmap, norm=norm, shading="flat")
    label = f"{METRICS[metric]} relative to 1× speed, 1.0× mistakes (ratio, ×)"
    bar = figure_of(ax).colorbar(mesh, ax=ax, label=label)
    bar.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.2f}×"))
    ax.set_xscale("log")
    ax.set_xlim(x_edges[0], x_edges[-1])
    ax.set_ylim(y_edges[0], y_edges[-1])
    ax.xaxis.set_major_locator(FixedLocator(list(speeds)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}×"))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_yticks(list(mults), [f"{m:.1f}×" if round(m, 1) == m else f"{m:g}×" for m in mults])
    for (j, i), value in np.ndenumerate(values):
        if np.isfinite(value):
            lo, hi = low.iat[j, i], high.iat[j, i]
            colour = "white" if abs(norm(value) - 0.5) > 0.3 else "black"
            _annotate_cell(ax, (speeds[i], y_edges[j + 1]), value, lo, hi, colour)
    handles: list[Artist] = []
    if not contour.empty:
        analytic = contour[contour["metric"] == metric].set_index("speedup")["m_star"].reindex(speeds)
        finite = np.isfinite(analytic.to_numpy(dtype=float))
        (line,) = ax.plot(
            speeds[finite],
            analytic.to_numpy()[finite],
            color="black",
            lw=2,
            label="break-even, analytic model",
        )
        handles.append(line)
    sim = crossing_resolved(relative, metric).set_index("speedup").reindex(speeds)
    shown = sim["m_star_simulated"].where(sim["resolved"].fillna(False).astype(bool)).to_numpy(dtype=float)
    n = sorted(set(cells["n"].astype(int)))
    runs = f"{n[0]}" if len(n) == 1 else f"{n[0]}–{n[-1]}"
    (line,) = ax.plot(
        speeds,
        shown,
        color="black",
        ls="--",
        lw=1.5,
        marker="o",
        ms=4,
        label=f"break-even, simulation (n={runs} per cell; where a neighbouring cell's 95% CI excludes 1)",
    )
    handles.append(line)
    article = _article_cell(speeds, mults, x_edges, y_edges)
    if article is not None:
        (x0, x1), (y0, y1) = article
        ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, ec="gold", lw=2.5, zorder=3))
        star_at = (x0, y1)
    else:
        star_at = ARTICLE_POINT
    (star,) = ax.plot(
        *star_at,
        marker="*",
        ms=16,
        mfc="gold",
        mec="black",
        mew=0.8,
        ls="none",
        zorder=4,
        clip_on=False,
        label="6× speed, 1.2× mistakes (the article's bargain, outlined)",
    )
    handles.append(star)
    brackets = interval_note("[brackets]", cells["n"], paired=True)
    handles.append(Line2D([], [], ls="none", label=f"cells: mean ratio; {brackets}"))
    ax.set_xlabel("decode speed-up (×, log scale)")
    ax.set_ylabel("failure multiplier (×)")
    ax.set_title(METRICS[metric])
    ax.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.13),
        ncol=1,
        fontsize="small",
        frameon=False,
    )


def _annotate_cell(
    ax: Axes, top: tuple[float, float], value: float, lo: float, hi: float, colour: str
) -> None:
    """A cell's mean ratio and, under it, its 95% interval ("reference" for a zero-width one: the
    reference point is 1 by construction), written in the upper part of the cell whose top centre
    is ``top``, clear of break-even lines near the middle."""
    ax.annotate(
        f"{value:.2f}", top, xytext=(0, -4), textcoords="offset points", ha="center", va="top", color=colour
    )
    if np.isfinite(lo) and np.isfinite(hi):
        below = "reference" if hi - lo == 0 else f"[{lo:.2f}, {hi:.2f}]"
        ax.annotate(
            below,
            top,
            xytext=(0, -17),
            textcoords="offset points",
            ha="center",
            va="top",
            fontsize=7,
            color=colour,
        )


def _article_cell(
    speeds: np.ndarray, mults: np.ndarray, x_edges: np.ndarray, y_edges: np.ndarray
) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """The x and y edges of the article's cell (:data:`ARTICLE_POINT`), if the design has it."""
    i = np.flatnonzero(np.isclose(speeds, ARTICLE_POINT[0]))
    j = np.flatnonzero(np.isclose(mults, ARTICLE_POINT[1]))
    if not len(i) or not len(j):
        return None
    return (x_edges[i[0]], x_edges[i[0] + 1]), (y_edges[j[0]], y_edges[j[0] + 1])


def contrasts(table: pd.DataFrame, spec: Experiment) -> list[Contrast]:
    """The differences split into seed and behavioural intervals under an ensemble: every cell
    against the backend as it is (speed-up 1, multiplier 1), on tasks per developer-day and $ per task."""
    speed, mult = spec.factor_paths
    return [
        Contrast(
            (speed, mult),
            REFERENCE,
            ("tasks_per_dev_day", "usd_per_task"),
            label="the backend as is (speed-up × failure multiplier 1 × 1)",
            said=(ARTICLE_POINT, (2.0, 1.0), (6.0, 1.0), (1.0, 1.2)),
        )
    ]


def analyze(table: pd.DataFrame, spec: Experiment, out: Path) -> Report:
    """``relative.csv``, ``analytic.csv``, ``economics.csv`` and the two maps ``break_even``
    under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    relative = relative_table(table, spec)
    speeds = sorted(relative["speedup"].unique())
    backend = spec.factor_paths[0].split(".")[1]
    # The analytic model follows simpler rules than the calibrated defaults: its contour is drawn
    # only for a scenario inside its scope (speedtrap.analysis.mean_value.scope_problems).
    if scope_problems(spec.scenario):
        contour = pd.DataFrame(columns=["speedup", "metric", "m_star"])
    else:
        contour = break_even_grid(spec.scenario, speeds, baseline=backend)
    economics = economics_table(table, spec)
    files = [out / "relative.csv", out / "analytic.csv", out / "economics.csv"]
    relative.to_csv(files[0], index=False)
    contour.to_csv(files[1], index=False)
    economics.to_csv(files[2], index=False)
    fig, axes = plt.subplots(1, 2, figsize=(15, 5.5), layout="constrained")
    for ax, metric in zip(axes, METRICS, strict=True):
        plot_map(relative, contour, metric, ax)
    files += save_figure(fig, out, "break_even")
    plt.close(fig)
    text = finding(relative, contour, economics, spec.scenario.value.usd_per_dev_hour, backend=backend)
    return Report(text, files)


def finding(
    relative: pd.DataFrame,
    contour: pd.DataFrame,
    economics: pd.DataFrame | None = None,
    usd_per_dev_hour: float = LOADED_USD_PER_DEV_HOUR,
    *,
    backend: str = "the backend",
) -> str:
    """The article's bargain placed on the map, in words (with its economics against ``backend`` as
    is at ``usd_per_dev_hour`` when ``economics`` is given)."""
    s, m = ARTICLE_POINT
    at = relative[(relative["speedup"] == s) & (relative["failure_multiplier"] == m)].set_index("metric")
    lines = []
    if not at.empty:
        tasks, cost = at.loc["tasks_per_dev_day"], at.loc["usd_per_task"]
        lines.append(
            f"6× the speed at 20% more mistakes, simulated: {100 * (tasks['relative'] - 1):+.1f}% tasks per "
            f"developer-day (95% CI {100 * (tasks['ci_low'] - 1):+.1f}% to "
            f"{100 * (tasks['ci_high'] - 1):+.1f}%"
            f"{caveat_suffix(int(tasks['n']), tasks['ci_low'], tasks['ci_high'])}), "
            f"{100 * (cost['relative'] - 1):+.1f}% $ per task."
        )
    if economics is not None:
        at_point = economics[(economics["speedup"] == s) & (economics["failure_multiplier"] == m)]
        for row in at_point.to_dict("records"):
            lines.append(
                "Same price: "
                + value_sentence(row, against=f"{backend} as is", usd_per_dev_hour=usd_per_dev_hour)
            )
    if contour.empty:
        lines.append(
            "No analytic contour: the scenario's rules (effort-sized tasks, attention by expected wait) are "
            "outside the analytic model's scope; the simulated break-even is the dashed line."
        )
    for metric, label in METRICS.items():
        if contour.empty:
            break
        rows = contour[contour["metric"] == metric].sort_values("speedup")
        lines.append(
            f"Analytic break-even multiplier m* for {label} (same price): "
            + ", ".join(f"{row.speedup:g}× speed → {row.m_star:.2f}" for row in rows.itertuples())
            + "."
        )
    return "\n".join(lines)
