"""Decisions over a calibrated ensemble: how often an arm pays, where the boundary lies, and what
knowing each behaviour parameter is worth (pure functions; docs/decisions.md).

A decision puts an ``arm`` against a ``baseline`` at a value of developer time: its incremental net
benefit per developer-day, ``INB`` (:func:`speedtrap.analysis.value.net_value_per_dev_day`: the extra
task-equivalents valued at their full cost on the baseline, minus the extra inference spend, USD),
is computed per run and averaged over each member's seeds, so that each member of the ensemble — a
parameter set history matching could not rule out — gives one ``INB_k``. Then:

* **share paying**: the share of members with ``INB_k > 0``, with its Wilson 95% interval over
  members (a member's INB is its seeds' mean, so the seed noise of that mean can put a member whose
  true INB is near 0 on either side: the share is that of the members as measured);
* **EVPI** (the expected value of perfect information, USD per developer-day):
  ``E[max(INB, 0)] − max(E[INB], 0)`` over the members — what a team would gain, per developer-day,
  by knowing its developers' behaviour exactly before choosing;
* **EVPPI of each parameter** θ: ``E_θ[max(E[INB | θ], 0)] − max(E[INB], 0)``, the value of knowing
  θ alone. ``E[INB | θ]`` is estimated by regressing the members' INB on θ (Strong, Oakley & Brennan
  2014, "Estimating multiparameter partial expected value of perfect information from a
  probabilistic sensitivity analysis sample: a nonparametric regression approach", Medical Decision
  Making 34(3): a generalised additive model of INB on the parameter). Here the smoother is a cubic
  regression spline on θ's ranks with a ridge penalty chosen by leave-one-out cross-validation
  (scikit-learn's ``SplineTransformer`` and ``RidgeCV``: a penalised spline, the single-parameter GAM
  of Strong et al.; pygam is not a dependency). The fitted values' mean equals INB's mean, so a
  parameter the regression cannot tell from noise has EVPPI near 0. It ranks what a team should
  measure first. The two parameters of highest EVPPI are also valued together (the sum of one such
  spline per parameter: Strong et al.'s additive model, without interactions).
* **boundary**: where the share paying is between 5% and 95%, the PRIM box
  (:func:`speedtrap.analysis.scenario_discovery.prim_box`) of the members on the decision's
  **minority side** — those that pay when at most half pay ("pays when patience ≥ 120 s"), those
  that do not when more than half pay ("does not pay when …"): PRIM seeks a region denser in its
  cases than the whole, which a side holding 86% of the members leaves little room for, so the rare
  outcome is the one whose region a team can be told (scenario discovery seeks the cases of interest,
  the rarer ones; Bryant & Lempert 2010) — over the one or two parameters of highest EVPPI, ties
  (EVPPI 0 for every parameter when no single one moves the conditional mean across 0) broken by the
  share of INB's variance the same regression explains; with its coverage and density, and CART's
  box beside it. With ``stability=True`` the box is also judged as the claims judge
  theirs (:func:`speedtrap.analysis.stable_boxes.stable_prim_box`: mass, quasi-p values, half-sample
  reruns and bootstrap overlap): a box that does not survive resampling is reported as "no stable
  box", with why.

With few members every figure is rough: EVPPI from fewer than :data:`MIN_EVPPI_MEMBERS` members is
not given, and the seed noise of each member's mean adds to EVPI (it cannot to EVPPI beyond what the
smoother passes through). How much it adds is measured: :func:`evpi_seed_noise` is the EVPI that the
members' means would show if every member had the ensemble's mean INB and differed only by the seed
noise of its mean (the pooled within-member variance of the runs over each member's seeds); the EVPI
of a decision that depends, not clearly above it (below :data:`EVPI_NOISE_RATIO` times it), is
flagged: more seeds per member would tell. (A settled decision's EVPI is small by construction.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from speedtrap.analysis.scenario_discovery import Box, cart_box, prim_box
from speedtrap.analysis.stable_boxes import StableBox, stable_prim_box

__all__ = [
    "BOUNDARY_SHARE",
    "MANUAL",
    "MIN_EVPPI_MEMBERS",
    "DecisionResult",
    "analyse_decision",
    "conditional_mean",
    "decision_pairs",
    "evpi",
    "evpi_seed_noise",
    "evppi",
    "explained_share",
    "inb_by_member",
    "minority_side",
    "rank_by_evppi",
    "rank_candidates",
    "verdict_of_share",
    "wilson_interval",
]

BOUNDARY_SHARE = (0.05, 0.95)
"""A decision whose share paying lies strictly between these has a boundary worth finding (below or
above it, the ensemble all but agrees)."""
MIN_EVPPI_MEMBERS = 10
"""Fewest members from which EVPPI is estimated (assumption: a spline with a handful of knots needs
about ten points to be told from its intercept)."""
EVPI_NOISE_RATIO = 2.0
"""An EVPI below this multiple of its seed-noise floor (:func:`evpi_seed_noise`) is flagged as not
clearly more than the noise of the members' means (assumption: a rule of thumb, not a test)."""
NOISE_DRAWS = 4000
"""Monte Carlo draws of the seed-noise floor (its own standard error is then well under 2% of it)."""
BOUNDARY_PARAMETERS = 2
"""The boundary is sought in this many parameters of highest EVPPI (the issue's "one or two")."""


def evpi(inb: np.ndarray) -> float:
    """``E[max(INB, 0)] − max(E[INB], 0)`` over the members' incremental net benefits (≥ 0)."""
    x = np.asarray(inb, dtype=float)
    x = x[np.isfinite(x)]
    if not len(x):
        return math.nan
    return float(np.maximum(x, 0.0).mean() - max(x.mean(), 0.0))


def evpi_seed_noise(
    net: np.ndarray, members: Sequence[int] | np.ndarray, *, draws: int = NOISE_DRAWS, seed: int = 0
) -> float:
    """The EVPI that seed noise alone would give, USD per developer-day: the mean over ``draws`` of
    :func:`evpi` of member means drawn as the overall mean of ``net`` (per-run INB) plus a normal
    error of variance s²/n_k, s² the within-member variance of the runs pooled over members (each
    member's seeds), n_k the member's runs. NaN when no member has two runs. Deterministic for a
    ``seed``."""
    frame = pd.DataFrame({"member": np.asarray(members), "net": np.asarray(net, dtype=float)}).dropna()
    groups = frame.groupby("member")["net"]
    counts = groups.count().to_numpy(float)
    dof = float((counts - 1).sum())
    if dof <= 0:
        return math.nan
    pooled = float(((groups.var(ddof=1).fillna(0.0).to_numpy(float)) * (counts - 1)).sum() / dof)
    centre = float(groups.mean().mean())
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal((draws, len(counts))) * np.sqrt(pooled / counts)
    means = centre + noise
    return float((np.maximum(means, 0.0).mean(axis=1) - np.maximum(means.mean(axis=1), 0.0)).mean())


def conditional_mean(inb: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """``E[INB | θ]`` at each member: a penalised cubic spline of INB on θ's ranks (module docstring);
    with several parameters (``theta`` of shape n × p) the sum of one such spline per parameter (an
    additive model, Strong et al.'s GAM without interactions)."""
    from scipy.stats import rankdata
    from sklearn.linear_model import RidgeCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import SplineTransformer

    t = theta.reshape(len(theta), -1)
    u = np.column_stack([(rankdata(c) - 0.5) / len(c) for c in t.T])
    u = u[:, np.ptp(u, axis=0) > 0]
    if not u.shape[1]:
        return np.full_like(inb, inb.mean())
    knots = int(min(6, max(3, len(theta) // 8)))
    model = make_pipeline(SplineTransformer(n_knots=knots, degree=3), RidgeCV(alphas=np.logspace(-3, 3, 25)))
    model.fit(u, inb)
    fitted = np.asarray(model.predict(u), dtype=float)
    return fitted - fitted.mean() + inb.mean()  # least squares keeps the mean; exact against rounding


def evppi(inb: np.ndarray, theta: np.ndarray) -> float:
    """The EVPPI of θ, USD per developer-day (module docstring); NaN below :data:`MIN_EVPPI_MEMBERS`.
    ``theta`` of shape n × p gives the EVPPI of the p parameters known together (additive model)."""
    x, t = np.asarray(inb, dtype=float), np.asarray(theta, dtype=float)
    t = t.reshape(len(t), -1)
    keep = np.isfinite(x) & np.isfinite(t).all(axis=1)
    x, t = x[keep], t[keep]
    if len(x) < MIN_EVPPI_MEMBERS:
        return math.nan
    g = conditional_mean(x, t)
    return float(max(0.0, np.maximum(g, 0.0).mean() - max(g.mean(), 0.0)))


def explained_share(inb: np.ndarray, theta: np.ndarray) -> float:
    """The share of INB's variance over the members that the EVPPI regression on ``theta`` explains
    (the variance of :func:`conditional_mean` over INB's); NaN below :data:`MIN_EVPPI_MEMBERS`."""
    x, t = np.asarray(inb, dtype=float), np.asarray(theta, dtype=float)
    t = t.reshape(len(t), -1)
    keep = np.isfinite(x) & np.isfinite(t).all(axis=1)
    x, t = x[keep], t[keep]
    if len(x) < MIN_EVPPI_MEMBERS or float(np.var(x)) == 0.0:
        return math.nan
    return float(np.var(conditional_mean(x, t)) / np.var(x))


def rank_candidates(values: np.ndarray, x: pd.DataFrame, ranked: pd.Series, count: int) -> list[str]:
    """The ``count`` columns of ``x`` (parameters or measurements) the boundary is sought in: highest
    EVPPI first, ties (all 0 when no single column moves the conditional mean across 0) broken by
    :func:`explained_share`."""
    known = ranked.dropna()
    if known.empty:
        return []
    explained = {c: explained_share(values, x[c].to_numpy(float)) for c in known.index}
    order = sorted(known.index, key=lambda c: (-known[c], -np.nan_to_num(explained[c], nan=-1.0)))
    return [str(c) for c in order[:count]]


def wilson_interval(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score 95% interval of a binomial share (Wilson 1927)."""
    if n == 0:
        return math.nan, math.nan
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class DecisionResult:
    """One decision over the members: INB per member (USD per developer-day), the share paying with
    its Wilson 95% interval, EVPI, each parameter's EVPPI (highest first) and, where the share is
    between the :data:`BOUNDARY_SHARE` ends, the PRIM and CART boxes of the paying members."""

    label: str
    members: int
    mean_inb: float
    share_paying: float
    share_low: float
    share_high: float
    evpi: float
    evppi: pd.Series
    """USD per developer-day, indexed by parameter path, highest first (NaN below the minimum)."""
    prim: Box | None = None
    cart: Box | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    inb_low: float = math.nan
    """The members' central 95% of INB (interpolated quantiles), USD per developer-day."""
    inb_high: float = math.nan
    evpi_noise: float = math.nan
    """The EVPI seed noise alone would give (:func:`evpi_seed_noise`), USD per developer-day; NaN when
    the runs per member were not given."""
    pair: tuple[str, ...] = ()
    """The parameters of highest EVPPI the boundary is sought in (one or two)."""
    pair_evppi: float = math.nan
    """Their EVPPI known together (additive model), USD per developer-day."""
    stable: StableBox | None = None
    """The boundary judged for stability (``analyse_decision(..., stability=True)``), else ``None``."""
    seeks: str = "pays"
    """The side whose region the boxes describe: "pays" when at most half the members pay, else
    "does not pay" (the minority side; module docstring)."""

    def boundary(self) -> str:
        """The boundary in words: the stable PRIM box (or "no stable box (why)") when stability was
        judged, else the PRIM box; "" when the decision has none."""
        if self.stable is not None:
            return self.stable.describe(self.seeks)
        return self.prim.describe(self.seeks) if self.prim is not None else ""

    @property
    def settled(self) -> bool:
        """Whether the ensemble all but agrees (share paying outside the boundary band)."""
        return verdict_of_share(self.share_paying) != "depends"

    def verdict(self) -> str:
        """ "pays", "does not pay" (settled either way) or "depends"."""
        return verdict_of_share(self.share_paying)


def verdict_of_share(share: float) -> str:
    """ "pays" or "does not pay" when the share of members paying is at or beyond a
    :data:`BOUNDARY_SHARE` end (the ensemble all but agrees), "depends" between them."""
    low, high = BOUNDARY_SHARE
    if low < share < high:
        return "depends"
    return "pays" if share >= high else "does not pay"


def minority_side(values: np.ndarray) -> tuple[str, np.ndarray]:
    """The side a decision's boundary describes (module docstring) and its members: ("pays", INB > 0)
    when at most half the members pay, else ("does not pay", INB ≤ 0)."""
    paying = np.asarray(values, dtype=float) > 0
    if len(paying) and paying.mean() <= 0.5:
        return "pays", paying
    return "does not pay", ~paying


def rank_by_evppi(values: np.ndarray, x: pd.DataFrame) -> pd.Series:
    """Each column's EVPPI (:func:`evppi`) for the members' INB ``values``, highest first, NaN last."""
    ranked = pd.Series({str(c): evppi(values, x[c].to_numpy(float)) for c in x.columns}, dtype=float)
    return ranked.sort_values(ascending=False, na_position="last")


def analyse_decision(
    label: str,
    inb_by_member: pd.Series,
    parameters: pd.DataFrame,
    *,
    boundary_parameters: int = BOUNDARY_PARAMETERS,
    runs: tuple[np.ndarray, np.ndarray] | None = None,
    stability: bool = False,
) -> DecisionResult:
    """The decision ``label`` from each member's mean INB (``inb_by_member``, indexed by member) and
    the members' parameter values (``parameters``: one row per member, same index, one column per
    path; constant columns are left out). ``runs``, the per-run INB and each run's member, adds the
    EVPI's seed-noise floor (:func:`evpi_seed_noise`) and a note when EVPI is not clearly above it;
    ``stability`` judges the boundary's PRIM box by resampling (module docstring)."""
    inb = inb_by_member.dropna()
    x = parameters.loc[inb.index]
    x = x.loc[:, [c for c in x.columns if x[c].nunique() > 1]]
    values = inb.to_numpy(float)
    n = len(values)
    paying = int((values > 0).sum())
    low, high = wilson_interval(paying, n)
    ranked = rank_by_evppi(values, x)
    notes: list[str] = []
    if n < MIN_EVPPI_MEMBERS:
        notes.append(f"EVPPI needs at least {MIN_EVPPI_MEMBERS} members, got {n}")
    share = paying / n if n else math.nan
    value = evpi(values)
    noise = evpi_seed_noise(*runs) if runs is not None else math.nan
    depends = bool(n) and verdict_of_share(share) == "depends"
    if depends and np.isfinite(noise) and value < EVPI_NOISE_RATIO * noise:
        notes.append(
            f"EVPI ${value:,.2f} is not clearly above the ${noise:,.2f} that the seed noise of the "
            "members' means alone would give: more seeds per member would tell"
        )
    prim = cart = stable = None
    chosen = rank_candidates(values, x, ranked, boundary_parameters)
    pair_value = evppi(values, x[chosen].to_numpy(float)) if len(chosen) > 1 else math.nan
    seeks, flags = minority_side(values)
    if depends and chosen:
        prim = prim_box(x[chosen], flags)
        cart = cart_box(x[chosen], flags)
        if stability:
            stable = stable_prim_box(x[chosen], flags)
    return DecisionResult(
        label=label,
        members=n,
        mean_inb=float(values.mean()) if n else math.nan,
        share_paying=share,
        share_low=low,
        share_high=high,
        evpi=value,
        evppi=ranked,
        prim=prim,
        cart=cart,
        notes=tuple(notes),
        inb_low=float(np.quantile(values, 0.025)) if n else math.nan,
        inb_high=float(np.quantile(values, 0.975)) if n else math.nan,
        evpi_noise=noise,
        pair=tuple(chosen),
        seeks=seeks,
        pair_evppi=pair_value,
        stable=stable,
    )


MANUAL = "manual"
"""The by-hand arm: against it the decision is the baseline's AI against working by hand."""


def decision_pairs(arms: list[str]) -> list[tuple[str, str, str]]:
    """(label, reference, arm) of every decision a comparison's arms make: each arm against the
    first, except by hand, against which the first (AI) arm is put."""
    first = arms[0]
    out = []
    for arm in arms[1:]:
        if arm == MANUAL:
            out.append((f"AI ({first}) vs by hand", MANUAL, first))
        else:
            out.append((f"{arm} vs {first}", first, arm))
    return out


def inb_by_member(net: np.ndarray, members: Sequence[int] | np.ndarray) -> pd.Series:
    """Each member's mean of the per-run incremental net benefit ``net`` (its seeds' mean)."""
    frame = pd.DataFrame({"member": np.asarray(members), "net": np.asarray(net, dtype=float)})
    return frame.groupby("member")["net"].mean()
