"""The decisions figure: per decision, each member's net value (sorted, with the share that pays)
and the expected value of partial perfect information of the parameters that matter most."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from speedtrap.analysis.decisions import DecisionResult

TOP_PARAMETERS = 6
"""Parameters shown per decision in the EVPPI panel (highest first)."""


def plot_decisions(
    results: Sequence[DecisionResult],
    inb: Mapping[str, pd.Series],
    *,
    usd_per_dev_hour: float,
    title: str = "",
) -> Figure:
    """Two panels per decision (rows): the members' mean net value per developer-day, USD, sorted
    (green: pays), and the EVPPI of the top parameters, USD per developer-day."""
    fig, axes = plt.subplots(len(results), 2, figsize=(12, 3.2 * len(results)), squeeze=False)
    for row, result in zip(axes, results, strict=True):
        values = np.sort(inb[result.label].dropna().to_numpy(float))
        colours = np.where(values > 0, "#2a9d54", "#c0392b")
        row[0].bar(np.arange(len(values)), values, color=colours, width=0.9)
        row[0].axhline(0.0, color="#333333", lw=0.8)
        row[0].set_xlabel("ensemble member (sorted by net value)")
        row[0].set_ylabel("net value, USD per developer-day")
        row[0].set_title(
            f"{result.label}: pays for {100 * result.share_paying:.0f}% of {result.members} members "
            f"(95% Wilson {100 * result.share_low:.0f}–{100 * result.share_high:.0f}%) — {result.verdict()}",
            fontsize=9,
        )
        row[0].xaxis.get_major_locator().set_params(integer=True)
        top = result.evppi.dropna().head(TOP_PARAMETERS)[::-1]
        if not (top > 0).any():  # settled (or too few members): nothing is worth measuring for it
            words = "no parameter is worth measuring for this decision"
            row[1].text(0.5, 0.5, words, ha="center", va="center")
            row[1].set_axis_off()
        else:
            row[1].barh([p.split(".", 1)[-1] for p in top.index], top.to_numpy(float), color="#4c72b0")
        row[1].set_xlabel("EVPPI, USD per developer-day (what knowing it is worth)")
        row[1].set_title(f"EVPI (all behaviour known): ${result.evpi:,.0f} per developer-day", fontsize=9)
        row[1].tick_params(axis="y", labelsize=7)
    fig.suptitle(
        title or f"Decisions over the calibrated ensemble at ${usd_per_dev_hour:g} per developer-hour"
    )
    fig.tight_layout()
    return fig
