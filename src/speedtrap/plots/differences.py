"""Paired differences of arms from a baseline (``speedtrap compare`` and ``speedtrap demo``): one
panel per outcome with each arm's mean difference, its 95% seed interval and (under an ensemble) its
95% behavioural interval, then the decision economics —
each arm's net value per developer-day with its 95% CI and its break-even price multiple and
developer cost — and, in the title, what the intervals are (flagged unreliable from fewer than 5
seeds)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from speedtrap.analysis.value import ArmValue, pays_phrase
from speedtrap.plots.common import interval_note

Outcome = tuple[str, str, float, str]
"""An outcome of the figure: summary key, label with unit, scale and suffix of a difference (" pp":
a share shown in percentage points)."""


def outcome_title(label: str, suffix: str) -> str:
    """A panel's title: ``label``, whose unit a share in percentage points replaces ("waiting (% of
    time)" → "waiting (percentage points of time)")."""
    if suffix.strip() != "pp":
        return label
    if "(% of time)" in label:
        return label.replace("(% of time)", "(percentage points of time)")
    return f"{label} (percentage points)"


def break_even_text(value: ArmValue) -> str:
    """An arm's break-even numbers in a few words: "break-even 0.35× its prices; pays above $445 per
    developer-hour"."""
    multiple = value.break_even_price_multiple
    if not math.isfinite(multiple):
        price = "no break-even price"
    elif multiple <= 0:
        price = "would not pay even with free inference"
    else:
        price = f"break-even at {multiple:.2f}× its prices"
    return f"{price}; {pays_phrase(value.pays, value.break_even_usd_per_dev_hour)}"


def _errorbars(
    ax: Axes,
    labels: Sequence[str],
    mean: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    behaviour: tuple[np.ndarray, np.ndarray] | None = None,
) -> None:
    y = np.arange(len(labels), dtype=float)
    if behaviour is not None and np.isfinite(behaviour[0]).any():
        b_low, b_high = behaviour
        ax.errorbar(
            mean, y - 0.2, xerr=[mean - b_low, b_high - mean], fmt="s", capsize=4, color="C1",
            label="behavioural 95% (ensemble)",
        )  # fmt: skip
    ax.errorbar(mean, y, xerr=[mean - low, high - mean], fmt="o", capsize=4, color="C0", label="seed 95%")
    ax.axvline(0.0, color="0.5", linewidth=0.8)
    ax.set_yticks(y, list(labels), parse_math=False)
    ax.set_ylim(-0.6, len(labels) - 0.4)


def plot_differences(
    differences: pd.DataFrame,
    baseline: str,
    outcomes: Sequence[Outcome],
    values: Sequence[ArmValue] = (),
    usd_per_dev_hour: float | None = None,
) -> Figure:
    """The figure: one panel per outcome of ``outcomes`` found in ``differences`` (the paired
    differences of :func:`speedtrap.analysis.statistics.paired_differences`, with ``n``), then, given
    ``values``, a panel of each arm's net value per developer-day (US$, 95% CI) at
    ``usd_per_dev_hour`` with its break-even numbers beside it. The title says what the error bars
    are, and that they are unreliable when from fewer than 5 seeds."""
    shown = [entry for entry in outcomes if entry[0] in set(differences["outcome"])]
    panels = len(shown) + (1 if values else 0)
    fig, axes = plt.subplots(panels, 1, figsize=(8, 1.6 + 1.0 * panels + 0.2 * len(values)), squeeze=False)
    for ax, (key, label, scale, suffix) in zip(axes[:, 0], shown, strict=False):
        rows = differences[differences["outcome"] == key]
        mean, low, high = (scale * rows[k].to_numpy(float) for k in ("mean", "ci_low", "ci_high"))
        behaviour = (
            (scale * rows["behaviour_low"].to_numpy(float), scale * rows["behaviour_high"].to_numpy(float))
            if "behaviour_low" in rows
            else None
        )
        _errorbars(ax, [str(a) for a in rows["arm"]], mean, low, high, behaviour)
        ax.set_title(outcome_title(label, suffix), fontsize=9, loc="left", parse_math=False)
    drawn = differences[np.isfinite(differences["ci_low"].to_numpy(float))]  # intervals, not single values
    counts = [int(n) for n in drawn["n"]]
    if values:
        ax = axes[-1, 0]
        arms = [v.arm for v in values]
        mean, low, high = (
            np.array([getattr(v, k) for v in values], dtype=float)
            for k in ("net_usd_per_dev_day", "net_ci_low", "net_ci_high")
        )
        b_low, b_high = (
            np.array([getattr(v, k) for v in values], dtype=float)
            for k in ("net_behaviour_low", "net_behaviour_high")
        )
        _errorbars(ax, arms, mean, low, high, (b_low, b_high))
        at = f" at ${usd_per_dev_hour:g} per developer-hour" if usd_per_dev_hour is not None else ""
        ax.set_title(
            f"net value per developer-day{at} (US$; > 0: it pays)", fontsize=9, loc="left", parse_math=False
        )
        ax.set_xlabel(
            "\n".join(f"{v.arm}: {break_even_text(v)}" for v in values),
            fontsize=8,
            loc="left",
            parse_math=False,
        )
        counts += [v.n for v in values if math.isfinite(v.net_ci_low)]
    note = interval_note("error bars", counts, paired=True, of="seeds")
    both = "behaviour_low" in differences and np.isfinite(differences["behaviour_low"].to_numpy(float)).any()
    if "members" in differences and int(differences["members"].max()) > 1:  # a nested design: say it
        k = int(differences["members"].max())
        r = float(differences["seeds_per_member"].max())
        note = (
            f"circles: 95% seed interval over {k} members × {r:g} seeds (paired by member and seed); "
            f"squares: the central 95% of the {k} members' means"
        )
    what = (
        "mean, 95% seed interval (circles) and 95% behavioural interval over the ensemble (squares)"
        if both
        else "mean and 95% CI (one parameter set)"
    )
    fig.suptitle(
        f"Paired difference from {baseline}: {what} (same seeds)\n{note}",
        fontsize=10,
        parse_math=False,
    )
    fig.tight_layout()
    return fig
