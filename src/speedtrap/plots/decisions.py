"""The decisions figure: per decision, each member's net value (sorted, with the share that pays),
the expected value of partial perfect information of the parameters that matter most and, given
the measurements, the members' net value against the measurement worth most, with its break-even."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from speedtrap.analysis.decisions import DecisionResult
from speedtrap.analysis.measurements import BY_COLUMN, MeasurementResult

TOP_PARAMETERS = 6
"""Parameters shown per decision in the EVPPI panel (highest first)."""


def plot_decisions(
    results: Sequence[DecisionResult],
    inb: Mapping[str, pd.Series],
    *,
    usd_per_dev_hour: float,
    title: str = "",
    measured: Sequence[MeasurementResult] = (),
    measurements: pd.DataFrame | None = None,
) -> Figure:
    """Two panels per decision (rows): the members' mean net value per developer-day, USD, sorted
    (green: pays), and the EVPPI of the top parameters, USD per developer-day; with ``measured`` and
    the members' ``measurements`` a third: each member's net value against the measurement of
    highest EVPPI, with its break-even."""
    by_label = {m.label: m for m in measured}
    columns = 3 if measured and measurements is not None else 2
    fig, axes = plt.subplots(len(results), columns, figsize=(6 * columns, 3.2 * len(results)), squeeze=False)
    for row, result in zip(axes, results, strict=True):
        if columns == 3 and measurements is not None:
            _draw_measured(row[2], by_label.get(result.label), inb[result.label], measurements)
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


def _draw_measured(
    ax: plt.Axes, m: MeasurementResult | None, inb: pd.Series, measurements: pd.DataFrame
) -> None:
    """Each member's net value against the measurement of highest EVPPI (green: pays), 0 and the
    break-even marked; a note when there is no measurement to draw."""
    if m is None or not m.first:
        ax.text(0.5, 0.5, "no measurement varies over the members", ha="center", va="center")
        ax.set_axis_off()
        return
    unit = BY_COLUMN.get(m.first)
    values = inb.dropna()
    x = measurements.loc[values.index, m.first].to_numpy(float)
    y = values.to_numpy(float)
    ax.scatter(x, y, s=12, c=np.where(y > 0, "#2a9d54", "#c0392b"))
    ax.axhline(0.0, color="#333333", lw=0.8)
    for point in m.break_even:
        ax.axvline(point, color="#4c72b0", ls="--", lw=1.0)
    label = unit.label if unit else m.first
    ax.set_xlabel(f"{label} on the tier run now ({unit.unit if unit else ''})")
    ax.set_ylabel("net value, USD per developer-day")
    evppi = float(m.evppi.get(m.first, float("nan")))
    ax.set_title(f"worth measuring first: {label} (EVPPI ${evppi:,.2f}); dashed: break-even", fontsize=9)
