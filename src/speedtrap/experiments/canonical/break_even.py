"""``break_even``: speed-up × failure multiplier of one backend, relative to the backend as is.

For each point the simulated tasks per developer-day and $ per task are divided by those of the
reference point (speed-up 1, multiplier 1) run with the same seed (common random numbers), and
averaged over seeds with a 95% t interval. Over the map goes the break-even contour of the
analytic mean-value model (:func:`speedtrap.analysis.mean_value.break_even_grid`): the multiplier
m*(speed-up) at which the faster backend only matches the reference. The simulation's own
break-even (where the relative value crosses 1, interpolated between multipliers) is drawn too.

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
import seaborn as sns
from matplotlib.axes import Axes

from speedtrap.analysis.mean_value import break_even_grid, scope_problems
from speedtrap.analysis.statistics import caveat_suffix, mean_ci
from speedtrap.analysis.value import VALUE_COLUMNS, arm_value, paired_runs, value_sentence
from speedtrap.config.experiment import Experiment
from speedtrap.config.value import LOADED_USD_PER_DEV_HOUR
from speedtrap.experiments.canonical import Report
from speedtrap.models.workflow import simulate_summary
from speedtrap.plots import save_figure

MODEL = simulate_summary
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


def _cell_position(values: Sequence[float], x: float) -> float:
    """Heatmap coordinate of ``x`` among the sorted level ``values`` (cell centres at i + 0.5)."""
    return float(np.interp(x, values, np.arange(len(values)) + 0.5))


def plot_map(relative: pd.DataFrame, contour: pd.DataFrame, metric: str, ax: Axes) -> None:
    """Heatmap of the relative ``metric`` with the analytic and simulated break-even lines."""
    grid = relative[relative["metric"] == metric].pivot(
        index="failure_multiplier", columns="speedup", values="relative"
    )
    speeds, mults = list(grid.columns), list(grid.index)
    label = f"{METRICS[metric]} relative to 1× speed, 1.0× mistakes"
    cmap = "RdBu" if metric == "tasks_per_dev_day" else "RdBu_r"
    sns.heatmap(grid, ax=ax, cmap=cmap, center=1.0, annot=True, fmt=".2f", cbar_kws={"label": label})
    ax.invert_yaxis()
    xs = [_cell_position(speeds, s) for s in speeds]
    if not contour.empty:
        analytic = contour[contour["metric"] == metric].set_index("speedup").loc[speeds, "m_star"].to_numpy()
        finite = np.isfinite(analytic)
        ys = [_cell_position(mults, min(max(m, mults[0]), mults[-1])) for m in analytic[finite]]
        ax.plot(np.array(xs)[finite], ys, color="black", lw=2, label="break-even, analytic model")
    sim = (
        simulated_break_even(relative, metric).set_index("speedup").loc[speeds, "m_star_simulated"].to_numpy()
    )
    ok = np.isfinite(sim)
    sim_ys = [_cell_position(mults, m) for m in sim[ok]]
    ax.plot(np.array(xs)[ok], sim_ys, color="black", ls="--", lw=1.5, label="break-even, simulation")
    star = (_cell_position(speeds, ARTICLE_POINT[0]), _cell_position(mults, ARTICLE_POINT[1]))
    ax.plot(
        *star, marker="*", ms=14, mfc="none", mec="gold", mew=2, ls="none", label="6× speed, 1.2× mistakes"
    )
    ax.set_xlabel("decode speed-up (×)")
    ax.set_ylabel("failure multiplier (×)")
    ax.set_title(METRICS[metric])
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=3, fontsize="small", frameon=False)


def analyze(table: pd.DataFrame, spec: Experiment, out: Path) -> Report:
    """``relative.csv``, ``analytic.csv``, ``economics.csv`` and the two heatmaps ``break_even``
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
