"""The prediction intervals that ``speedtrap pareto`` and ``pareto --explain`` print beside each
predicted speed (:mod:`speedtrap.validation.serving_intervals`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from speedtrap.cli.common import shown

if TYPE_CHECKING:
    from speedtrap.validation.serving_intervals import PredictionInterval

PER_CHIP = {"tok_s_per_user": "tok_s_per_user", "tok_s_per_chip": "tok_s_per_gpu"}
"""The columns of a frontier that carry an interval, and the measured metric whose held-out errors
set it (a chip counts as a GPU, as in the measurements table)."""


def unit_intervals(hardware: str, stack: str | None) -> dict[str, PredictionInterval]:
    """Per column of :data:`PER_CHIP`, the interval of a prediction of 1 (a factor to scale by)."""
    from speedtrap.validation.serving_intervals import STACKS, prediction_interval

    if stack is not None and stack not in STACKS.values():
        raise ValueError(f"--stack {stack!r}: one of {', '.join(STACKS.values())}")
    return {
        column: prediction_interval(1.0, metric, hardware, stack=stack) for column, metric in PER_CHIP.items()
    }


def scaled(unit: PredictionInterval, predicted: float) -> tuple[float, float]:
    """The interval of ``predicted`` from the unit interval of its metric."""
    return predicted * unit.low, predicted * unit.high


def interval_record(unit: PredictionInterval, predicted: float) -> dict[str, float]:
    """The ``--json`` record of one predicted speed's interval: its low and high ends."""
    low, high = scaled(unit, predicted)
    return {"low": low, "high": high}


def interval_cell(unit: PredictionInterval, predicted: float) -> str:
    """``low–high`` for a table cell, in the prediction's unit."""
    low, high = scaled(unit, predicted)
    return f"{shown(low, '.4g')}–{shown(high, '.4g')}"


def describe(units: dict[str, PredictionInterval]) -> dict[str, dict[str, Any]]:
    """The ``--json`` description of the intervals: per column, the quantiles and what they rest on."""
    out: dict[str, dict[str, Any]] = {}
    for column, unit in units.items():
        record = unit.as_dict()
        del record["low"], record["high"]
        record["factor_low"], record["factor_high"] = unit.low, unit.high
        out[column] = record
    return out


def footnote(units: dict[str, PredictionInterval]) -> str:
    """One sentence per column: the interval's level, quantiles, count and scope."""
    parts = []
    for column, unit in units.items():
        name = "per user" if column == "tok_s_per_user" else "per chip"
        rough = "; rough: fewer than 10 residuals" if unit.rough else ""
        parts.append(
            f"{name}: ×{unit.low:.2f} to ×{unit.high:.2f} (log errors' 2.5% and 97.5% quantiles "
            f"{unit.q_low:+.3f} and {unit.q_high:+.3f}, {unit.count} held-out residuals of "
            f"{unit.scope}{rough})"
        )
    return (
        f"{100 * next(iter(units.values())).level:.0f}% prediction intervals for the measured speed, from "
        "the held-out errors of speedtrap validate serving (leave one configuration group out): "
        + "; ".join(parts)
        + "."
    )
