"""Global sensitivity figures: Sobol' indices, the Morris screening, and emulated indices against
a direct study's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes

from speedtrap.plots.common import ERRORBAR_COLOUR, add_legend_entries, errorbar_handle, figure_of


def _one_outcome(indices: pd.DataFrame, outcome: str | None) -> pd.DataFrame:
    """The rows of one outcome (tables from ``run_sobol`` / ``run_morris`` may hold several)."""
    if "outcome" not in indices.columns:
        if outcome is not None:
            raise ValueError("these indices have no outcome column; drop outcome=")
        return indices
    outcomes = list(dict.fromkeys(indices["outcome"]))
    if outcome is None:
        if len(outcomes) > 1:
            listed = ", ".join(outcomes)
            raise ValueError(f"the indices hold several outcomes ({listed}); pick one with outcome=")
        return indices
    if outcome not in outcomes:
        raise ValueError(f"no outcome {outcome!r} in the indices (outcomes: {', '.join(outcomes)})")
    return indices[indices["outcome"] == outcome]


def _index_errors(rows: pd.DataFrame, column: str) -> np.ndarray:
    """Error bar lengths of an index: its ``_conf`` half-width, or (2 × rows) distances to its
    ``_low`` / ``_high`` interval bounds (emulated indices' percentile intervals)."""
    if f"{column}_low" in rows.columns:
        value = rows[column].to_numpy(dtype=float)
        below = value - rows[f"{column}_low"].to_numpy(dtype=float)
        above = rows[f"{column}_high"].to_numpy(dtype=float) - value
        return np.clip(np.vstack([below, above]), 0.0, None)
    return rows[f"{column}_conf"].to_numpy(dtype=float)


def plot_sensitivity(
    indices: pd.DataFrame,
    ax: Axes | None = None,
    *,
    outcome: str | None = None,
    labels: Mapping[str, str] | None = None,
    title: str | None = None,
    confidence: float = 0.95,
) -> Axes:
    """Horizontal bars of first-order (S1) and total (ST) Sobol' indices per factor, sorted by ST
    (largest on top), with the confidence half-widths (``S1_conf``, ``ST_conf``) as error bars.

    ``indices`` has the columns of :func:`speedtrap.analysis.sensitivity.sobol_indices` (and an
    ``outcome`` column when it comes from ``run_sobol``: pick one with ``outcome``), or those of
    :func:`speedtrap.analysis.emulator.emulated_sobol` (interval bounds ``S1_low``/``S1_high``, …,
    drawn as they are). ``labels`` maps
    factor paths to shorter names. Indices are shares of the output variance, drawn in %;
    ``confidence`` is the level the half-widths were computed at (SALib's bootstrap; the legend
    says so).
    """
    rows = _one_outcome(indices, outcome).sort_values("ST", ascending=False, ignore_index=True)
    names = [labels.get(f, f) if labels else f for f in rows["factor"]]
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 1.0 + 0.45 * len(rows)), layout="constrained")
    y = np.arange(len(rows))
    colors = sns.color_palette("colorblind", 2)
    for offset, (column, label, color) in enumerate(
        [("ST", "total (ST)", colors[0]), ("S1", "first order (S1)", colors[1])]
    ):
        ax.barh(
            y + (offset - 0.5) * 0.38,
            100.0 * rows[column].to_numpy(dtype=float),
            height=0.38,
            xerr=100.0 * _index_errors(rows, column),
            color=color,
            label=label,
            error_kw={"ecolor": ERRORBAR_COLOUR, "elinewidth": 0.8, "capsize": 2},
        )
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.axvline(0.0, color="#999999", linewidth=0.8)
    ax.set_xlabel("Sobol' index (% of output variance)")
    note = f"error bars: {100 * confidence:g}% bootstrap interval"
    add_legend_entries(
        ax, [errorbar_handle(note, horizontal=True)], loc="best", frameon=False, fontsize="small"
    )
    sns.despine(ax=ax, left=True)
    if title:
        ax.set_title(title)
    return ax


_LABEL_OFFSET = (4.0, 4.0)  # points right and above a marker, where a label goes when it has room
_LABEL_LINE = 10.0  # points between stacked labels (the "small" font is ≈8 pt)
_CHAR_WIDTH = 5.0  # points per character of a "small" label, a generous estimate


def _label_offsets(
    ax: Axes, xs: np.ndarray, ys: np.ndarray, names: Sequence[str]
) -> list[tuple[float, float]]:
    """Offsets (points) for the labels of markers at ``xs``, ``ys`` such that no two labels overlap:
    each goes right and above its marker unless an earlier one (placed from the top down) is there,
    then one line higher or lower, two lines, … until it fits inside the axes. Positions are taken at
    the axes' size as the figure is laid out now (later content can still move them a little)."""
    fig = figure_of(ax)
    fig.draw_without_rendering()  # lay the figure out first (constrained layout resizes the axes)
    points_per_px = 72.0 / fig.dpi
    anchors = ax.transData.transform(np.column_stack([xs, ys])) * points_per_px
    bottom, top = ax.get_window_extent().y0 * points_per_px, ax.get_window_extent().y1 * points_per_px
    placed: list[tuple[float, float, float, float]] = []  # label boxes: left, bottom, right, top
    offsets: list[tuple[float, float]] = [_LABEL_OFFSET] * len(names)
    steps = [0] + [k for j in range(1, 2 * len(names) + 1) for k in (j, -j)]  # 0, +1, −1, +2, −2, …
    for i in sorted(range(len(names)), key=lambda k: (-anchors[k][1], anchors[k][0])):
        x0, y0 = anchors[i]
        dx = _LABEL_OFFSET[0]
        width = _CHAR_WIDTH * len(names[i])
        choice = None
        for step in steps:
            dy = _LABEL_OFFSET[1] + step * _LABEL_LINE
            box = (x0 + dx, y0 + dy, x0 + dx + width, y0 + dy + _LABEL_LINE)
            if box[1] < bottom or box[3] > top:  # outside the axes: over tick labels or the title
                continue
            if not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in placed):
                choice = (box, dy)
                break
        if choice is None:  # crowded everywhere: the usual place
            dy = _LABEL_OFFSET[1]
            choice = ((x0 + dx, y0 + dy, x0 + dx + width, y0 + dy + _LABEL_LINE), dy)
        placed.append(choice[0])
        offsets[i] = (dx, choice[1])
    return offsets


def plot_morris(
    indices: pd.DataFrame,
    ax: Axes | None = None,
    *,
    outcome: str | None = None,
    labels: Mapping[str, str] | None = None,
    unit: str = "",
    title: str | None = None,
    confidence: float = 0.95,
) -> Axes:
    """Morris screening: σ against μ* per factor, labelled, with μ*'s confidence half-width (at
    ``confidence``, SALib's bootstrap; the legend says so) as a horizontal error bar.

    Factors far right matter; factors high up act nonlinearly or through interactions (the line
    σ = μ* is drawn for reference). ``indices`` has the columns of
    :func:`speedtrap.analysis.sensitivity.morris_indices`; both measures are in the outcome's unit
    (``unit``, e.g. "tasks per developer-day") per full range of the factor.
    """
    rows = _one_outcome(indices, outcome)
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4.5), layout="constrained")
    mu_star = rows["mu_star"].to_numpy(dtype=float)
    sigma = rows["sigma"].to_numpy(dtype=float)
    ax.errorbar(
        mu_star,
        sigma,
        xerr=rows["mu_star_conf"].to_numpy(dtype=float),
        fmt="o",
        color=sns.color_palette("colorblind", 1)[0],
        ecolor="#777777",
        elinewidth=0.8,
        capsize=2,
        label=f"μ* with its {100 * confidence:g}% bootstrap interval",
    )
    top = float(np.nanmax(np.r_[mu_star, sigma, 0.0])) * 1.1 or 1.0
    ax.plot([0.0, top], [0.0, top], linestyle="--", color="#999999", linewidth=0.8, label="σ = μ*")
    ax.set_xlim(left=0.0)
    ax.set_ylim(bottom=0.0)
    names = [labels.get(f, f) if labels else f for f in rows["factor"]]
    for (x, s), name, (dx, dy) in zip(
        zip(mu_star, sigma, strict=True), names, _label_offsets(ax, mu_star, sigma, names), strict=True
    ):
        moved = (dx, dy) != _LABEL_OFFSET
        ax.annotate(
            name,
            (x, s),
            xytext=(dx, dy),
            textcoords="offset points",
            fontsize="small",
            arrowprops={"arrowstyle": "-", "color": "#aaaaaa", "linewidth": 0.6} if moved else None,
        )
    per = f" ({unit} per factor range)" if unit else " (per factor range)"
    ax.set_xlabel("μ*, mean |elementary effect|" + per)
    ax.set_ylabel("σ of elementary effects" + per)
    ax.legend(loc="upper left", frameon=False, fontsize="small")
    sns.despine(ax=ax)
    if title:
        ax.set_title(title)
    return ax


def plot_emulator_check(
    comparison: pd.DataFrame,
    ax: Axes | None = None,
    *,
    outcome: str | None = None,
    labels: Mapping[str, str] | None = None,
    title: str | None = None,
    confidence: float = 0.95,
) -> Axes:
    """Emulated Sobol' indices against a direct study's, per factor (S1 and ST as two marker
    shapes), in % of the output variance: the direct index with its half-width (horizontal bars,
    SALib's bootstrap at ``confidence``), the emulated one with its percentile interval (vertical
    bars), the line of agreement, and in the lower right corner the indices whose two intervals do
    not overlap.

    ``comparison`` is :func:`speedtrap.experiments.sensitivity.compare_direct`'s table (pick one
    outcome with ``outcome`` when it holds several); ``labels`` maps factor paths to shorter names.
    """
    rows = _one_outcome(comparison, outcome)
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 5.0), layout="constrained")
    colours = sns.color_palette("colorblind", 2)
    top = 0.0
    names: list[str] = []  # the indices whose two intervals do not overlap
    for (key, name, marker), colour in zip(
        [("ST", "total (ST)", "o"), ("S1", "first order (S1)", "s")], colours, strict=True
    ):
        direct = 100.0 * rows[f"direct_{key}"].to_numpy(dtype=float)
        xerr = 100.0 * rows[f"direct_{key}_conf"].to_numpy(dtype=float)
        emulated = 100.0 * rows[f"emulated_{key}"].to_numpy(dtype=float)
        low = 100.0 * rows[f"emulated_{key}_low"].to_numpy(dtype=float)
        high = 100.0 * rows[f"emulated_{key}_high"].to_numpy(dtype=float)
        yerr = np.clip(np.vstack([emulated - low, high - emulated]), 0.0, None)
        ax.errorbar(
            direct,
            emulated,
            xerr=xerr,
            yerr=yerr,
            fmt=marker,
            color=colour,
            ecolor=colour,
            elinewidth=0.8,
            capsize=2,
            markersize=5,
            label=name,
        )
        top = max(top, float(np.nanmax(np.r_[direct + xerr, high, 0.0])))
        apart = ~rows[f"{key}_overlap"].to_numpy(dtype=bool)
        names.extend(f"{labels.get(f, f) if labels else f} ({key})" for f in rows["factor"][apart])
    top = top * 1.05 or 1.0
    ax.plot([0.0, top], [0.0, top], linestyle="--", color="#999999", linewidth=0.8, label="emulated = direct")
    ax.set_xlim(min(0.0, ax.get_xlim()[0]), top)
    ax.set_ylim(min(0.0, ax.get_ylim()[0]), top)
    ax.set_xlabel(f"direct Sobol' index (% of variance; bars: {100 * confidence:g}% bootstrap half-width)")
    ax.set_ylabel(f"emulated index (% of variance; bars: {100 * confidence:g}% percentile interval)")
    ax.legend(loc="upper left", frameon=False, fontsize="small")
    if names:  # listed in a corner: small disagreeing indices crowd near zero
        ax.text(
            0.98,
            0.02,
            "intervals apart:\n" + "\n".join(names),
            transform=ax.transAxes,
            ha="right",
            va="bottom",
            fontsize="small",
        )
    sns.despine(ax=ax)
    if title:
        ax.set_title(title)
    return ax
