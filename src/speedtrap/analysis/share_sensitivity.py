"""Is any unmeasured constant dominant? The fitted / unfitted rule of the sensitivity report (pure).

The report (``speedtrap validate workflow --sensitivity``,
:mod:`speedtrap.experiments.share_sensitivity`) gives, for every behavioural parameter, its
first-order and total Sobol' indices (``S1``, ``ST``) on the headline waiting and fixing shares, and
asks whether the calibration's published targets pin it down. This module turns those indices,
and the same indices on each target's emulated statistic, into the table's verdicts.

**Operational definitions** (thresholds are assumptions, fixed before any run):

* a target **constrains** a parameter when the lower end of the interval of the parameter's total
  index on that target's statistic is at least :data:`FIT_THRESHOLD` (the parameter explains at least
  a tenth of the statistic's variance over the sourced ranges, beyond the emulator's and the Monte
  Carlo error), and the target's emulator predicts held-out runs with Q² ≥ :data:`MIN_TARGET_Q2`
  (an emulator that does not predict its own statistic cannot show what moves it);
* a parameter is **fitted** when some target constrains it — history matching can then rule out
  parts of its range through that target (whether any parameter set matches *every* target is the
  calibration's own finding, not this one's);
* a parameter is **dominant** when its total index on either share exceeds
  :data:`DOMINANCE_THRESHOLD` (the issue's 20%), and **flagged** when it is dominant and not fitted:
  an unmeasured constant that sets the headline answer.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

__all__ = [
    "DOMINANCE_THRESHOLD",
    "FIT_THRESHOLD",
    "INDEX_COLUMNS",
    "MIN_TARGET_Q2",
    "constraining_targets",
    "dominance_table",
]

DOMINANCE_THRESHOLD = 0.20
"""Total index on a headline share above which an unfitted parameter is flagged (issue 23, point 8:
"any parameter with a total index above 20% must be one fitted to a published target")."""

FIT_THRESHOLD = 0.10
"""Least lower bound of a parameter's total index on a target's statistic for the target to count
as constraining it (assumption: half the dominance bar; a parameter that explains less than a tenth
of a statistic's variance is barely moved by matching it)."""

MIN_TARGET_Q2 = 0.5
"""Least held-out Q² of a target's emulator for its indices to count (assumption: the emulator must
predict at least half of the statistic's variance at runs it was not fitted to; the seed noise of
single runs caps Q² below 1, so the 0.9 bar of a usable metamodel is not required here)."""

INDEX_COLUMNS = ("S1", "S1_low", "S1_high", "ST", "ST_low", "ST_high")
"""The columns of an indices frame besides ``factor``
(:data:`speedtrap.analysis.emulator.EMULATOR_COLUMNS`)."""


def _check(frame: pd.DataFrame, what: str) -> pd.DataFrame:
    missing = [c for c in ("factor", *INDEX_COLUMNS) if c not in frame.columns]
    if missing:
        raise ValueError(f"{what}: missing columns {', '.join(missing)}")
    return frame.set_index("factor")


def constraining_targets(
    targets: Mapping[str, pd.DataFrame],
    q2: Mapping[str, float],
    *,
    fit_threshold: float = FIT_THRESHOLD,
    min_q2: float = MIN_TARGET_Q2,
) -> dict[str, list[tuple[str, float]]]:
    """Per parameter, the targets that constrain it (see the module docstring) with the lower bound
    of its total index on each, largest first. ``targets``: per target name, an indices frame
    (``factor`` and :data:`INDEX_COLUMNS`); ``q2``: per target name, its emulator's held-out Q²
    (a target without one, or with a NaN, constrains nothing)."""
    out: dict[str, list[tuple[str, float]]] = {}
    for name, frame in targets.items():
        indexed = _check(frame, f"target {name!r}")
        good = q2.get(name, float("nan"))
        for factor, low in indexed["ST_low"].items():
            out.setdefault(str(factor), [])
            if np.isfinite(good) and good >= min_q2 and np.isfinite(low) and low >= fit_threshold:
                out[str(factor)].append((name, float(low)))
    return {factor: sorted(found, key=lambda item: -item[1]) for factor, found in out.items()}


def dominance_table(
    shares: Mapping[str, pd.DataFrame],
    targets: Mapping[str, pd.DataFrame],
    q2: Mapping[str, float],
    *,
    dominance: float = DOMINANCE_THRESHOLD,
    fit_threshold: float = FIT_THRESHOLD,
    min_q2: float = MIN_TARGET_Q2,
) -> pd.DataFrame:
    """One row per parameter: ``parameter``; per share ``s`` (the keys of ``shares``, each an
    indices frame) the columns ``s:S1``, ``s:S1_low``, … ``s:ST_high``; ``max_ST`` (the larger
    total index over the shares); ``fitted_to`` (the targets that constrain it, "; "-joined, most
    constraining first), ``fitted``, ``dominant`` (``max_ST`` > ``dominance``) and ``flag``
    (dominant and not fitted). Sorted by ``max_ST``, largest first (NaN last). ``targets`` and
    ``q2``: as :func:`constraining_targets`."""
    if not shares:
        raise ValueError("need the indices of at least one share")
    indexed = {name: _check(frame, f"share {name!r}") for name, frame in shares.items()}
    parameters = list(next(iter(indexed.values())).index)
    for name, frame in indexed.items():
        if sorted(frame.index) != sorted(parameters):
            raise ValueError(f"share {name!r}: its parameters differ from the other shares'")
    constrained = constraining_targets(targets, q2, fit_threshold=fit_threshold, min_q2=min_q2)
    rows = []
    for parameter in parameters:
        row: dict[str, object] = {"parameter": parameter}
        for name, frame in indexed.items():
            for column in INDEX_COLUMNS:
                row[f"{name}:{column}"] = float(frame.at[parameter, column])
        totals = [float(frame.at[parameter, "ST"]) for frame in indexed.values()]
        finite = [t for t in totals if np.isfinite(t)]
        best = max(finite) if finite else float("nan")
        found = constrained.get(parameter, [])
        row["max_ST"] = best
        row["fitted_to"] = "; ".join(name for name, _ in found)
        row["fitted"] = bool(found)
        row["dominant"] = bool(np.isfinite(best) and best > dominance)
        row["flag"] = bool(row["dominant"] and not found)
        rows.append(row)
    table = pd.DataFrame(rows)
    order = np.argsort(-table["max_ST"].fillna(-np.inf).to_numpy(), kind="stable")
    return table.iloc[order].reset_index(drop=True)
