"""History matching: rule out the parameter sets whose outputs cannot match the targets (pure
functions; no Mesa).

Bayesian history matching (Craig, Goldstein, Seheult & Smith 1997; Vernon, Goldstein & Bower 2010,
"Galaxy formation: a Bayesian uncertainty analysis", Bayesian Analysis 5(4); Andrianakis et al.
2015, "Bayesian history matching of complex infectious disease models using emulation: a tutorial
and a case study on HIV in Uganda", PLoS Comput. Biol. 11(1)) asks which inputs ``x`` could have
produced the observed targets ``z_j``, given what is uncertain: the observation (variance
``V_obs,j``), the model's structural error (model discrepancy, ``V_disc,j``) and, while the
simulator is replaced by an emulator, the emulator's own uncertainty (``V_em,j(x)``). The
**implausibility** of ``x`` for target ``j`` is::

    I_j(x) = |z_j − E[f_j(x)]| / sqrt(V_obs,j + V_disc,j + V_em,j(x))

and ``x`` is ruled out when the largest ``I_j`` (or, for robustness in early waves, the second
largest) exceeds :data:`CUTOFF` = 3: by Pukelsheim's 3-sigma rule at least 95% of any unimodal
distribution lies within 3 standard deviations of its mean, so a match this far off is unlikely
whatever the shape of the errors.

**Waves.** Each wave fits one Gaussian-process emulator per target
(:func:`speedtrap.analysis.emulator.fit_emulator`, on the per-point means of the simulator runs;
its white-noise term takes the seed noise, and :meth:`~speedtrap.analysis.emulator.Emulator.variance`
is the uncertainty about the *expected* output), checks it (below), evaluates the
implausibility on a large space-filling sample of candidates drawn in the previous wave's
non-implausible region (its bounding box widened by :data:`BOX_MARGIN`; every earlier wave's
emulators are applied first) and keeps the candidates that no used target rules out.

**Emulator checks.** Each emulator is checked on the runs it was fitted to by k-fold
cross-validation (:func:`held_out_predictions`, refits from the full fit's kernel): ``q2``,
the share of the outputs' variance it predicts at held-out runs; ``coverage``, the share of held-out
runs within 3 standard deviations of their prediction (seed noise included); and
``false_exclusions``, the share of held-out runs the simulated output keeps for this target but the
emulator would rule out (Andrianakis et al. 2015, § "Emulator validation") and that lie beyond those
3 sd (a run whose expected output is just beyond the cut-off lands inside it by seed noise alone,
and is ruled out rightly). An emulator with a false exclusion, or whose coverage is too low for
Pukelsheim's ≥ 95% (a binomial test at :data:`COVERAGE_TEST_LEVEL`: :func:`overconfident`), is not
used to rule anything out in that wave, and its target is left to later waves and to the final
check. Q² alone is not the criterion: in later waves the outputs vary little in the shrunken region,
so an accurate emulator can have a low Q².

**Log-scale targets.** A target judged by relative error (``Target.scale = "log"``: durations
whose tolerance is a share of the value) is emulated on the log of its output
(:class:`speedtrap.analysis.emulator.LogEmulator`), with the log-normal moments back in the target's
units, so the implausibility is still measured on the scale the final check uses. Such outputs
span orders of magnitude over the space, and are far smoother on the log scale.

**Variance from cross-validation.** With one run per point and dozens of inputs, maximum likelihood
often shrinks the noise term to its bound: the emulator predicts well but claims more certainty than
it has. Its variance (and noise term) is multiplied by ``variance_scale = max(1, mean z²)`` of the
standardized held-out errors ``z = (y − ŷ₋ᵢ) / sd₋ᵢ`` — Bachoc's CV estimator of the GP variance
(F. Bachoc 2013, Computational Statistics & Data Analysis 66: 55–69), used only to widen — before
coverage and false exclusions are checked.

**The space left.** The share of the original space still non-implausible is estimated from the
candidates: the box's volume times the share of its candidates kept (a binomial estimate; its
standard error is reported). The next wave's design is a space-filling (greedy maximin) subset of
the kept candidates, so each wave's emulators are fitted where the region is, and grow more
accurate there.

**Final check.** Emulators only say where matches are possible; :func:`simulated_implausibility`
checks points with real simulator runs: ``V_em = 0`` and the seed-noise variance of the simulated
mean (``s²/r`` over ``r`` replications) in its place. Points below the cut-off on every target form
the ensemble.

Inputs live in the unit hypercube: a :class:`Parameter` maps its coordinate to a value (uniform or
log-uniform, integer parameters by equal stretches of ``[0, 1)`` as
:class:`speedtrap.config.experiment.Factor` does), and emulators see the coordinates through
:func:`speedtrap.analysis.emulator.emulator_inputs`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from speedtrap.analysis.emulator import CV_FOLDS, CV_MAX_ITER, Emulator, emulator_inputs, fit_emulator
from speedtrap.analysis.space_filling import (
    BOX_MARGIN,
    Parameter,
    Scale,
    bounding_box,
    candidate_sample,
    space_filling_subset,
)

__all__ = [
    "BOX_MARGIN",
    "CUTOFF",
    "DEFAULT_CANDIDATES",
    "MIN_RUNS",
    "Parameter",
    "Target",
    "TargetEmulator",
    "Wave",
    "bounding_box",
    "candidate_sample",
    "cv_variance_scale",
    "held_out_predictions",
    "history_matching_wave",
    "implausibility",
    "kth_largest",
    "non_implausible_mask",
    "overconfident",
    "simulated_implausibility",
    "space_filling_subset",
]

CUTOFF = 3.0
"""Implausibility above which a point is ruled out: Pukelsheim's 3-sigma rule (F. Pukelsheim 1994,
"The three sigma rule", The American Statistician 48(2): at least 95% of any unimodal distribution
lies within three standard deviations of its mean), the cut-off of Vernon et al. 2010 and
Andrianakis et al. 2015."""

PUKELSHEIM_COVERAGE = 0.95
"""The least share of any unimodal distribution within 3 standard deviations (Pukelsheim 1994)."""

COVERAGE_TEST_LEVEL = 0.01
"""An emulator whose held-out runs fall outside 3 sd so often that an honest emulator would do so
with probability below this is overconfident and rules nothing out (assumption: a 1% test, so
that an honest emulator is set aside in about one wave and target in a hundred)."""

DEFAULT_CANDIDATES = 100_000
"""Candidates per wave on which the emulators are evaluated (microseconds each). The share of the
space left is estimated from them: a binomial standard error of at most 0.16% of the box."""

MIN_RUNS = 4
"""Runs an emulator needs (:func:`speedtrap.analysis.emulator.fit_emulator`'s minimum); checking it
by cross-validation needs one more."""


@dataclass(frozen=True)
class Target:
    """An observed target: its ``value``, the observation's standard deviation ``obs_sd`` and the
    model discrepancy's ``discrepancy_sd`` (both in the target's unit), where it comes from, and the
    ``scale`` its emulators are fitted on (``log``: a positive outcome, judged by relative error;
    emulated by :class:`speedtrap.analysis.emulator.LogEmulator` where every output is > 0)."""

    name: str
    value: float
    obs_sd: float
    discrepancy_sd: float
    source: str = ""
    scale: Scale = "linear"
    low: float = math.nan
    """The published interval's ends (NaN: a point target). Inside it the implausibility is 0; outside,
    the distance to it over √(V_disc + V_em): the interval stands for the observation's uncertainty."""
    high: float = math.nan
    hard: bool = False
    """A hard interval target: an accepted (simulated) member must lie inside the interval itself."""

    def __post_init__(self) -> None:
        if self.scale not in ("linear", "log"):
            raise ValueError(f"target {self.name!r}: scale must be linear or log, got {self.scale!r}")
        if math.isnan(self.low) != math.isnan(self.high) or (self.has_interval and not self.low <= self.high):
            raise ValueError(
                f"target {self.name!r}: need low ≤ high (or neither), got [{self.low}, {self.high}]"
            )
        if self.hard and not self.has_interval:
            raise ValueError(f"target {self.name!r}: a hard target needs its interval (low, high)")
        if not math.isfinite(self.value):
            raise ValueError(f"target {self.name!r}: value must be finite, got {self.value}")
        for label, sd in (("obs_sd", self.obs_sd), ("discrepancy_sd", self.discrepancy_sd)):
            if not (math.isfinite(sd) and sd >= 0.0):
                raise ValueError(f"target {self.name!r}: {label} must be finite and ≥ 0, got {sd}")

    @property
    def variance(self) -> float:
        """``V_obs + V_disc``: the variance every comparison with this target allows."""
        return self.obs_sd**2 + self.discrepancy_sd**2

    @property
    def has_interval(self) -> bool:
        """Whether the target is a published interval rather than a point."""
        return not (math.isnan(self.low) or math.isnan(self.high))

    def implausibility(
        self, mean: np.ndarray | float, var_em: np.ndarray | float = 0.0, *, final: bool = False
    ) -> np.ndarray:
        """This target's implausibility of expected outputs ``mean`` with emulator (or seed-noise)
        variance ``var_em``: a point target by :func:`implausibility`; an interval target 0 inside the
        interval and the distance to it over ``√(V_disc + V_em)`` outside (the interval takes the
        observation's error); with ``final`` (simulated means of the final check) a hard target is 0
        inside and ``inf`` outside its interval, so no accepted member lies outside it."""
        if not self.has_interval:
            return implausibility(self.value, mean, self.obs_sd**2, self.discrepancy_sd**2, var_em)
        m = np.asarray(mean, dtype=float)
        if final and self.hard:
            inside = (m >= self.low) & (m <= self.high)
            return np.asarray(np.where(inside, 0.0, math.inf), dtype=float)
        nearest = np.clip(m, self.low, self.high)
        return implausibility(nearest, m, 0.0, self.discrepancy_sd**2, var_em)


def implausibility(
    observed: np.ndarray | float,
    mean: np.ndarray | float,
    var_obs: np.ndarray | float,
    var_disc: np.ndarray | float,
    var_em: np.ndarray | float = 0.0,
) -> np.ndarray:
    """``|z − E[f]| / sqrt(V_obs + V_disc + V_em)``, elementwise with broadcasting (e.g. points ×
    targets). A NaN mean (no output) is implausible (``inf``); a zero denominator gives 0 where the
    mean equals the target and ``inf`` elsewhere."""
    z, m = np.asarray(observed, dtype=float), np.asarray(mean, dtype=float)
    total = (
        np.asarray(var_obs, dtype=float) + np.asarray(var_disc, dtype=float) + np.asarray(var_em, dtype=float)
    )
    if np.any(total < 0.0):
        raise ValueError("variances must be ≥ 0")
    gap = np.abs(z - m)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = gap / np.sqrt(total)
    out = np.where(total > 0.0, out, np.where(gap == 0.0, 0.0, math.inf))
    return np.asarray(np.where(np.isnan(m), math.inf, out), dtype=float)


def kth_largest(values: np.ndarray, k: int = 1) -> np.ndarray:
    """Per row of ``values`` (points × targets), the ``k``-th largest entry (1: the maximum, 2: the
    second largest); NaN counts as ``inf``. With fewer than ``k`` columns, the smallest; with no
    column, 0 (nothing to rule out on)."""
    if k < 1:
        raise ValueError(f"k must be ≥ 1, got {k}")
    values = np.asarray(values, dtype=float)
    if values.ndim != 2:
        raise ValueError(f"need points × targets, got shape {values.shape}")
    if values.shape[1] == 0:
        return np.zeros(len(values))
    ordered = -np.sort(-np.nan_to_num(values, nan=math.inf), axis=1)
    return np.asarray(ordered[:, min(k, values.shape[1]) - 1], dtype=float)


def simulated_implausibility(
    targets: Sequence[Target],
    means: Mapping[str, np.ndarray],
    variances_of_mean: Mapping[str, np.ndarray],
) -> np.ndarray:
    """Points × targets implausibility of simulated outputs: ``means[name]`` (per point, over its
    replications) with ``V_em = 0`` and the seed noise of the mean (``variances_of_mean[name]``,
    ``s²/r``) in its place. A NaN mean is implausible; a NaN variance (one replication) counts as 0."""
    columns = []
    for target in targets:
        mean = np.asarray(means[target.name], dtype=float)
        noise = np.nan_to_num(np.asarray(variances_of_mean[target.name], dtype=float), nan=0.0)
        columns.append(target.implausibility(mean, noise, final=True))
    return np.column_stack(columns) if columns else np.zeros((0, 0))


@dataclass(frozen=True)
class TargetEmulator:
    """One target's emulator in one wave with its cross-validated checks (``q2``, ``coverage``,
    ``false_exclusions``: see the module docstring), whether the wave ``used`` it to rule points
    out, and ``noise_variance``: its white-noise term in the outcome's units (the scatter of one
    training output around the expected one). ``emulator`` is None when fewer than :data:`MIN_RUNS` runs
    gave the target a finite output, and unchecked (NaN checks, not used) with exactly that many."""

    target: Target
    emulator: Emulator | None
    q2: float
    coverage: float
    false_exclusions: float
    used: bool
    n_train: int
    noise_variance: float = math.nan
    variance_scale: float = 1.0  # the factor from cross-validation (see the module docstring)

    def variance(self, x: np.ndarray) -> np.ndarray:
        """The emulator's variance of the expected output at ``x``, widened by ``variance_scale``."""
        return self.moments(x)[1]

    def moments(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The emulated mean at ``x`` and :meth:`variance`, from one pass over the emulator."""
        assert self.emulator is not None
        mean, variance = self.emulator.moments(x)
        return mean, self.variance_scale * variance


@dataclass(frozen=True)
class Wave:
    """What :func:`history_matching_wave` returns.

    ``emulators``: one per target; ``box``: where the candidates were drawn; ``candidates``: how
    many; ``non_implausible``: the unit coordinates of those no wave so far rules out, with their
    largest implausibility ``max_implausibility`` (over this wave's used targets); ``remaining_share``
    (``± remaining_se``): the estimated share of the whole unit cube still non-implausible;
    ``ruled_out_by``: per target, the estimated share of the whole cube that it alone would rule
    out among the candidates earlier waves kept."""

    number: int
    emulators: tuple[TargetEmulator, ...]
    cutoff: float
    order: int
    parameters: tuple[Parameter, ...]
    box: tuple[np.ndarray, np.ndarray]
    candidates: int
    non_implausible: np.ndarray
    max_implausibility: np.ndarray
    remaining_share: float
    remaining_se: float
    ruled_out_by: dict[str, float] = field(default_factory=dict)

    @property
    def ruled_out_share(self) -> float:
        """The estimated share of the original space ruled out by this and every earlier wave."""
        return 1.0 - self.remaining_share

    def implausibility(self, unit: np.ndarray) -> np.ndarray:
        """Points × used targets implausibility of this wave's emulators at unit coordinates."""
        used = [te for te in self.emulators if te.used and te.emulator is not None]
        unit = np.asarray(unit, dtype=float).reshape(-1, len(self.parameters))
        if not used or len(unit) == 0:
            return np.zeros((len(unit), len(used)))
        x = emulator_inputs([p.factor for p in self.parameters], unit)
        columns = []
        for te in used:
            columns.append(te.target.implausibility(*te.moments(x)))
        return np.column_stack(columns)

    def predict(self, unit: np.ndarray) -> pd.DataFrame:
        """Every emulator's prediction at unit coordinates: one row per point × target with ``point``
        (the row of ``unit``), ``target``, ``mean``, ``variance`` (of the expected output),
        ``noise_variance`` (of one run around it) and ``used``."""
        unit = np.asarray(unit, dtype=float).reshape(-1, len(self.parameters))
        x = emulator_inputs([p.factor for p in self.parameters], unit)
        frames = []
        for te in self.emulators:
            nan = np.full(len(unit), math.nan)
            mean, variance = te.moments(x) if te.emulator is not None else (nan, nan)
            frames.append(
                pd.DataFrame(
                    {
                        "point": np.arange(len(unit)),
                        "target": te.target.name,
                        "mean": mean,
                        "variance": variance,
                        "noise_variance": te.noise_variance,
                        "used": te.used,
                    }
                )
            )
        return pd.concat(frames, ignore_index=True)

    def cut(self, unit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(kept, measure): whether each point survives this wave's cut, and its ``order``-th largest
        implausibility over the used targets."""
        measure = kth_largest(self.implausibility(unit), self.order)
        return measure <= self.cutoff, measure

    def survives(self, unit: np.ndarray) -> np.ndarray:
        """Whether each point survives this wave's cut: :meth:`cut`'s ``kept``, found target by target.
        A point leaves as soon as ``order`` used targets (or all of them, when fewer) put it above the
        cut-off (a NaN implausibility counts as above, as in :func:`kth_largest`), so later targets are
        evaluated only at the points still in; the kept points are evaluated on every target, so
        the answer is :meth:`cut`'s. An earlier wave's cut over 10⁵–10⁶ candidates costs a fraction of
        evaluating every target at every one (most are ruled out by the first few)."""
        used = sorted(
            (te for te in self.emulators if te.used and te.emulator is not None),
            key=lambda te: -self.ruled_out_by.get(te.target.name, 0.0),  # the strictest first
        )
        unit = np.asarray(unit, dtype=float).reshape(-1, len(self.parameters))
        if not used or len(unit) == 0:
            return self.cut(unit)[0]
        x = emulator_inputs([p.factor for p in self.parameters], unit)
        order = min(self.order, len(used))
        above = np.zeros(len(unit), dtype=int)
        for te in used:
            index = np.flatnonzero(above < order)
            if len(index) == 0:
                break
            value = te.target.implausibility(*te.moments(x[index]))
            above[index] += ~(value <= self.cutoff)
        return np.asarray(above < order)

    def diagnostics(self) -> pd.DataFrame:
        """One row per target: ``wave``, ``target``, ``n_train``, ``q2``, ``coverage``,
        ``false_exclusions``, ``noise_share``, ``variance_scale``, ``used``, ``ruled_out_by`` (share
        of the whole space it alone rules out in this wave)."""
        return pd.DataFrame(
            [
                {
                    "wave": self.number,
                    "target": te.target.name,
                    "n_train": te.n_train,
                    "q2": te.q2,
                    "coverage": te.coverage,
                    "false_exclusions": te.false_exclusions,
                    "noise_share": te.emulator.noise_share if te.emulator is not None else math.nan,
                    "variance_scale": te.variance_scale,
                    "used": te.used,
                    "ruled_out_by": self.ruled_out_by.get(te.target.name, 0.0),
                }
                for te in self.emulators
            ]
        )


def non_implausible_mask(unit: np.ndarray, waves: Sequence[Wave]) -> np.ndarray:
    """Whether each point (rows of unit coordinates) survives every wave's cut, the waves applied in
    order to the points earlier ones kept."""
    unit = np.asarray(unit, dtype=float)
    keep = np.ones(len(unit), dtype=bool)
    for wave in waves:
        index = np.flatnonzero(keep)
        if len(index) == 0:
            break
        keep[index[~wave.survives(unit[index])]] = False
    return keep


def held_out_predictions(
    x: np.ndarray, y: np.ndarray, start: Any, *, folds: int = CV_FOLDS, seed: int = 0, log: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Each run's emulated mean and variance from an emulator fitted without its fold (``log``: on
    the log scale, moments in ``y``'s units): the folds and refits of
    :func:`speedtrap.analysis.emulator.cross_validated_q2` (``folds`` folds in a seeded random order,
    each refit starting from the kernel ``start``, for at most
    :data:`~speedtrap.analysis.emulator.CV_MAX_ITER` iterations), so that its Q² is
    ``1 − Σ(y − mean)² / Σ(y − ȳ)²`` of these means. Where a fold would leave a refit fewer than
    :data:`MIN_RUNS` runs, more folds are used (at most one run each)."""
    n = len(y)
    k = max(2, min(folds, n))
    while k < n and n - math.ceil(n / k) < MIN_RUNS:  # every refit needs MIN_RUNS runs
        k += 1
    if n - math.ceil(n / k) < MIN_RUNS:
        raise ValueError(f"cross-validation needs at least {MIN_RUNS + 1} runs, got {n}")
    order = np.random.default_rng(seed).permutation(n)
    mean, variance = np.empty(n), np.empty(n)
    for fold in np.array_split(order, k):
        keep = np.setdiff1d(order, fold)
        emulator = fit_emulator(
            x[keep], y[keep], seed=seed, restarts=0, start=start, log=log, max_iter=CV_MAX_ITER
        )
        mean[fold], variance[fold] = emulator.moments(x[fold])
    return mean, variance


def _fit_target(
    target: Target, x: np.ndarray, y: np.ndarray, *, seed: int, restarts: int, folds: int, cutoff: float
) -> TargetEmulator:
    finite = np.isfinite(y)
    n = int(finite.sum())
    if n < MIN_RUNS:  # the target cannot be emulated from these runs
        return TargetEmulator(target, None, math.nan, math.nan, math.nan, False, n, math.nan)
    x, y = x[finite], y[finite]
    log = target.scale == "log" and bool(np.all(y > 0.0))  # else the linear scale
    emulator = fit_emulator(x, y, seed=seed, restarts=restarts, log=log)
    typical = float(np.median(emulator.noise_variance(x)))  # one training output's scatter, outcome units
    if n == MIN_RUNS:  # too few to hold any out: an unchecked emulator rules nothing out
        return TargetEmulator(target, emulator, math.nan, math.nan, math.nan, False, n, typical)
    mean, variance = held_out_predictions(x, y, emulator.gp.kernel_, folds=folds, seed=seed, log=log)
    spread = float(((y - y.mean()) ** 2).sum())
    q2 = 1.0 - float(((y - mean) ** 2).sum()) / spread if spread > 0.0 else math.nan
    noise = emulator.noise_variance(x)  # the full fit's scatter of each training output
    scale = cv_variance_scale(y, mean, variance + noise)
    variance, noise = scale * variance, scale * noise
    inside = np.abs(y - mean) <= CUTOFF * np.sqrt(variance + noise)
    simulated = target.implausibility(y, noise)
    emulated = target.implausibility(mean, variance)
    false = float(np.mean((simulated <= cutoff) & (emulated > cutoff) & ~inside))  # ~inside: not noise
    used = math.isfinite(scale) and false == 0.0 and not overconfident(int((~inside).sum()), len(y))
    return TargetEmulator(target, emulator, q2, float(inside.mean()), false, used, n, scale * typical, scale)


def cv_variance_scale(y: np.ndarray, held_out_mean: np.ndarray, held_out_variance: np.ndarray) -> float:
    """``max(1, mean((y − ŷ)² / v))`` over held-out runs (see the module docstring); a run with zero
    predicted variance counts 0 when predicted exactly and makes the scale infinite otherwise."""
    err = (np.asarray(y, dtype=float) - np.asarray(held_out_mean, dtype=float)) ** 2
    v = np.asarray(held_out_variance, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        z2 = np.where(err == 0.0, 0.0, err / v)
    return max(1.0, float(np.mean(z2))) if len(z2) else 1.0


def overconfident(misses: int, n: int, *, level: float = COVERAGE_TEST_LEVEL) -> bool:
    """Whether ``misses`` of ``n`` held-out runs outside 3 standard deviations of their prediction
    are too many for an honest emulator: by Pukelsheim's rule at most 5% of a unimodal predictive
    distribution lies beyond 3 sd, so ``P(Binomial(n, 0.05) ≥ misses) < level`` means the emulator
    claims more certainty than it has."""
    from scipy.stats import binom

    return misses > 0 and float(binom.sf(misses - 1, n, 1.0 - PUKELSHEIM_COVERAGE)) < level


def history_matching_wave(
    unit: np.ndarray,
    outputs: Mapping[str, np.ndarray],
    targets: Sequence[Target],
    parameters: Sequence[Parameter],
    *,
    number: int = 1,
    previous: Sequence[Wave] = (),
    candidates: int = DEFAULT_CANDIDATES,
    min_left: int = 0,
    max_batches: int = 1,
    cutoff: float = CUTOFF,
    order: int = 1,
    margin: float = BOX_MARGIN,
    seed: int = 0,
    restarts: int = 2,
    folds: int = CV_FOLDS,
    jobs: int = 1,
) -> Wave:
    """One wave of history matching.

    ``unit``: the training runs' unit coordinates (rows × ``parameters``); ``outputs``: per target
    name, one simulated output per row (the mean over its replications; NaN where a run gave
    none). Fits an emulator per target (``seed``, ``restarts``: :func:`fit_emulator`'s; ``jobs``
    targets at once, in joblib's worker processes: the same fits in any number) and checks
    it over ``folds`` cross-validation folds; draws ``candidates`` points in the bounding box of the
    last ``previous`` wave's non-implausible points (widened by ``margin``; the whole cube for the
    first wave); applies every previous wave's cut, then this wave's (the ``order``-th largest
    implausibility over the targets whose emulators pass their check, against ``cutoff``); and
    keeps what is left. While fewer than ``min_left`` candidates are left, more batches are drawn,
    up to ``max_batches`` in all.
    """
    unit = np.asarray(unit, dtype=float)
    d = len(parameters)
    if unit.ndim != 2 or unit.shape[1] != d:
        raise ValueError(f"unit coordinates must be rows × {d} parameters, got shape {unit.shape}")
    if cutoff <= 0 or order < 1 or candidates < 1 or max_batches < 1:
        raise ValueError("need cutoff > 0, order ≥ 1, candidates ≥ 1 and max_batches ≥ 1")
    missing = [t.name for t in targets if t.name not in outputs]
    if missing:
        raise KeyError(f"no outputs for target {missing[0]!r}")
    factors = [p.factor for p in parameters]
    x = emulator_inputs(factors, unit)
    from joblib import Parallel, delayed  # type: ignore[import-untyped]

    fit = delayed(_fit_target)
    kw = {"seed": seed, "restarts": restarts, "folds": folds, "cutoff": cutoff}
    jobs_ = (fit(t, x, np.asarray(outputs[t.name], dtype=float), **kw) for t in targets)
    fitted = tuple(Parallel(n_jobs=jobs)(jobs_))
    box = (
        bounding_box(previous[-1].non_implausible, d, margin=margin)
        if previous
        else bounding_box(np.zeros((0, d)), d)
    )
    volume = float(np.prod(box[1] - box[0]))
    wave = Wave(
        number, fitted, cutoff, order, tuple(parameters), box, 0, np.zeros((0, d)), np.zeros(0), 0.0, 0.0
    )
    kept_points, kept_measure = [], []
    drawn, left = 0, 0
    ruled: dict[str, int] = {te.target.name: 0 for te in fitted if te.used}
    for batch in range(max_batches):
        sample = candidate_sample(candidates, box[0], box[1], seed=seed + 7919 * (number * 1000 + batch))
        drawn += len(sample)
        sample = sample[non_implausible_mask(sample, previous)]
        if len(sample):
            each = wave.implausibility(sample)
            for j, name in enumerate(ruled):
                ruled[name] += int((np.nan_to_num(each[:, j], nan=math.inf) > cutoff).sum())
            measure = kth_largest(each, order)
            keep = measure <= cutoff
            kept_points.append(sample[keep])
            kept_measure.append(measure[keep])
            left += int(keep.sum())
        if left >= min_left:
            break
    p = left / drawn
    return Wave(
        number,
        fitted,
        cutoff,
        order,
        tuple(parameters),
        box,
        drawn,
        np.concatenate(kept_points) if kept_points else np.zeros((0, d)),
        np.concatenate(kept_measure) if kept_measure else np.zeros(0),
        volume * p,
        volume * math.sqrt(p * (1.0 - p) / drawn),
        {name: volume * count / drawn for name, count in ruled.items()},
    )
