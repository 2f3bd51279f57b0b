"""A claim's figure (``speedtrap claims --figures DIR``): one column per test.

* **Top**: each tested arm's effect at the calibrated defaults — the mean over members × seeds, its
  95% seed interval (thick) and its 95% behavioural prediction interval over the ensemble's members
  (thin) — against the test's region (shaded), with the part's verdict beside it.
* **Bottom**: the statistic's mean at each Latin-hypercube sample (the first tested arm) against the
  input that decides it — the first input of PRIM's flip box, else the sampled input most correlated
  with it (Spearman) — coloured by whether the test holds there, with the region's bounds and, where
  PRIM's box survives resampling, the box's range of that input shaded ("no stable box" otherwise).
  An axis whose values span more than :data:`DECADES` decades is logarithmic (symmetric-log where
  they change sign).

Axes are named in words with units (:data:`OUTCOME_WORDS`; the inputs by their claim-file labels). A
quick result's title starts with :data:`QUICK_TITLE`.

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

from speedtrap.analysis.claim_verdicts import (
    DISTANCE,
    DISTANCE_LABEL,
    NOT_IDENTIFIED,
    SAMPLE,
    ClaimResult,
    Part,
    distance_from_stated,
    in_region,
    statistic_values,
)
from speedtrap.config.claim import ClaimSpec, ClaimTest

HOLDS_COLOUR, FAILS_COLOUR = "#1b7837", "#b2182b"
VERDICT_COLOUR = {
    "true": HOLDS_COLOUR,
    "false": FAILS_COLOUR,
    "depends": "#e08214",
    NOT_IDENTIFIED: "#6a3d9a",
}
BOX_COLOUR = "#2166ac"
DECADES = 2.0
"""An axis is logarithmic when its values' magnitudes span more than this many decades."""
QUICK_TITLE = "QUICK (small variant, not the study's verdict)"
OUTCOME_WORDS = {
    "tasks_per_dev_day": ("tasks per developer-day", "tasks/dev-day"),
    "mean_decode_tok_s": ("decode speed per stream", "tok/s"),
    "usd_per_task": ("inference cost per task", "USD"),
    "usd_per_dev_day": ("inference bill per developer-day", "USD"),
    "mean_ttft_s": ("time to first token", "s"),
    "ok_share": ("share of tasks right first time", "share"),
    "standard_queue_wait_s": ("standard requests' wait for a slot", "s"),
    "fast_queue_wait_s": ("fast requests' wait for a slot", "s"),
    "standard_ttft_s": ("standard requests' time to first token", "s"),
    "waiting_share": ("share of the day waiting on the agent", "share"),
    "fixing_share": ("share of the day fixing the agent's mistakes", "share"),
    "backend_utilization": ("fleet utilisation", "share of slots"),
    "standard_tasks_per_dev_day": ("standard-tier tasks per developer-day", "tasks/dev-day"),
    "standard_decode_tok_s": ("standard-tier decode speed per stream", "tok/s"),
    "revenue_usd_per_gpu_hour": ("provider revenue per GPU-hour", "USD"),
    "provider_tok_s_per_gpu": ("provider throughput per GPU", "tok/s"),
    "mean_queue_wait_s": ("mean wait for a slot", "s"),
}
"""Outcome column → (words, unit) for the axes."""


def outcome_words(outcome: str) -> tuple[str, str]:
    """An outcome in words and its unit (the column name, unit unknown, for one not listed)."""
    return OUTCOME_WORDS.get(outcome, (outcome.replace("_", " "), "as recorded"))


def _statistic_name(test: ClaimTest) -> str:
    words, unit = outcome_words(test.outcome)
    if test.statistic == "difference":
        return f"{words}, arm − baseline ({unit})"
    if test.statistic == "ratio":
        return f"{words}, arm ÷ baseline (×)"
    return f"{words} ({unit})"


def _spans_decades(values: np.ndarray) -> bool:
    magnitudes = np.abs(values[np.isfinite(values) & (values != 0)])
    return len(magnitudes) > 1 and math.log10(magnitudes.max() / magnitudes.min()) > DECADES


def _scale_axis(ax: plt.Axes, values: np.ndarray, *, axis: str) -> None:
    """Log (all positive) or symmetric-log (signs differ) when ``values`` span decades."""
    if not _spans_decades(values):
        return
    finite = values[np.isfinite(values)]
    setter = ax.set_yscale if axis == "y" else ax.set_xscale
    if (finite > 0).all():
        setter("log")
        (ax.set_ylim if axis == "y" else ax.set_xlim)(finite.min() / 1.5, finite.max() * 1.5)
    else:
        magnitudes = np.abs(finite[finite != 0])
        setter("symlog", linthresh=float(np.quantile(magnitudes, 0.1)))


def key_input(part: Part, samples: pd.DataFrame, values: pd.Series, claim: ClaimSpec) -> str | None:
    """The input a part's bottom panel is drawn against: the stable PRIM box's first restricted input,
    else the distance from the claim's stated point (where it states one), else the sampled numeric
    input with the largest |Spearman correlation| with the sample means."""
    if part.stable and part.flip and part.flip.get("bounds"):
        return str(part.flip["bounds"][0]["path"])
    if DISTANCE in samples:
        return DISTANCE
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
        ax.set_xlabel(textwrap.fill(_statistic_name(test), 56), fontsize=8)
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
    point = f" at the stated point ({result.stated['label']})" if result.stated else ""
    title = (
        f"{result.name}: {result.verdict.upper()} — defaults{point} over {at}; "
        f"{result.samples} sampled assumptions"
    )
    fig.suptitle(textwrap.fill(f"{QUICK_TITLE}: {title}" if result.quick else title, 120), fontsize=10)
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
    distance = distance_from_stated(claim, samples)
    if distance is not None:
        samples = samples.assign(**{DISTANCE: distance})
    path = key_input(part, samples, means, claim)
    if path is None:
        ax.set_axis_off()
        return
    region = test.region()
    colours = [HOLDS_COLOUR if in_region(v, region) else FAILS_COLOUR for v in means.to_numpy()]
    x = samples[path].to_numpy(dtype=float)
    y = means.to_numpy(dtype=float)
    ax.scatter(x, y, c=colours, s=16, alpha=0.8)
    _shade_region(ax, region, vertical=False)
    _draw_box(ax, part, path)
    _scale_axis(ax, y, axis="y")
    _scale_axis(ax, x, axis="x")
    ax.set_xlabel(textwrap.fill({**labels, DISTANCE: DISTANCE_LABEL}.get(path, path), 44), fontsize=8)
    ax.set_ylabel(textwrap.fill(_statistic_name(test), 40) + "\n(mean per sample)", fontsize=8)
    ax.tick_params(labelsize=8)
    title = f"samples, {textwrap.shorten(part.arm, 40)}"
    if part.flip_words:
        title += "\n" + textwrap.fill("PRIM: " + part.flip_words, 60)
    ax.set_title(title, fontsize=7.5)


def _draw_box(ax: plt.Axes, part: Part, path: str) -> None:
    """Shade the stable PRIM box's range of ``path`` (the box as stated in the title)."""
    if not part.stable or not part.flip:
        return
    for bound in part.flip.get("bounds", []):
        if bound["path"] != path:
            continue
        low, high = ax.get_xlim()
        left = bound["low"] if bound["low"] is not None else low
        right = bound["high"] if bound["high"] is not None else high
        ax.axvspan(left, right, color=BOX_COLOUR, alpha=0.10, lw=0, label="stable PRIM box")
        ax.set_xlim(low, high)


__all__ = ["DECADES", "OUTCOME_WORDS", "QUICK_TITLE", "claim_figure", "key_input", "outcome_words"]
