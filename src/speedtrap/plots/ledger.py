"""Where a developer-day goes: the ledger categories' labels and colours, mean hours per category
and the stacked ledger bars.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.container import Container

from speedtrap.analysis.statistics import mean_ci
from speedtrap.config.ledger import LEDGER_CATEGORIES
from speedtrap.plots.common import ERRORBAR_COLOUR, interval_note
from speedtrap.serving.economics import SECONDS_PER_HOUR

CATEGORY_LABELS: dict[str, str] = {
    "prompting": "prompting",
    "waiting_queue": "waiting: queue",
    "waiting_ttft": "waiting: first token",
    "waiting_generation": "waiting: generation",
    "waiting_tool": "waiting: tools",
    "reviewing": "reviewing",
    "fixing": "fixing",
    "switching": "switching (resumption)",
    "manual": "manual work",
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
            "#8c6d31",  # manual work
            "#d9d9d9",  # other work
            "#f5f5f5",  # idle
        ],
        strict=True,
    )
)
"""Colours: greens for prompting, oranges for waiting, blue reviewing, red fixing, purple switching."""

CATEGORY_COLOURS: dict[str, str] = _PALETTE
"""Colour of each ledger category in the ledger figures (hex), for figures drawn elsewhere."""


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

    Error bars (when ``frame`` holds several runs per level) are the 95% t-interval of each
    category's mean over the runs (unpaired), drawn at the right end of its segment; the legend
    says so (:func:`interval_note`).
    """
    hours = ledger_hours(frame, by, workday_s=workday_s)
    levels = list(order) if order is not None else list(dict.fromkeys(hours[by]))
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 1.2 + 0.7 * len(levels)), layout="constrained")
    y = np.arange(len(levels))
    left = np.zeros(len(levels))
    handles: list[Artist | Container] = []
    whiskers: list[Artist | Container] = []
    for category in LEDGER_CATEGORIES:
        part = hours[hours["category"] == category].set_index(by).reindex(levels)
        widths = part["hours"].to_numpy()
        handles.append(
            ax.barh(
                y, widths, left=left, color=_PALETTE[category], label=CATEGORY_LABELS[category], height=0.7
            )
        )
        errors = part["ci_half_hours"].to_numpy()
        if np.isfinite(errors).any():
            bars = ax.errorbar(
                left + widths, y, xerr=errors, fmt="none", ecolor=ERRORBAR_COLOUR, elinewidth=0.8, capsize=2
            )
            if not whiskers:
                note = interval_note("error bars", frame.groupby(by).size())
                bars.set_label(textwrap.fill(note, 34))
                whiskers.append(bars)
        left += widths
    ax.set_yticks(y, levels)
    ax.invert_yaxis()
    ax.set_xlabel("hours per developer-day")
    ax.set_xlim(0, workday_s / SECONDS_PER_HOUR)
    ax.legend(
        handles=[*handles, *whiskers],
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        frameon=False,
        fontsize="small",
    )
    sns.despine(ax=ax, left=True)
    if title:
        ax.set_title(title)
    return ax
