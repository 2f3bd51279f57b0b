"""Break-even of a faster backend in the analytic mean-value model: the multiplier on the
baseline's failure probabilities at which the faster backend stops paying, one point or a grid
(one developer, uncontended; ``speedtrap.analysis.mean_value``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal

import pandas as pd
from scipy import optimize

from speedtrap.analysis.model_scope import resolve_backend
from speedtrap.analysis.task_model import TaskTimeBreakdown, expected_task_time
from speedtrap.config.backend import Backend
from speedtrap.config.scenario import Scenario
from speedtrap.config.tier import reference_failure

__all__ = [
    "Metric",
    "backends_compared",
    "break_even_curve",
    "break_even_failure_multiplier",
    "break_even_grid",
]

CURVE_FIELDS = ("horizon_min", "horizon_slope", "acceptance_scale", "failure_multiplier")
"""The fields of ``Quality`` that make its success curve: the fast backend is given the baseline's."""
M_MAX_MARGIN = 1e-9
"""Relative margin below the multiplier at which the reference mean failure reaches 1 (no horizon)."""

Metric = Literal["tasks_per_dev_day", "usd_per_task"]
"""What a break-even compares: completed tasks per developer-day (more is better) or US dollars
billed per task (less is better)."""


def _metric(breakdown: TaskTimeBreakdown, metric: Metric) -> float:
    if metric == "tasks_per_dev_day":
        return breakdown.tasks_per_dev_day
    if metric == "usd_per_task":
        return breakdown.usd_per_task
    raise ValueError(f"unknown metric {metric!r} (known: tasks_per_dev_day, usd_per_task)")


def backends_compared(
    scenario: Scenario,
    baseline: str | Backend | None,
    fast: str | Backend | None,
    speedup: float,
    price_multiplier: float,
) -> tuple[Backend, Backend]:
    """The baseline on its tier, and the fast backend: sped up, repriced, with the baseline's
    failure probabilities (each as a spec whose default tier is the one modelled)."""
    if not (speedup > 0 and math.isfinite(speedup)):
        raise ValueError(f"speedup must be a positive finite number, got {speedup}")
    if not (price_multiplier > 0 and math.isfinite(price_multiplier)):
        raise ValueError(f"price_multiplier must be a positive finite number, got {price_multiplier}")
    _, base, base_tier = resolve_backend(scenario, baseline)
    base = base.with_overrides({"default_tier": base_tier.name})
    _, fast_spec, fast_tier = (None, base, base_tier) if fast is None else resolve_backend(scenario, fast)
    price = fast_spec.price
    fast_spec = fast_spec.with_overrides(
        {
            "default_tier": fast_tier.name,
            "decode_speedup": fast_spec.decode_speedup * speedup,
            **{
                f"price.{field}": getattr(price, field) * price_multiplier
                for field in type(price).model_fields
            },
            **{f"quality.{field}": getattr(base.quality, field) for field in CURVE_FIELDS},
        }
    )
    return base, fast_spec


def break_even_failure_multiplier(
    scenario: Scenario,
    *,
    speedup: float,
    price_multiplier: float = 1.0,
    metric: Metric = "tasks_per_dev_day",
    baseline: str | Backend | None = None,
    fast: str | Backend | None = None,
    m_max: float | None = None,
    xtol: float = 1e-6,
) -> float:
    """The multiplier m* on the baseline's failure probabilities at which a faster backend gives
    the baseline's ``metric`` (mean-value model, one developer, uncontended).

    The fast backend is ``fast`` (a backend of ``scenario``, a preset or a spec; default: the
    baseline itself) with its decode rate × ``speedup`` (``Backend.decode_speedup``; time to first
    token unchanged) and its list prices × ``price_multiplier``; its failure probabilities are the
    baseline's success curve with m× the mistakes (``Quality.failure_multiplier`` × m: the horizon
    whose mean failure over the reference task lengths is m × the baseline's, nothing clipped);
    its malformed-tool-call rate is its own. The baseline is ``baseline`` (default: the scenario's
    backend) at m = 1.

    Returns:

    * m* > 1: speed pays until the fast backend makes m* times the baseline's mistakes;
    * 1.0: the two are equal at equal mistakes (e.g. ``speedup = price_multiplier = 1``);
    * 0 < m* < 1: the fast backend must make fewer mistakes to break even; 0.0 if it loses even
      with none;
    * ``math.inf``: it still wins at ``m_max`` (default: just below the multiplier at which the
      reference mean failure would reach 1, where the horizon shrinks to nothing and every task
      fails: ``(1 − 1e-9) / (baseline multiplier × its reference mean failure)``).

    Solved with ``scipy.optimize.brentq`` to ``xtol``; the metric falls monotonically with m.
    """
    base, fast_spec = backends_compared(scenario, baseline, fast, speedup, price_multiplier)
    if metric not in ("tasks_per_dev_day", "usd_per_task"):
        raise ValueError(f"unknown metric {metric!r} (known: tasks_per_dev_day, usd_per_task)")
    target = _metric(expected_task_time(scenario, base), metric)
    m_max = _m_max(base, m_max)
    return _solve(_gain(base, fast_spec, scenario, metric, target), m_max, xtol)


def _reference_unit(base: Backend) -> float:
    """The baseline's mean failure over the reference task lengths, times its multiplier."""
    quality = base.quality
    return quality.failure_multiplier * reference_failure(quality.accepted_horizon_min, quality.horizon_slope)


def _m_max(base: Backend, m_max: float | None) -> float:
    """The multiplier just below the one at which the reference mean failure would reach 1 (where the
    horizon shrinks to nothing), or ``m_max``; 1.0 when the baseline never fails."""
    unit = _reference_unit(base)
    positive = unit > 0.0
    if m_max is None:
        m_max = (1.0 - M_MAX_MARGIN) / unit if positive else 1.0
    if not m_max >= 1.0:
        raise ValueError(f"m_max must be at least 1, got {m_max}")
    return m_max


def _gain(base: Backend, fast_spec: Backend, scenario: Scenario, metric: Metric, target: float) -> _Gain:
    sign = 1.0 if metric == "tasks_per_dev_day" else -1.0
    multiplier = base.quality.failure_multiplier

    def gain(m: float) -> float:
        spec = fast_spec.with_overrides({"quality.failure_multiplier": multiplier * m})
        return sign * (_metric(expected_task_time(scenario, spec), metric) - target)

    return _Gain(gain, fails=_reference_unit(base) > 0.0)


class _Gain:
    """The fast backend's gain over the baseline at failure multiplier m (positive: it pays),
    each value computed once (root finders evaluate the ends of a bracket again)."""

    def __init__(self, function: Callable[[float], float], *, fails: bool) -> None:
        self.function, self.fails = function, fails
        self.values: dict[float, float] = {}

    def __call__(self, m: float) -> float:
        m = float(m)
        if m not in self.values:
            self.values[m] = self.function(m)
        return self.values[m]


def _solve(gain: _Gain, m_max: float, xtol: float, guess: float | None = None) -> float:
    """m* of a gain that falls monotonically with m (see :func:`break_even_failure_multiplier`).

    With ``guess`` (m* at a neighbouring speed-up), m* is first bracketed around it: [guess − xtol,
    guess + xtol], the side that misses it widened fourfold until the gain changes sign inside
    [0, m_max], then narrowed by Brent's method to ``xtol``. Without a guess, or when m* is at an
    end (0 or ∞), as from the whole interval: [1, m_max] if the fast backend pays at m = 1, else
    [0, 1]."""
    if guess is not None and gain.fails and 0.0 < guess < m_max:
        below = above = xtol
        while True:
            a, b = max(0.0, guess - below), min(m_max, guess + above)
            holds_a, holds_b = gain(a) >= 0.0, gain(b) <= 0.0
            if holds_a and holds_b:
                return float(optimize.brentq(gain, a, b, xtol=xtol))
            if (not holds_a and a == 0.0) or (not holds_b and b == m_max):
                break  # m* is 0 or ∞
            below, above = (below if holds_a else 4.0 * below), (above if holds_b else 4.0 * above)
    at_one = gain(1.0)
    if at_one == 0.0:
        return 1.0
    if not gain.fails:  # no failures to multiply: the fast backend wins or loses whatever m
        return math.inf if at_one > 0.0 else 0.0
    if at_one > 0.0:
        return math.inf if gain(m_max) > 0.0 else float(optimize.brentq(gain, 1.0, m_max, xtol=xtol))
    return 0.0 if gain(0.0) < 0.0 else float(optimize.brentq(gain, 0.0, 1.0, xtol=xtol))


def break_even_curve(
    scenario: Scenario,
    speedups: Sequence[float],
    *,
    price_multiplier: float = 1.0,
    metric: Metric = "tasks_per_dev_day",
    baseline: str | Backend | None = None,
    fast: str | Backend | None = None,
    xtol: float = 1e-6,
) -> list[float]:
    """:func:`break_even_failure_multiplier` at each of ``speedups`` (in order), each within
    ``xtol`` of m*, like it: the baseline's metric is computed once, and each m* after the first
    is bracketed around the previous one (m* moves little from one speed-up to the next), which
    takes about half the model evaluations. The values agree with
    :func:`break_even_failure_multiplier`'s to within 2 × ``xtol`` (each is within ``xtol`` of the
    same root); 0 and ∞ are the same."""
    if metric not in ("tasks_per_dev_day", "usd_per_task"):
        raise ValueError(f"unknown metric {metric!r} (known: tasks_per_dev_day, usd_per_task)")
    target: float | None = None
    result: list[float] = []
    guess: float | None = None
    for speedup in speedups:
        base, fast_spec = backends_compared(scenario, baseline, fast, float(speedup), price_multiplier)
        if target is None:
            target = _metric(expected_task_time(scenario, base), metric)
        m_star = _solve(_gain(base, fast_spec, scenario, metric, target), _m_max(base, None), xtol, guess)
        result.append(m_star)
        guess = m_star if math.isfinite(m_star) and m_star > 0.0 else guess
    return result


def break_even_grid(
    scenario: Scenario,
    speedups: Sequence[float],
    price_multipliers: Sequence[float] = (1.0,),
    *,
    metrics: Sequence[Metric] = ("tasks_per_dev_day", "usd_per_task"),
    baseline: str | Backend | None = None,
    fast: str | Backend | None = None,
) -> pd.DataFrame:
    """:func:`break_even_failure_multiplier` over a grid of speed-ups and price multipliers, as a
    tidy table with one row per speed-up × price multiplier × metric and the columns ``speedup``,
    ``price_multiplier``, ``metric``, ``m_star`` (the break-even failure multiplier, see
    :func:`break_even_failure_multiplier`), ``baseline_value`` and ``fast_value`` (the metric of the
    baseline and of the fast backend at equal mistakes, m = 1; tasks per developer-day or US dollars
    per task)."""
    rows = []
    for metric in metrics:
        for speedup in speedups:
            for price in price_multipliers:
                base, fast_spec = backends_compared(scenario, baseline, fast, float(speedup), float(price))
                rows.append(
                    {
                        "speedup": float(speedup),
                        "price_multiplier": float(price),
                        "metric": metric,
                        "m_star": break_even_failure_multiplier(
                            scenario,
                            speedup=float(speedup),
                            price_multiplier=float(price),
                            metric=metric,
                            baseline=baseline,
                            fast=fast,
                        ),
                        "baseline_value": _metric(expected_task_time(scenario, base), metric),
                        "fast_value": _metric(expected_task_time(scenario, fast_spec), metric),
                    }
                )
    return pd.DataFrame(
        rows, columns=["speedup", "price_multiplier", "metric", "m_star", "baseline_value", "fast_value"]
    )
