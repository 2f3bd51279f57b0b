"""The break-even curve (the app's map): one solve per speed-up, each bracketed around the previous
m*, agrees with :func:`break_even_failure_multiplier` solved from scratch at each speed-up."""

from __future__ import annotations

import math

from speedtrap.analysis import break_even_failure_multiplier, expected_task_time
from speedtrap.analysis.break_even import backends_compared, break_even_curve
from speedtrap.analysis.mean_value import ANALYTIC_RULES
from speedtrap.config import Scenario

HEADLINE = Scenario().with_overrides(ANALYTIC_RULES)  # the defaults under the model's rules
XTOL = 0.01
"""The precision the app's map asks for (speedtrap.app.break_even.XTOL)."""
SPEEDUPS = (1.0, 2.5, 6.0)


def test_the_curve_agrees_with_a_solve_from_scratch_at_each_speed_up() -> None:
    fast = "wafer-distilled"
    previous = [break_even_failure_multiplier(HEADLINE, speedup=s, fast=fast, xtol=XTOL) for s in SPEEDUPS]
    curve = break_even_curve(HEADLINE, SPEEDUPS, fast=fast, xtol=XTOL)
    assert curve[0] == previous[0]  # no neighbour yet: the same solve
    for new, old in zip(curve, previous, strict=True):
        assert abs(new - old) <= 2 * XTOL  # both within XTOL of the same root
    target = expected_task_time(HEADLINE).tasks_per_dev_day

    def tasks(speedup: float, m: float) -> float:
        base, spec = backends_compared(HEADLINE, None, fast, speedup, 1.0)
        multiplier = base.quality.failure_multiplier * m
        return expected_task_time(
            HEADLINE, spec.with_overrides({"quality.failure_multiplier": multiplier})
        ).tasks_per_dev_day

    for speedup, m_star in zip(SPEEDUPS[1:], curve[1:], strict=True):  # the first is checked above
        # m* is within XTOL of the root: the fast backend pays just below it and not just above
        assert tasks(speedup, m_star - XTOL) >= target >= tasks(speedup, m_star + XTOL), speedup


def test_all_or_nothing_ends_are_the_same() -> None:
    data = HEADLINE.model_dump(mode="python")
    # a horizon far beyond every task at a steep slope: the failure probability rounds to 0
    data["backends"]["gpu-batched"]["quality"].update({"horizon_min": 1e15, "horizon_slope": 10.0})
    flawless = Scenario.model_validate(data)
    speedups = (0.5, 2.0, 0.5)
    assert break_even_curve(flawless, speedups, xtol=XTOL) == [
        break_even_failure_multiplier(flawless, speedup=s, xtol=XTOL) for s in speedups
    ]
    assert break_even_curve(flawless, speedups) == [0.0, math.inf, 0.0]
