"""Which behaviour parameters flip a decision within their sourced range, one at a time from the
ensemble's centre (issue 40, point 7; docs/decisions.md).

The dominance rule that once ranked parameters by their share of the variance of time shares over
the whole prior missed the parameter that decides: patience flips AI against by hand within its
sourced 10–600 s. Here every decision is checked where it is taken: the **centre member** of the
calibrated ensemble (its medoid: the member whose parameters' ranks lie closest to the median ranks)
is run on every arm of the comparison, with one parameter at a time set to the low and then the high
end of its sourced range (``behaviour_parameters.csv``), on the same seeds; a parameter **flips** a
decision when the decision's mean net value per developer-day (USD, as ``compare`` prices it) has
opposite signs at the two ends. A flipping parameter must be constrained by a calibration target or
be reported as that decision's boundary (the README's decisions section; a test holds it).

Besides the calibrated parameters, the check runs the ends of every **unfitted constant**
(``unfitted_constants.csv``: the shape constants no calibration varies, such as the spread of
patience over developers, each with the range it could take). Each end's net value carries its
standard error over the paired seeds; a flip is **clear** when both ends' seed 95% intervals
(t over the seeds) exclude 0, else it may be the seeds' noise, and the table says which.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from speedtrap.config.scenario import Scenario
from speedtrap.experiments.ensemble import member_overrides, scenario_kind
from speedtrap.validation.parameters import applies_to, load_parameters

__all__ = ["FLIP_COLUMNS", "centre_member", "decision_flips", "parameters_and_constants"]

FLIP_COLUMNS = (
    "decision",
    "parameter",
    "kind",
    "low",
    "high",
    "net_at_low",
    "net_at_high",
    "se_at_low",
    "se_at_high",
    "flips",
    "clear",
)
"""Columns of :func:`decision_flips`: the parameter (``kind``: ``calibrated`` or ``unfitted
constant``), its sourced ends, the decision's mean net value per developer-day (USD) at each with
its standard error over the seeds, whether the signs differ, and whether both ends' seed 95%
intervals exclude 0 (``clear``)."""

Decision = tuple[str, str, str]
"""(label, reference arm, arm): the arm's net value is against the reference."""
Summarize = Callable[[Scenario, int], dict[str, float]]


def centre_member(members: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """The ensemble's medoid: the member whose parameters' ranks (over the members) lie closest, in
    summed absolute difference, to the median rank of each parameter."""
    frame = pd.DataFrame([dict(m) for m in members])
    ranks = frame.rank(pct=True)
    distance = (ranks - ranks.median()).abs().sum(axis=1)
    return {str(k): float(v) for k, v in frame.loc[int(distance.idxmin())].items()}


def parameters_and_constants() -> pd.DataFrame:
    """The calibrated parameters (``kind`` ``calibrated``) and the unfitted constants (``unfitted
    constant``), in one table of the parameters table's columns."""
    from speedtrap.validation.parameters import CONSTANTS_FILE

    return pd.concat(
        [
            load_parameters().assign(kind="calibrated"),
            load_parameters(CONSTANTS_FILE).assign(kind="unfitted constant"),
        ],
        ignore_index=True,
    )


def _net(
    arms: Mapping[str, Scenario], runs: Mapping[str, list[dict[str, float]]], reference: str, arm: str
) -> tuple[float, float]:
    from speedtrap.analysis.value import OTHER_WORK, net_value_per_dev_day

    def column(label: str, key: str) -> np.ndarray:
        return np.array([r.get(key, 0.0) for r in runs[label]], dtype=float)

    tb = column(reference, "tasks_per_dev_day") + column(reference, OTHER_WORK)
    ta = column(arm, "tasks_per_dev_day") + column(arm, OTHER_WORK)
    net = net_value_per_dev_day(
        tb,
        column(reference, "usd_per_dev_day"),
        ta,
        column(arm, "usd_per_dev_day"),
        value=arms[arm].value,
        workday_s=arms[arm].workday_s,
    )
    net = net[np.isfinite(net)]
    se = float(np.std(net, ddof=1) / np.sqrt(len(net))) if len(net) > 1 else math.nan
    return (float(np.mean(net)) if len(net) else math.nan), se


def _clear(mean: float, se: float, seeds: int) -> bool:
    """Whether the seed 95% interval (t with ``seeds − 1`` degrees of freedom) excludes 0."""
    from scipy.stats import t

    if not (math.isfinite(mean) and math.isfinite(se)) or seeds < 2:
        return False
    return abs(mean) > float(t.ppf(0.975, seeds - 1)) * se


def decision_flips(
    arms: Mapping[str, Scenario],
    decisions: Sequence[Decision],
    centre: Mapping[str, float],
    seeds: Sequence[int],
    summarize: Summarize,
    *,
    parameters: pd.DataFrame | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """One row per decision × parameter (:data:`FLIP_COLUMNS`) over the parameters of
    ``parameters`` (default: :func:`parameters_and_constants`) that apply to the arms' kind."""
    table = parameters_and_constants() if parameters is None else parameters
    kind = scenario_kind(next(iter(arms.values())))
    rows = [r for r in table.itertuples(index=False) if kind in applies_to(str(r.scenarios))]
    out = []
    for done, row in enumerate(rows, start=1):
        nets: dict[float, dict[str, tuple[float, float]]] = {}
        for end in (float(row.low), float(row.high)):
            member = {**centre, str(row.path): end}
            runs = {
                label: [summarize(s.with_overrides(member_overrides(s, member)[0]), seed) for seed in seeds]
                for label, s in arms.items()
            }
            nets[end] = {label: _net(arms, runs, reference, arm) for label, reference, arm in decisions}
        for label, _, _ in decisions:
            (at_low, se_low), (at_high, se_high) = nets[float(row.low)][label], nets[float(row.high)][label]
            flips = bool(np.sign(at_low) * np.sign(at_high) < 0)
            out.append(
                {
                    "decision": label,
                    "parameter": str(row.path),
                    "kind": str(getattr(row, "kind", "calibrated")),
                    "low": float(row.low),
                    "high": float(row.high),
                    "net_at_low": at_low,
                    "net_at_high": at_high,
                    "se_at_low": se_low,
                    "se_at_high": se_high,
                    "flips": flips,
                    "clear": flips
                    and _clear(at_low, se_low, len(seeds))
                    and _clear(at_high, se_high, len(seeds)),
                }
            )
        if progress is not None:
            progress(done, len(rows))
    return pd.DataFrame(out, columns=list(FLIP_COLUMNS))
