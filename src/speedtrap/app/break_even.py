"""The analytic break-even map of the app: m*(speed-up) of backend B against backend A.

The mean-value model (:mod:`speedtrap.analysis.mean_value`) covers scenarios under its own rules
(:data:`~speedtrap.analysis.mean_value.ANALYTIC_RULES`: tasks sized by difficulty, a fixed flow
threshold instead of patience, one session at a time, ...), so the map is drawn for the current
scenario *put under those rules*, and says so. The curve depends on the scenario and the two
backends, not on the what-if sliders: it is computed once per scenario (cached;
:func:`speedtrap.analysis.break_even.break_even_curve`, about 20 model evaluations, timed by
benchmarks/bench_break_even.py) while the marker — the what-if speed-up and failure multiplier —
moves as the sliders do.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from speedtrap.analysis.break_even import break_even_curve as curve_points
from speedtrap.analysis.mean_value import ANALYTIC_RULES, scope_problems
from speedtrap.config.backend import Backend
from speedtrap.config.scenario import NO_AI, Scenario

__all__ = ["SPEEDUPS", "analytic_case", "break_even_curve", "break_even_figure"]

SPEEDUPS: tuple[float, ...] = (1.0, 2.5, 6.0, 15.0)
"""Speed-ups on the map: none, fast mode (≈2.5×), the article's 6×, the wafer's ≈15× (DESIGN.md §1)."""

XTOL = 0.01
"""Precision of m* on the map (a drawing, not a table)."""


def analytic_case(scenarios: dict[str, Scenario]) -> tuple[Scenario, Backend, Backend] | str:
    """(scenario under the analytic rules, baseline A, compared backend B — or A itself when there
    is no B) for arms without the what-if sliders, or why the map cannot be drawn."""
    names = list(scenarios)
    if NO_AI in names:
        return "the analytic model does not cover working without AI (manual)"
    a, b = names[0], names[-1]
    scenario = scenarios[b].with_backend(b).with_overrides(dict(ANALYTIC_RULES))
    problems = scope_problems(scenario)
    if problems:
        return "outside the analytic model's scope: " + "; ".join(problems)
    return scenario, scenarios[a].backends[a], scenario.backends[b]


@functools.lru_cache(maxsize=32)
def _curve(scenario_json: str, baseline_json: str, fast_json: str) -> tuple[float, ...]:
    scenario = Scenario.model_validate_json(scenario_json)
    baseline = Backend.model_validate_json(baseline_json)
    fast = Backend.model_validate_json(fast_json)
    return tuple(curve_points(scenario, SPEEDUPS, baseline=baseline, fast=fast, xtol=XTOL))


def break_even_curve(scenario: Scenario, baseline: Backend, fast: Backend) -> pd.DataFrame:
    """m* at each of :data:`SPEEDUPS` (cached by the specs' JSON): columns speedup, m_star."""
    m = _curve(scenario.model_dump_json(), baseline.model_dump_json(), fast.model_dump_json())
    return pd.DataFrame({"speedup": SPEEDUPS, "m_star": m})


def break_even_figure(
    curve: pd.DataFrame | None, marker: tuple[float, float], *, baseline: str, fast: str
) -> Figure:
    """The map: below the m* curve the faster backend completes more tasks per developer-day than
    the baseline, above it fewer; the marker is the current what-if."""
    fig = Figure(figsize=(5.5, 3.6), layout="constrained")
    ax = fig.add_subplot()
    top = 2.5
    if curve is not None:
        m = np.minimum(curve["m_star"].to_numpy(dtype=float), top)
        ax.plot(curve["speedup"], m, "o-", color="#333333", label="break-even m*")
        ax.fill_between(curve["speedup"], 0, m, color="#1b9e77", alpha=0.15, label=f"{fast} pays")
        ax.fill_between(curve["speedup"], m, top, color="#d95f02", alpha=0.12, label=f"{baseline} pays")
        if (curve["m_star"] == math.inf).any():
            ax.annotate(
                "m* beyond the chart", (curve["speedup"].iloc[-1], top), ha="right", va="top", fontsize=8
            )
    ax.plot(*marker, "*", ms=14, color="#7570b3", label="current scenario")
    ax.set_xscale("log")
    ax.set_xlim(0.45, 17.0)
    ax.set_xticks(SPEEDUPS, [f"{s:g}×" for s in SPEEDUPS])
    ax.set_ylim(0, top)
    ax.set_xlabel(f"what-if decode speed-up of {fast} (× its own rate)")
    ax.set_ylabel(f"failures of {fast} / {baseline}")
    ax.set_title("Analytic break-even (tasks per developer-day)", fontsize=10)
    ax.legend(frameon=False, fontsize=7, loc="lower right")
    return fig
