"""Two intervals for every difference: seed noise and behavioural uncertainty (docs/intervals.md).

A difference (an arm minus the baseline, paired on member and seed) is measured under K members of
a calibrated ensemble — parameter sets of the behaviour that history matching could not rule out —
with r seeds each, every member on seeds of its own (a nested design). Its values follow the
one-way random-effects model

    d_kj = μ + b_k + e_kj,   b_k ~ (0, σ²_b) the member's effect,   e_kj ~ (0, σ²_w) the seed's,

and are split by the method of moments (balanced or not; n_k values of member k, N in all):

* the **grand mean** μ̂ is the mean of the members' means (every member is equally likely);
* the **within-member** mean square ``MSW = Σ_k Σ_j (d_kj − d̄_k)² / (N − K)`` estimates σ²_w;
* the **between-member** component ``σ̂²_b = max(0, (MSB − MSW) / n₀)`` with
  ``MSB = Σ_k n_k (d̄_k − d̄)² / (K − 1)`` and ``n₀ = (N − Σ n_k² / N) / (K − 1)`` (= r when balanced).

Two 95% intervals follow:

* **seed noise**: ``μ̂ ± t(N − K) · √(MSW · Σ_k (1/n_k) / K²)``, the interval the seeds leave on the
  ensemble's mean with the members held fixed. With one member (a single parameter set) it is the
  paired Student-t interval over seeds that ``compare`` has always printed. More seeds narrow it.
* **behavioural uncertainty**: the central 95% of the **members' means** (their empirical 2.5% and
  97.5% quantiles, linearly interpolated), the spread of the effect across the parameter sets the
  calibration could not rule out. It never leaves the range of values the members produced, so a
  share stays a share and a ratio stays positive (the normal-theory prediction interval it replaces,
  ``μ̂ ± t(ν)·√(σ̂²_b + Var(μ̂))``, gave a fixing share of −29 to +43 points from 3 members). With K
  members its ends lie within the lowest and highest two members' means; each member's mean carries
  its own seed noise (s²/r), so with few seeds per member it is a little wide (a note says when that
  noise exceeds the members' spread). More seeds do not narrow it; only a better-constrained
  calibration does. Below :data:`MIN_MEMBERS` members there is no behavioural interval: "too few
  members (K)" (:func:`behaviour_words`).

Whichever interval is wider **dominates** (seed noise, when the members' spread is estimated at
0 by the method of moments). The warnings say when K or r are too small to mean much.

**Break-even intervals.** A net value that is linear in a price, ``net_kj(x) = a_kj + b_kj · x``
(the developer cost, the price multiple), breaks even at ``x* = −ā / b̄`` (ā, b̄ the grand means):
its point estimate's sign at the price in force is the mean net value's. Each interval of x* is the
set of x at which that interval of ``net(x)`` contains zero (a Fieller-type inversion for the seed
interval; for the behavioural one, the x at which the members' 2.5–97.5% quantiles of
``ā_k + b̄_k·x`` straddle zero, found on a grid and refined by root finding), so at the
price in force the break-even interval holds the price exactly when the net value's interval holds
zero: the two can never contradict each other. Such a set may be unbounded or two rays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

__all__ = [
    "DIFFERENCE_COLUMNS",
    "DOMINANT",
    "FEW_MEMBERS",
    "MIN_MEMBERS",
    "BreakEven",
    "TwoIntervals",
    "behaviour_words",
    "break_even",
    "describe_set",
    "dominance_phrase",
    "two_interval_differences",
    "two_intervals",
]

CONFIDENCE = 0.95
MIN_MEMBERS = 5
"""Fewest members from which a behavioural interval is given: below it, "too few members (K)". With
K members the central 95% of their means is about their range, and the range of K draws covers a new
member's value with probability (K − 1)/(K + 1) (distribution-free): 67% at K = 5, 82% at K = 10 —
the rough end of what an interval can be read as (assumption: below 5, i.e. under two-thirds, it
would mislead)."""
FEW_MEMBERS = 10
"""Below this many members the behavioural interval is flagged as rough: its ends are the members'
extremes, and a range of K covers a new member with probability (K − 1)/(K + 1) < 82%."""
DOMINANT = ("seed noise", "behavioural uncertainty", "n/a")
"""Which interval dominates: the wider of the two, or ``n/a`` without a behavioural interval."""


@dataclass(frozen=True)
class TwoIntervals:
    """A difference's mean with its seed-noise and behavioural-uncertainty 95% intervals (same
    unit as the values; NaN where not estimable), the variance components and the caveats."""

    mean: float
    n: int
    members: int
    seeds_per_member: float
    """Mean number of values per member (r when balanced)."""
    seed_low: float
    seed_high: float
    behaviour_low: float
    behaviour_high: float
    sd_seed: float
    """√MSW: the standard deviation of one run's value about its member's mean."""
    sd_behaviour: float
    """σ̂_b: the standard deviation of the members' effects (method of moments, ≥ 0)."""
    dominant: str
    """One of :data:`DOMINANT`."""
    notes: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class _Components:
    """The decomposition of a vector statistic (columns of ``values``): grand mean, pooled
    within-member covariance per run, the seed variance factor Σ(1/n_k)/K², the between-member
    covariance by moments (untruncated) and the degrees of freedom."""

    mean: np.ndarray
    within: np.ndarray
    seed_factor: float
    between: np.ndarray
    members: int
    n: int
    df_within: int
    msb: np.ndarray
    n0: float


def _components(values: np.ndarray, members: np.ndarray) -> _Components:
    labels, index = np.unique(members, return_inverse=True)
    k, n = labels.size, values.shape[0]
    counts = np.bincount(index, minlength=k).astype(float)
    sums = np.zeros((k, values.shape[1]))
    np.add.at(sums, index, values)
    means = sums / counts[:, None]
    resid = values - means[index]
    df_within = n - k
    within = resid.T @ resid / df_within if df_within > 0 else np.full((values.shape[1],) * 2, math.nan)
    grand = means.mean(axis=0)
    if k > 1:
        overall = values.mean(axis=0)
        dev = means - overall
        msb = (dev * counts[:, None]).T @ dev / (k - 1)
        n0 = (n - float((counts**2).sum()) / n) / (k - 1)
        between = (msb - within) / n0 if df_within > 0 else msb / n0
    else:
        between = msb = np.full((values.shape[1],) * 2, math.nan)
        n0 = math.nan
    return _Components(grand, within, float((1.0 / counts).sum()) / k**2, between, k, n, df_within, msb, n0)


def _clean(values: pd.DataFrame | np.ndarray, members: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(values, dtype=float)
    x = x[:, None] if x.ndim == 1 else x
    m = np.zeros(len(x)) if members is None else np.asarray(members)
    keep = ~np.isnan(x).any(axis=1)
    return x[keep], m[keep]


def _t(df: float) -> float:
    return float(stats.t.ppf((1 + CONFIDENCE) / 2, df)) if df >= 1 else math.nan


def _member_means(values: np.ndarray, members: np.ndarray) -> np.ndarray:
    """Each member's mean of ``values`` (rows: runs; members in order of first label)."""
    _, index = np.unique(members, return_inverse=True)
    counts = np.bincount(index).astype(float)
    if values.ndim == 1:
        return np.asarray(np.bincount(index, weights=values) / counts, dtype=float)
    return np.column_stack([np.bincount(index, weights=col) / counts for col in values.T])


def _member_quantiles(means: np.ndarray) -> tuple[float, float]:
    """The central :data:`CONFIDENCE` range of the members' means (linear interpolation)."""
    tail = (1 - CONFIDENCE) / 2
    low, high = np.quantile(means, [tail, 1 - tail], axis=0)
    return float(low), float(high)


def behaviour_words(low: float, high: float, members: int, fmt: str = "{:+.3g}") -> str:
    """The behavioural interval as printed: ``[low, high]``, or "too few members (K)" below
    :data:`MIN_MEMBERS` members, or "n/a" with one parameter set."""
    if members < 2:
        return "n/a"
    if members < MIN_MEMBERS or math.isnan(low):
        return f"too few members ({members})"
    return f"[{fmt.format(low)}, {fmt.format(high)}]"


def two_intervals(
    values: np.ndarray | pd.Series, members: np.ndarray | pd.Series | None = None
) -> TwoIntervals:
    """The mean of ``values`` (one per run; NaNs left out) with its two 95% intervals (module
    docstring); ``members`` gives each run's ensemble member (``None``: one parameter set)."""
    x, m = _clean(np.asarray(values, dtype=float), None if members is None else np.asarray(members))
    if x.size == 0:
        nan = math.nan
        return TwoIntervals(nan, 0, 0, nan, nan, nan, nan, nan, nan, nan, "n/a", ("no values",))
    c = _components(x, m)
    mean = float(c.mean[0])
    sd_seed = math.sqrt(c.within[0, 0]) if c.df_within > 0 else math.nan
    half_seed = _t(c.df_within) * math.sqrt(c.within[0, 0] * c.seed_factor) if c.df_within > 0 else math.nan
    notes: list[str] = []
    if c.df_within < 1:
        notes.append("one run per member: no seed interval, and the behavioural interval includes seed noise")
    var_b = float(c.between[0, 0])
    behaviour_low = behaviour_high = math.nan
    if c.members < 2:
        sd_b = math.nan
    else:
        sd_b = math.sqrt(max(var_b, 0.0)) if math.isfinite(var_b) else math.nan
        if c.members < MIN_MEMBERS:
            notes.append(f"too few members ({c.members}) for a behavioural interval (at least {MIN_MEMBERS})")
        else:
            behaviour_low, behaviour_high = _member_quantiles(_member_means(x[:, 0], m))
            if not var_b > 0:
                notes.append(
                    "the members' spread is not distinguishable from seed noise (between-member variance "
                    "estimated at or below 0)"
                )
            if c.df_within > 0 and c.within[0, 0] / c.n0 > max(var_b, 0.0):
                notes.append(
                    "each member's mean is noisier than the members differ (seed variance per member mean "
                    "above the between-member variance): more seeds per member would sharpen the "
                    "behavioural interval"
                )
            if c.members < FEW_MEMBERS:
                notes.append(
                    f"behavioural interval from only {c.members} members: about their range, which covers "
                    f"a new member with probability {(c.members - 1) / (c.members + 1):.0%}"
                )
    half_b = (behaviour_high - behaviour_low) / 2
    if math.isnan(half_b):
        dominant = "n/a"
    elif not var_b > 0:  # no between-member spread: the members' range is their means' own noise
        dominant = "seed noise"
    elif math.isnan(half_seed):
        dominant = "behavioural uncertainty"
    else:
        dominant = "behavioural uncertainty" if half_b > half_seed else "seed noise"
    return TwoIntervals(
        mean=mean,
        n=c.n,
        members=c.members,
        seeds_per_member=c.n / c.members,
        seed_low=mean - half_seed,
        seed_high=mean + half_seed,
        behaviour_low=behaviour_low,
        behaviour_high=behaviour_high,
        sd_seed=sd_seed,
        sd_behaviour=sd_b,
        dominant=dominant,
        notes=tuple(notes),
    )


def dominance_phrase(result: TwoIntervals) -> str:
    """Which interval dominates, in words, with the two half-widths' ratio."""
    if result.dominant == "n/a":
        return "no behavioural interval (one parameter set)"
    seed = (result.seed_high - result.seed_low) / 2
    behaviour = (result.behaviour_high - result.behaviour_low) / 2
    if not seed > 0:
        return f"{result.dominant} dominates"
    ratio = behaviour / seed
    if result.dominant == "seed noise" and ratio > 1:
        return (
            "seed noise dominates (the members' spread is estimated at 0: the behavioural interval "
            "is the noise of the members' mean alone)"
        )
    return f"{result.dominant} dominates (behavioural interval {ratio:.2g}× as wide as the seed interval)"


Pieces = tuple[tuple[float, float], ...]
"""A set of reals as closed pieces (low, high), ±inf for an unbounded end, in increasing order."""


@dataclass(frozen=True)
class BreakEven:
    """Where a net value linear in a price x breaks even: the point ``x*`` (NaN if none), which side
    pays (``above``/``below`` x*, ``always``/``never`` on x > 0, or ``n/a``), and the sets of x > 0
    at which the seed-noise and the behavioural interval of the net value contain zero (where
    whether it pays is not resolved); ``behaviour`` is ``None`` without a behavioural interval."""

    point: float
    pays: str
    seed: Pieces
    behaviour: Pieces | None
    root: float = math.nan
    """−ā/b̄ whatever its sign (NaN when b̄ = 0): ``point`` is it when positive."""


def _quadratic_set(a2: float, b1: float, c0: float) -> list[tuple[float, float]]:
    """{x: a2·x² + 2·b1·x + c0 ≤ 0} as pieces."""
    inf = math.inf
    scale = max(abs(a2), abs(b1), abs(c0), 1e-300)
    if abs(a2) <= 1e-12 * scale:
        if abs(b1) <= 1e-12 * scale:
            return [(-inf, inf)] if c0 <= 0 else []
        root = -c0 / (2 * b1)
        return [(root, inf)] if b1 < 0 else [(-inf, root)]
    disc = b1 * b1 - a2 * c0
    if disc < 0:
        return [] if a2 > 0 else [(-inf, inf)]
    r1, r2 = sorted(((-b1 - math.sqrt(disc)) / a2, (-b1 + math.sqrt(disc)) / a2))
    return [(r1, r2)] if a2 > 0 else [(-inf, r1), (r2, inf)]


def _positive(pieces: list[tuple[float, float]]) -> Pieces:
    out = [(max(lo, 0.0), hi) for lo, hi in pieces if hi >= 0]
    return tuple(sorted(out))


def break_even(
    a: np.ndarray, b: np.ndarray, members: np.ndarray | None = None, *, seed_only: bool = False
) -> BreakEven:
    """The break-even of ``net = a + b·x`` (per run; module docstring) over x > 0."""
    x, m = _clean(np.column_stack([np.asarray(a, float), np.asarray(b, float)]), members)
    if x.size == 0:
        return BreakEven(math.nan, "n/a", (), None, math.nan)
    c = _components(x, m)
    am, bm = float(c.mean[0]), float(c.mean[1])
    if bm == 0:
        point, pays = math.nan, ("always" if am > 0 else "never" if am < 0 else "n/a")
    else:
        point = -am / bm
        if point <= 0:
            point, pays = math.nan, ("always" if bm > 0 else "never")
        else:
            pays = "above" if bm > 0 else "below"

    def inverted(matrix: np.ndarray, k: float) -> list[tuple[float, float]]:
        return _quadratic_set(
            bm * bm - k * matrix[1, 1], am * bm - k * matrix[0, 1], am * am - k * matrix[0, 0]
        )

    seed: Pieces = ()
    if c.df_within > 0:
        seed = _positive(inverted(c.within * c.seed_factor, _t(c.df_within) ** 2))
    behaviour: Pieces | None = None
    if c.members >= MIN_MEMBERS and not seed_only:
        behaviour = _behaviour_set(_member_means(x, m), am, bm)
    return BreakEven(point, pays, seed, behaviour, -am / bm if bm != 0 else math.nan)


GRID = 4001
"""Points of the log grid (16 decades about the break-even) on which the behavioural set is found
before its ends are refined by root finding."""


def _behaviour_set(means: np.ndarray, am: float, bm: float) -> Pieces:
    """{x > 0: the members' central 95% of net(x) = ā_k + b̄_k·x holds 0} (``means``: one row of
    (ā_k, b̄_k) per member): the quantiles are piecewise linear in x, so the set is found on a log
    grid and its ends refined (Brent's method)."""
    from scipy import optimize

    scale = abs(am / bm) if bm != 0 and am != 0 else 1.0
    grid = np.union1d(np.geomspace(scale * 1e-8, scale * 1e8, GRID), [abs(am / bm)] if bm else [])
    grid = grid[grid > 0]
    tail = (1 - CONFIDENCE) / 2

    def gap(x: np.ndarray | float) -> np.ndarray:
        x = np.atleast_1d(np.asarray(x, float))
        nets = means[:, :1] + means[:, 1:2] * x[None, :]
        low, high = np.quantile(nets, [tail, 1 - tail], axis=0)
        return np.asarray(np.maximum(low, -high))  # ≤ 0 exactly when low ≤ 0 ≤ high

    inside = gap(grid) <= 0
    pieces: list[tuple[float, float]] = []
    start = 0.0 if inside[0] else math.nan
    for i in range(1, grid.size):
        if inside[i] == inside[i - 1]:
            continue
        edge = float(optimize.brentq(lambda x: float(gap(x)[0]), grid[i - 1], grid[i], xtol=1e-12 * grid[i]))
        if inside[i]:
            start = edge
        else:
            pieces.append((start, edge))
    if inside[-1]:
        pieces.append((start, math.inf))
    return tuple(pieces)


def describe_set(pieces: Pieces | None, fmt: str = "{:,.2f}") -> str:
    """A set of x > 0 in words: "14 to 52", "above 14", "everywhere", "nowhere"."""
    if pieces is None:
        return "n/a"
    if not pieces:
        return "nowhere"
    words = []
    for lo, hi in pieces:
        if lo <= 0 and math.isinf(hi):
            return "everywhere"
        if math.isinf(hi):
            words.append("above " + fmt.format(lo))
        elif lo <= 0:
            words.append("below " + fmt.format(hi))
        else:
            words.append(f"{fmt.format(lo)} to {fmt.format(hi)}")
    return " and ".join(words)


DIFFERENCE_COLUMNS = (
    "arm",
    "outcome",
    "n",
    "baseline_mean",
    "level_mean",
    "mean",
    "std",
    "ci_low",
    "ci_high",
    "behaviour_low",
    "behaviour_high",
    "sd_seed",
    "sd_behaviour",
    "dominant",
    "dominance",
    "members",
    "seeds_per_member",
    "ratio",
    "notes",
)
"""Columns of :func:`two_interval_differences`: ``ci_low``/``ci_high`` are the seed-noise interval,
``behaviour_low``/``behaviour_high`` the behavioural one (NaN with one parameter set)."""


def two_interval_differences(
    runs: pd.DataFrame, factor: str, baseline: object, outcomes: list[str]
) -> pd.DataFrame:
    """Each level of ``factor`` minus ``baseline``, per outcome, paired on ``seed`` and ``member``
    (a ``member`` column: the ensemble member; without one, one parameter set), with both intervals
    (:data:`DIFFERENCE_COLUMNS`). Pairs with a NaN on either side are left out for that outcome."""
    keys = ["member", "seed"] if "member" in runs.columns else ["seed"]
    base = runs[runs[factor] == baseline].set_index(keys)
    rows = []
    for level in runs[factor].drop_duplicates():
        if level == baseline:
            continue
        arm = runs[runs[factor] == level].set_index(keys)
        for outcome in outcomes:
            pairs = pd.DataFrame({"b": base[outcome], "a": arm[outcome]}).dropna()
            diff = (pairs["a"] - pairs["b"]).to_numpy(float)
            members = pairs.index.get_level_values("member").to_numpy() if "member" in keys else None
            result = two_intervals(diff, members)
            base_mean, level_mean = float(pairs["b"].mean()), float(pairs["a"].mean())
            rows.append(
                {
                    "arm": level,
                    "outcome": outcome,
                    "n": result.n,
                    "baseline_mean": base_mean,
                    "level_mean": level_mean,
                    "mean": result.mean,
                    "std": float(diff.std(ddof=1)) if diff.size > 1 else math.nan,
                    "ci_low": result.seed_low,
                    "ci_high": result.seed_high,
                    "behaviour_low": result.behaviour_low,
                    "behaviour_high": result.behaviour_high,
                    "sd_seed": result.sd_seed,
                    "sd_behaviour": result.sd_behaviour,
                    "dominant": result.dominant,
                    "dominance": dominance_phrase(result),
                    "members": result.members,
                    "seeds_per_member": result.seeds_per_member,
                    "ratio": level_mean / base_mean if base_mean else math.nan,
                    "notes": "; ".join(result.notes),
                }
            )
    return pd.DataFrame(rows, columns=list(DIFFERENCE_COLUMNS))
