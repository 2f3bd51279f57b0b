"""A claim's figure (``speedtrap claims --figures DIR``): one column per test.

* **Top**: each tested arm's effect at the calibrated defaults — the mean over members × seeds, its
  95% seed interval (thick) and its 95% behavioural prediction interval over the ensemble's members
  (thin) — against the test's region (shaded), with the part's verdict beside it.
* **Bottom**: the statistic's mean at each Latin-hypercube sample (the first tested arm) against the
  input that decides it — the first input of PRIM's flip box, else the sampled input most correlated
  with it (Spearman) — coloured by whether the test holds there, with the region's bounds.

Pure: a :class:`~speedtrap.analysis.claim_verdicts.ClaimResult`, the claim's runs and its spec in,
a matplotlib figure out.
"""

from __future__ import annotations

import math
import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from speedtrap.analysis.claim_verdicts import SAMPLE, ClaimResult, Part, in_region, statistic_values
from speedtrap.config.claim import ClaimSpec, ClaimTest

HOLDS_COLOUR, FAILS_COLOUR = "#1b7837", "#b2182b"
VERDICT_COLOUR = {"true": HOLDS_COLOUR, "false": FAILS_COLOUR, "depends": "#e08214"}


def _statistic_name(test: ClaimTest) -> str:
    return {"difference": "arm − baseline", "ratio": "arm / baseline", "level": "level"}[test.statistic]


def key_input(part: Part, samples: pd.DataFrame, values: pd.Series, claim: ClaimSpec) -> str | None:
    """The input a part's bottom panel is drawn against: PRIM's first restricted input, else the
    sampled numeric input with the largest |Spearman correlation| with the sample means."""
    if part.flip and part.flip.get("bounds"):
        return str(part.flip["bounds"][0]["path"])
    best, best_r = None, -1.0
    constant = values.nunique() < 2  # no correlation is defined: the first numeric input
    for factor in claim.sampled:
        column = samples.get(factor.path)
        if column is None or not pd.api.types.is_numeric_dtype(column) or column.nunique() < 2:
            continue
        if constant:
            return factor.path
        r = abs(float(pd.Series(column.to_numpy()).corr(pd.Series(values.to_numpy()), method="spearman")))
        if math.isfinite(r) and r > best_r:
            best, best_r = factor.path, r
    return best


def _shade_region(ax: plt.Axes, region: tuple[float, float], *, vertical: bool) -> None:
    """Shade the test's region (its finite bounds dashed) within the data's range and the bounds."""
    low, high = region
    finite = [b for b in (low, high) if math.isfinite(b)]
    lim = ax.get_xlim() if vertical else ax.get_ylim()
    lo, hi = min(lim[0], *finite), max(lim[1], *finite)
    pad = 0.05 * (hi - lo) if hi > lo else 1.0
    lo, hi = lo - pad, hi + pad
    span = ax.axvspan if vertical else ax.axhspan
    span(max(low, lo), min(high, hi), color=HOLDS_COLOUR, alpha=0.08, lw=0)
    line = ax.axvline if vertical else ax.axhline
    for bound in finite:
        line(bound, color=HOLDS_COLOUR, lw=0.8, ls="--")
    (ax.set_xlim if vertical else ax.set_ylim)(lo, hi)


def claim_figure(result: ClaimResult, runs: pd.DataFrame, claim: ClaimSpec) -> Figure:
    """The claim's figure (module docstring); ``runs`` are the claim's sample runs (``sample`` ≥ 1
    under an ensemble) as :func:`speedtrap.experiments.claims.stored_runs` gives them."""
    tests = list(claim.tests)
    fig, axes = plt.subplots(2, len(tests), figsize=(max(8.0, 4.6 * len(tests)), 7.2), squeeze=False)
    labels = claim.labels()
    for column, test in enumerate(tests):
        label = test.label or test.outcome
        parts = [
            p
            for p in result.parts
            if (p.outcome, p.statistic, p.holds, p.bounds)
            == (test.outcome, test.statistic, test.holds, test.bounds)
        ]
        ax = axes[0, column]
        y = np.arange(len(parts), dtype=float)
        for i, part in enumerate(parts):
            d, b = part.defaults, part.behavioural
            if b.get("available"):
                ax.plot([b["low"], b["high"]], [i, i], color="#777777", lw=1.2)
            if math.isfinite(d.ci_low):
                ax.plot([d.ci_low, d.ci_high], [i, i], color="#222222", lw=4, solid_capstyle="butt")
            ax.plot([d.mean], [i], "o", color=VERDICT_COLOUR[part.verdict], ms=7, zorder=3)
            ax.annotate(
                part.verdict, (1.0, i), xycoords=("axes fraction", "data"), xytext=(4, 0),
                textcoords="offset points", va="center", fontsize=8, color=VERDICT_COLOUR[part.verdict],
            )  # fmt: skip
        ax.set_yticks(y, [textwrap.shorten(p.arm, 44) for p in parts], fontsize=8)
        ax.set_ylim(-0.6, len(parts) - 0.4)
        ax.invert_yaxis()
        _shade_region(ax, test.region(), vertical=True)
        ax.set_xlabel(f"{test.outcome}, {_statistic_name(test)}", fontsize=8)
        ax.set_title(textwrap.fill(label, 48), fontsize=9)
        ax.tick_params(axis="x", labelsize=8)
        _sample_panel(axes[1, column], parts, test, runs, claim, labels)
    members = next(
        (p.behavioural.get("members") for p in result.parts if p.behavioural.get("available")), None
    )
    at = f"{members} ensemble members × seeds" if members else "the scenario's own parameter set"
    handles = [
        Line2D([], [], color="#222222", lw=4, label="95% seed interval at the defaults"),
        Line2D([], [], color="#777777", lw=1.2, label="95% behavioural prediction interval (a member)"),
        Line2D([], [], marker="o", ls="none", color=HOLDS_COLOUR, label="sample: the test holds"),
        Line2D([], [], marker="o", ls="none", color=FAILS_COLOUR, label="sample: it does not"),
    ]
    fig.legend(
        handles=handles, loc="lower center", ncol=2 if len(tests) < 2 else 4, fontsize=8, frameon=False
    )
    fig.suptitle(
        f"{result.name}: {result.verdict.upper()} — defaults over {at}; {result.samples} sampled assumptions",
        fontsize=10,
    )
    fig.tight_layout(rect=(0, 0.08 if len(tests) < 2 else 0.05, 1, 0.96))
    return fig


def _sample_panel(
    ax: plt.Axes, parts: list[Part], test: ClaimTest, runs: pd.DataFrame, claim: ClaimSpec, labels: dict
) -> None:
    if not parts or not parts[0].samples:
        ax.set_axis_off()
        return
    part = parts[0]
    arm = claim.compare.labels.index(part.arm)
    values = statistic_values(runs, test, arm)
    means = values[values[SAMPLE] > 0].groupby(SAMPLE)["value"].mean().dropna()
    samples = runs[runs[SAMPLE] > 0].drop_duplicates(SAMPLE).set_index(SAMPLE).loc[means.index]
    path = key_input(part, samples, means, claim)
    if path is None:
        ax.set_axis_off()
        return
    region = test.region()
    colours = [HOLDS_COLOUR if in_region(v, region) else FAILS_COLOUR for v in means.to_numpy()]
    ax.scatter(samples[path].to_numpy(dtype=float), means.to_numpy(), c=colours, s=16, alpha=0.8)
    _shade_region(ax, region, vertical=False)
    ax.set_xlabel(textwrap.fill(labels.get(path, path), 44), fontsize=8)
    ax.set_ylabel(f"{test.outcome}, {_statistic_name(test)}\n(mean per sample)", fontsize=8)
    ax.tick_params(labelsize=8)
    title = f"samples, {textwrap.shorten(part.arm, 40)}"
    if part.flip_words:
        title += "\n" + textwrap.fill("PRIM: " + part.flip_words, 60)
    ax.set_title(title, fontsize=7.5)


__all__ = ["claim_figure", "key_input"]
