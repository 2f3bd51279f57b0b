"""What a team can measure that decides: each decision over the ensemble read against quantities a
team can measure on the tier it runs now, not only against behaviour parameters (pure functions;
docs/decisions.md, "In what a team can measure").

A decision's behaviour parameters (patience, the chance of going to other work while an agent runs,
…) are what the model needs, but a team cannot read them off anything. What it can read is how its
developers' time and money go on the tier it uses now: the share of the day spent idle while an agent
runs, waiting on it, fixing its mistakes or doing other work, its inference bill and request count per
developer-day, the tasks it completes. Every member of the calibrated ensemble, run on that tier,
gives those **measurements** (:data:`MEASUREMENTS`, each the mean over the member's runs of a
:class:`~speedtrap.models.results.RunResult` summary key), and its net value for each decision. The
same value-of-information machinery as for the parameters
(:mod:`speedtrap.analysis.decisions`) then says, per decision:

* the **EVPPI of each measurement**: what knowing it is worth before choosing, USD per developer-day
  (Strong, Oakley & Brennan 2014's regression estimator on the measurement instead of a parameter:
  the measurement is a function of all the parameters and the seeds, so its EVPPI can exceed every
  single parameter's when the decision turns on several parameters together, through one quantity a
  team can observe);
* the **break-even** of the measurement of highest EVPPI: where the regression of net value on it
  (:func:`speedtrap.analysis.decisions.conditional_mean`) crosses 0 — on the mean of the members
  with that measurement, the decision pays on one side and not on the other;
* the **boundary** in that one measurement: its PRIM box on the decision's minority side, judged for
  stability as the parameter boundaries are (:func:`speedtrap.analysis.stable_boxes.stable_prim_box`),
  where the decision depends.

A team's own figure is measured over its own days and developers, with sampling noise the members'
means (10 developers × 20 days × their seeds, in the README's command) mostly lack; the break-even is
a threshold to compare a long measurement with, not a single day's.

**A team's answer from its measurements** (:func:`consistent_members`, :func:`decide_for`): given a
team's measurements, each with its standard error, the members whose measurements the team's could
have come from are kept as history matching keeps parameter sets — the implausibility of a member is
the largest over the measurements of ``|member's − team's| / standard error`` and it is kept when that
is at most :data:`speedtrap.analysis.history_matching.CUTOFF` (3, Pukelsheim's three-sigma rule) —
and the decision is read over the kept members alone: the share that pays with its Wilson 95%
interval, the mean net value and the members' central 95%. The members' own means carry little seed
noise beside a team's standard error, which is taken as the whole uncertainty.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from speedtrap.analysis.decisions import (
    conditional_mean,
    explained_share,
    minority_side,
    rank_by_evppi,
    rank_candidates,
    verdict_of_share,
    wilson_interval,
)
from speedtrap.analysis.history_matching import CUTOFF
from speedtrap.analysis.stable_boxes import StableBox, stable_prim_box

__all__ = [
    "BY_COLUMN",
    "MEASUREMENTS",
    "SHARE_UNIT",
    "Measurement",
    "MeasurementResult",
    "TeamDecision",
    "analyse_measurements",
    "break_even_interval",
    "break_even_points",
    "consistent_members",
    "decide_for",
    "measurement_rows",
    "member_measurements",
]


@dataclass(frozen=True)
class Measurement:
    """A quantity a team can measure on the tier it runs: its summary column, words, unit and how."""

    column: str
    label: str
    unit: str
    how: str

    @property
    def is_share(self) -> bool:
        """Whether it is a fraction of developer time (between 0 and 1)."""
        return self.unit == SHARE_UNIT


SHARE_UNIT = "fraction of developer time"
"""The unit of the ledger's shares."""

MEASUREMENTS: tuple[Measurement, ...] = (
    Measurement(
        "share_idle",
        "idle share",
        SHARE_UNIT,
        "time away from a running agent doing nothing else (screen recordings or time tracking: METR's "
        "2025 trial labelled such time idle)",
    ),
    Measurement(
        "share_other_work",
        "other-work share",
        SHARE_UNIT,
        "time spent on other work while agents run (time tracking)",
    ),
    Measurement(
        "waiting_share",
        "waiting share",
        SHARE_UNIT,
        "time watching an agent work: queue, first token, generation and tools (screen recordings)",
    ),
    Measurement(
        "share_reviewing",
        "reviewing share",
        SHARE_UNIT,
        "time reading the agent's output (screen recordings)",
    ),
    Measurement(
        "share_fixing",
        "fixing share",
        SHARE_UNIT,
        "time repairing the agent's mistakes and reworking escaped defects (screen recordings, or "
        "post-review time as METR measured it)",
    ),
    Measurement(
        "usd_per_dev_day",
        "inference spend",
        "USD per developer-day",
        "the provider's bill over developer-days",
    ),
    Measurement(
        "requests_per_dev_day",
        "requests",
        "requests per developer-day",
        "the provider's request count (or the agent's logs) over developer-days",
    ),
    Measurement(
        "tasks_per_dev_day",
        "tasks completed",
        "tasks per developer-day",
        "the issue tracker over developer-days",
    ),
)
"""The measurements, in the order they are listed (each a summary key of the run, or derived from
them: ``requests_per_dev_day`` = requests / developer_days)."""
BY_COLUMN: dict[str, Measurement] = {m.column: m for m in MEASUREMENTS}
"""The measurements by their column."""


def member_measurements(runs: pd.DataFrame, arm: str) -> pd.DataFrame:
    """Each member's mean over its runs on ``arm`` of every :data:`MEASUREMENTS` column (``runs``:
    compare's runs, with ``arm``, ``member`` and the run summaries); one row per member."""
    mine = runs[runs["arm"] == arm]
    if mine.empty:
        raise ValueError(f"no runs on arm {arm!r}")
    frame = mine.assign(requests_per_dev_day=mine["requests"] / mine["developer_days"])
    return frame.groupby("member")[[m.column for m in MEASUREMENTS]].mean()


def break_even_points(inb: np.ndarray, values: np.ndarray) -> list[float]:
    """Where the regression of ``inb`` on ``values`` (:func:`conditional_mean`) changes sign, in the
    measurement's units: the midpoint between the two neighbouring members (sorted by the measurement)
    whose fitted values lie on either side of 0. Empty when the fit never crosses 0."""
    x, v = np.asarray(inb, dtype=float), np.asarray(values, dtype=float)
    keep = np.isfinite(x) & np.isfinite(v)
    x, v = x[keep], v[keep]
    if len(x) < 2 or np.ptp(v) == 0:
        return []
    fitted = conditional_mean(x, v)
    order = np.argsort(v, kind="stable")
    g, s = fitted[order], v[order]
    return [
        float((s[i] + s[i + 1]) / 2)
        for i in range(len(g) - 1)
        if (g[i] > 0) != (g[i + 1] > 0) and s[i] != s[i + 1]
    ]


BREAK_EVEN_BOOTSTRAPS = 200
"""Bootstrap resamples of the members behind a break-even's interval (its percentiles move by well
under its width between reruns at this count; assumption)."""


def break_even_interval(
    inb: np.ndarray, values: np.ndarray, *, draws: int = BREAK_EVEN_BOOTSTRAPS, seed: int = 0
) -> tuple[float, float]:
    """A percentile bootstrap 95% interval over the members of the single break-even of
    :func:`break_even_points`: members resampled with replacement ``draws`` times, the regression
    refitted, and in each resample the crossing nearest the whole sample's taken (a resample whose fit
    never crosses 0 counts at the end of the measurement's range the fit stays on the wrong side of,
    so that an unsure threshold widens the interval instead of vanishing from it). NaNs when the whole
    sample has no single crossing. Deterministic for a ``seed``."""
    x, v = np.asarray(inb, dtype=float), np.asarray(values, dtype=float)
    keep = np.isfinite(x) & np.isfinite(v)
    x, v = x[keep], v[keep]
    points = break_even_points(x, v)
    if len(points) != 1:
        return math.nan, math.nan
    centre = points[0]
    pays_below = _pays_below(x, v)
    rng = np.random.default_rng(seed)
    found = []
    for _ in range(draws):
        index = rng.integers(0, len(x), len(x))
        crossings = break_even_points(x[index], v[index])
        if crossings:
            found.append(min(crossings, key=lambda p: abs(p - centre)))
            continue
        # the fit stays on one side: paying everywhere puts the threshold past the end it pays
        # towards, paying nowhere past the other
        everywhere = bool(x[index].mean() > 0)
        found.append(float(v.max() if everywhere == pays_below else v.min()))
    low, high = np.percentile(found, [2.5, 97.5])
    return float(low), float(high)


def _pays_below(inb: np.ndarray, values: np.ndarray) -> bool:
    """Whether the regression of ``inb`` on ``values`` is above 0 at the lowest measurement (the side
    of a single break-even where the decision pays)."""
    return bool(conditional_mean(inb, values)[np.argmin(values)] > 0)


@dataclass(frozen=True)
class MeasurementResult:
    """One decision read against the measurements: each one's EVPPI (USD per developer-day, highest
    first) and explained share of the net value's variance, the measurement of highest EVPPI
    (``first``), its break-even points and, where the decision depends, its stable box."""

    label: str
    evppi: pd.Series
    explained: pd.Series
    first: str
    break_even: tuple[float, ...]
    stable: StableBox | None
    seeks: str
    depends: bool
    side: str = ""
    """"below" or "above": the side of a single break-even where the fitted net value is > 0."""
    break_even_low: float = math.nan
    """The single break-even's bootstrap 95% interval over the members (:func:`break_even_interval`)."""
    break_even_high: float = math.nan

    def boundary(self) -> str:
        """The boundary in the first measurement, in words ("" where the decision is settled)."""
        if self.stable is None:
            return ""
        return self.stable.describe(self.seeks, {c: m.label for c, m in BY_COLUMN.items()})

    def break_even_words(self) -> str:
        """E.g. "idle share 0.297 (net value > 0 below it)"; "" without a measurement or crossing."""
        if not self.first or not self.break_even:
            return ""
        label = BY_COLUMN[self.first].label if self.first in BY_COLUMN else self.first
        if len(self.break_even) > 1:
            points = ", ".join(f"{p:.3g}" for p in self.break_even)
            return f"{label}: the fit crosses 0 at {points} (no single threshold)"
        point = self.break_even[0]
        interval = (
            f"; bootstrap 95% over members {self.break_even_low:.3g}–{self.break_even_high:.3g}"
            if math.isfinite(self.break_even_low)
            else ""
        )
        return f"{label} {point:.3g} (the fitted net value is > 0 {self.side} it{interval})"


def analyse_measurements(
    label: str, inb_by_member: pd.Series, measurements: pd.DataFrame, *, stability: bool = True
) -> MeasurementResult:
    """The decision ``label`` (each member's mean net value, ``inb_by_member``) read against the
    members' ``measurements`` (:func:`member_measurements`; constant columns are left out): the
    module docstring's EVPPI, break-even and boundary."""
    inb = inb_by_member.dropna()
    x = measurements.loc[inb.index]
    x = x.loc[:, [c for c in x.columns if x[c].nunique() > 1]]
    values = inb.to_numpy(float)
    ranked = rank_by_evppi(values, x)
    explained = pd.Series(
        {str(c): explained_share(values, x[c].to_numpy(float)) for c in x.columns}, dtype=float
    )
    chosen = rank_candidates(values, x, ranked, 1)
    first = chosen[0] if chosen else ""
    depends = bool(len(values)) and verdict_of_share(float((values > 0).mean())) == "depends"
    seeks, flags = minority_side(values)
    points = break_even_points(values, x[first].to_numpy(float)) if first else []
    side, low, high = "", math.nan, math.nan
    if len(points) == 1:
        column = x[first].to_numpy(float)
        side = "below" if _pays_below(values, column) else "above"
        low, high = break_even_interval(values, column)
    stable = None
    if depends and first and stability:
        stable = stable_prim_box(x[[first]], flags)
    return MeasurementResult(
        label=label,
        evppi=ranked,
        explained=explained.reindex(ranked.index),
        first=first,
        break_even=tuple(points),
        stable=stable,
        seeks=seeks,
        depends=depends,
        side=side,
        break_even_low=low,
        break_even_high=high,
    )


def measurement_rows(results: Sequence[MeasurementResult]) -> list[dict[str, object]]:
    """One plain row per decision × measurement (``measurements.csv``): EVPPI, explained share, unit
    and how a team measures it."""
    rows: list[dict[str, object]] = []
    for r in results:
        for column, value in r.evppi.items():
            m = BY_COLUMN[str(column)]
            rows.append(
                {
                    "decision": r.label,
                    "measurement": column,
                    "label": m.label,
                    "unit": m.unit,
                    "evppi_usd_per_dev_day": value,
                    "explained_share": r.explained.get(column, math.nan),
                    "how_to_measure": m.how,
                }
            )
    return rows


def consistent_members(
    measurements: pd.DataFrame, observed: Mapping[str, tuple[float, float]], *, cutoff: float = CUTOFF
) -> pd.DataFrame:
    """Per member (``measurements``' rows): the implausibility of each ``observed`` measurement
    (``{column: (value, standard error)}``), ``|member's − value| / standard error``, the largest
    (``implausibility``) and whether it is at most ``cutoff`` (``kept``). Raises ``ValueError`` for an
    unknown measurement or a standard error that is not positive."""
    if not observed:
        raise ValueError("no measurement given")
    out = pd.DataFrame(index=measurements.index)
    for column, (value, error) in observed.items():
        if column not in BY_COLUMN:
            raise ValueError(f"unknown measurement {column!r} (known: {', '.join(sorted(BY_COLUMN))})")
        if not (math.isfinite(error) and error > 0) or not math.isfinite(value):
            raise ValueError(f"{column}: the value must be finite and its standard error positive")
        out[column] = (measurements[column] - value).abs() / error
    out["implausibility"] = out[list(observed)].max(axis=1)
    out["kept"] = out["implausibility"] <= cutoff
    return out


@dataclass(frozen=True)
class TeamDecision:
    """A decision over the members consistent with a team's measurements: how many, the share that
    pays (Wilson 95%), the mean net value and the members' central 95%, USD per developer-day."""

    label: str
    members: int
    share_paying: float
    share_low: float
    share_high: float
    mean_net: float
    net_low: float
    net_high: float

    def verdict(self, min_members: int) -> str:
        """ "pays" / "does not pay" (settled at the decisions' 5%/95% rule), "depends", or "too few
        members (n)" below ``min_members``."""
        if self.members < min_members:
            return f"too few members ({self.members})"
        return verdict_of_share(self.share_paying)


def decide_for(label: str, inb_by_member: pd.Series, kept: pd.Series) -> TeamDecision:
    """The decision ``label`` over the members ``kept`` (a boolean per member, from
    :func:`consistent_members`), from each member's mean net value ``inb_by_member``."""
    values = inb_by_member.dropna()
    values = values[kept.reindex(values.index, fill_value=False).to_numpy(bool)].to_numpy(float)
    n = len(values)
    paying = int((values > 0).sum())
    low, high = wilson_interval(paying, n)
    return TeamDecision(
        label=label,
        members=n,
        share_paying=paying / n if n else math.nan,
        share_low=low,
        share_high=high,
        mean_net=float(values.mean()) if n else math.nan,
        net_low=float(np.quantile(values, 0.025)) if n else math.nan,
        net_high=float(np.quantile(values, 0.975)) if n else math.nan,
    )
