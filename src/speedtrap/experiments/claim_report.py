"""A judged claim as lines of text (``speedtrap claims``): the verdict with the arms' beside it, the
scenario against the headline one, the stated point, each part's effect with its two intervals, its
box (or "no stable box"), what to measure first, and, for a quick run, :data:`QUICK_MARK` on every
line."""

from __future__ import annotations

from typing import Any

import numpy as np

from speedtrap.analysis.claim_verdicts import ClaimResult
from speedtrap.plots.claims import outcome_words


def _interval(mean: float, low: float, high: float) -> str:
    if np.isnan(mean):
        return "n/a"
    if np.isnan(low):
        return f"{mean:.3g} (no interval)"
    return f"{mean:.3g} [{low:.3g}, {high:.3g}]"


QUICK_MARK = "[quick]"
"""Every printed line of a quick run starts with this: its verdicts are not the study's."""


def _no_measure(evppi: dict[str, Any]) -> str:
    """Why no input is named: EVPPI not computed (too few samples), or 0 for every input."""
    values = [v for v in evppi.values() if v is not None and not np.isnan(v)]
    if not values:
        return "none (EVPPI not computed: too few samples)"
    return "none (EVPPI 0 for every input: knowing one alone would not change the call)"


def _part_lines(part: Any) -> list[str]:
    d = part.defaults
    why = f" — on {', '.join(part.depends_on)}" if part.depends_on else ""
    lines = [f"  {part.arm} · {part.test}: {part.verdict}{why}"]
    b = part.behavioural
    where = f"over {b['members']} members × seeds" if b.get("available") else "on the scenario's own set"
    unit = "×" if part.statistic == "ratio" else outcome_words(part.outcome)[1]
    seed = f"{_interval(d.mean, d.ci_low, d.ci_high)} {unit}" + (f"; {d.caveat}" if d.caveat else "")
    lines.append(
        f"    effect at the defaults ({where}), 95% seed interval over {d.n} runs: {seed}"
        f" ({part.at_defaults})"
    )
    if b.get("available"):
        lines.append(
            f"    behavioural uncertainty, 95% prediction interval for a member: "
            f"{_interval(b['mean'], b['low'], b['high'])} {unit} ({part.across_members})"
        )
    else:
        lines.append(f"    behavioural uncertainty: {b['note']}")
    if part.samples:
        lines.append(f"    holds in {part.holds_share:.0%} of {part.samples} sampled assumptions")
    if part.flip_words:
        lines.append(f"    PRIM: {part.flip_words}")
    if part.cart_words and part.stable:
        agree = f" (agreement with PRIM {part.agreement:.2f})" if part.agreement is not None else ""
        lines.append(f"    CART: {part.cart_words}{agree}")
    decision = part.decision
    if decision is not None:
        share = (
            f"holds in {decision['share_holding']:.0%} of samples (Wilson 95% interval "
            f"{decision['share_low']:.0%}–{decision['share_high']:.0%})"
        )
        measure = decision["measure_first"]
        lines.append(
            f"    decision: {share}; measure first (highest EVPPI): "
            + (", ".join(measure) or _no_measure(decision["evppi"]))
        )
        if decision["boundary_words"]:
            lines.append(f"    boundary: {decision['boundary_words']}")
    lines.extend(f"    not identified: {what}" for what in part.identify)
    return lines


def format_result(result: ClaimResult, *, wall_s: float | None = None) -> list[str]:
    """The claim's verdict (its arms' beside it) and its parts as lines of text; every line of a quick
    result starts with :data:`QUICK_MARK`."""
    arms = (
        " (by arm: " + "; ".join(f"{a}: {v}" for a, v in result.arm_verdicts.items()) + ")"
        if len(result.arm_verdicts) > 1
        else ""
    )
    lines = [f"{result.name}: {result.verdict.upper()}{arms} — {result.statement}"]
    scenario = result.scenario
    if scenario:
        if scenario.get("headline"):
            lines.append(f"  scenario: the headline one ({scenario['name']})")
        else:
            why = scenario.get("why") or "no reason given in the claim file"
            name = "the headline one with changes" if scenario["name"] == "headline" else scenario["name"]
            lines.append(f"  scenario: {name}: {why}")
            lines.append(
                "    differs from the headline scenario in: "
                + "; ".join(scenario["difference_from_headline"])
            )
    if result.stated:
        at = "; ".join(
            f"{v['label']} {v['value']:g}"
            + (f" (scenario value {v['scenario_value']:.4g})" if v["over"] else "")
            for v in result.stated["values"]
        )
        lines.append(f"  stated point ({result.stated['label']}), the defaults: {at}; neighbourhood sampled")
    for part in result.parts:
        lines.extend(_part_lines(part))
    for rep in result.reported:
        d, b = rep.difference, rep.behavioural
        behavioural = (
            f"; behavioural {_interval(b['mean'], b['low'], b['high'])}" if b.get("available") else ""
        )
        words, unit = outcome_words(rep.outcome)
        lines.append(
            f"  reported: {words} ({unit}), {rep.arm} − baseline {_interval(d.mean, d.ci_low, d.ci_high)}"
            f" (95% seed interval{behavioural}; baseline {rep.baseline_mean:.3g})"
        )
    lines.extend(f"  note: {note}" for note in result.notes)
    if wall_s is not None:
        lines.append(f"  {result.runs} runs, wall time {wall_s:.1f} s")
    if result.quick:
        lines = [f"{QUICK_MARK} {line}" for line in lines]
    return lines


__all__ = ["QUICK_MARK", "format_result"]
