"""seaborn figures shared by the command line, the experiment scripts and the notebooks.

Each function draws on a given matplotlib ``Axes`` (or a new figure) and returns it; nothing is
shown or saved implicitly — :func:`save_figure` writes PNG and SVG side by side.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from speedtrap.analysis.statistics import mean_ci
from speedtrap.models.ledger import LEDGER_CATEGORIES

CATEGORY_LABELS: dict[str, str] = {
    "prompting": "prompting",
    "waiting_queue": "waiting: queue",
    "waiting_ttft": "waiting: first token",
    "waiting_generation": "waiting: generation",
    "waiting_tool": "waiting: tools",
    "reviewing": "reviewing",
    "fixing": "fixing",
    "switching": "switching (resumption)",
    "other_work": "other work",
    "idle": "idle",
}
"""Legend labels of the ledger categories, in ledger order."""

_PALETTE: dict[str, str] = dict(
    zip(
        LEDGER_CATEGORIES,
        [
            sns.color_palette("Greens", 3).as_hex()[1],  # prompting
            *sns.color_palette("Oranges", 5).as_hex()[1:],  # the four waits
            sns.color_palette("Blues", 3).as_hex()[1],  # reviewing
            sns.color_palette("Reds", 3).as_hex()[2],  # fixing
            sns.color_palette("Purples", 3).as_hex()[1],  # switching
            "#d9d9d9",  # other work
            "#f5f5f5",  # idle
        ],
        strict=True,
    )
)
"""Colours: greens for prompting, oranges for waiting, blue reviewing, red fixing, purple switching."""

SECONDS_PER_HOUR = 3600.0


def ledger_hours(frame: pd.DataFrame, by: str, *, workday_s: float, confidence: float = 0.95) -> pd.DataFrame:
    """Mean hours per developer-day in each ledger category for each level of ``by``.

    ``frame`` has one row per run (a summary dict per row, with the ``share_<category>`` keys);
    returns columns ``by``, ``category``, ``hours``, ``ci_half_hours`` (half-width of the
    ``confidence`` interval over the runs; NaN for a single run), in ledger order.
    """
    rows = []
    scale = workday_s / SECONDS_PER_HOUR
    for level, group in frame.groupby(by, sort=False):
        for category in LEDGER_CATEGORIES:
            mean, low, high = mean_ci(group[f"share_{category}"].to_numpy() * scale, confidence)
            rows.append({by: level, "category": category, "hours": mean, "ci_half_hours": (high - low) / 2})
    return pd.DataFrame(rows)


def plot_ledger(
    frame: pd.DataFrame,
    by: str = "backend",
    *,
    workday_s: float,
    order: Sequence[str] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Stacked horizontal bars: where a developer-day goes (hours) for each level of ``by``.

    Error bars (when ``frame`` holds several runs per level) are the 95% confidence interval of
    each category's mean, drawn at the right end of its segment.
    """
    hours = ledger_hours(frame, by, workday_s=workday_s)
    levels = list(order) if order is not None else list(dict.fromkeys(hours[by]))
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 1.2 + 0.7 * len(levels)), layout="constrained")
    y = np.arange(len(levels))
    left = np.zeros(len(levels))
    for category in LEDGER_CATEGORIES:
        part = hours[hours["category"] == category].set_index(by).reindex(levels)
        widths = part["hours"].to_numpy()
        ax.barh(y, widths, left=left, color=_PALETTE[category], label=CATEGORY_LABELS[category], height=0.7)
        errors = part["ci_half_hours"].to_numpy()
        if np.isfinite(errors).any():
            ax.errorbar(
                left + widths, y, xerr=errors, fmt="none", ecolor="#333333", elinewidth=0.8, capsize=2
            )
        left += widths
    ax.set_yticks(y, levels)
    ax.invert_yaxis()
    ax.set_xlabel("hours per developer-day")
    ax.set_xlim(0, workday_s / SECONDS_PER_HOUR)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize="small")
    sns.despine(ax=ax, left=True)
    if title:
        ax.set_title(title)
    return ax


def _t_interval(values: pd.Series) -> tuple[float, float]:
    _, low, high = mean_ci(values.to_numpy())
    return low, high


def plot_outcome(
    frame: pd.DataFrame,
    outcome: str,
    label: str,
    by: str = "backend",
    *,
    order: Sequence[str] | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Bars of the mean of ``outcome`` per level of ``by`` with 95% t confidence intervals over runs."""
    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 3.2), layout="constrained")
    many = frame.groupby(by)[outcome].count().min() > 1
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
        capsize=0.2,
        ax=ax,
    )
    ax.set_ylabel(label)
    ax.set_xlabel("")
    sns.despine(ax=ax)
    return ax


def plot_lines(
    frame: pd.DataFrame,
    x: str,
    y: str,
    label: str,
    *,
    hue: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Mean of ``y`` against ``x`` (one line per level of ``hue``) with 95% t confidence bands over runs."""
    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 3.2), layout="constrained")
    many = frame.groupby([x, *([hue] if hue else [])])[y].count().min() > 1
    sns.lineplot(
        data=frame,
        x=x,
        y=y,
        hue=hue,
        marker="o",
        palette="colorblind" if hue else None,
        errorbar=_t_interval if many else None,
        ax=ax,
    )
    ax.set_ylabel(label)
    sns.despine(ax=ax)
    return ax


def save_figure(fig: Figure, directory: str | Path, stem: str) -> list[Path]:
    """Write ``fig`` as ``<stem>.png`` (150 dpi) and ``<stem>.svg`` under ``directory``; return the paths."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{stem}.png", out / f"{stem}.svg"]
    fig.savefig(paths[0], dpi=150, bbox_inches="tight")
    fig.savefig(paths[1], bbox_inches="tight")
    return paths


__all__ = ["CATEGORY_LABELS", "ledger_hours", "plot_ledger", "plot_lines", "plot_outcome", "save_figure"]
