"""Sobol' indices from a Gaussian-process emulator of the simulation (pure functions; no Mesa).

A direct Sobol' study runs the simulation at every point of a Saltelli sample: ``n·(D + 2)`` points
(1,280 for eight inputs at n = 128), each a few seconds of simulation, hours in all. An emulator
needs far fewer runs: fit a Gaussian process (GP) to the outcome at a few hundred space-filling
points of the unit hypercube, check that it predicts runs it was not fitted to, and compute the
indices of the emulator's mean by Monte Carlo on a large Saltelli sample, where an evaluation costs
microseconds (Oakley & O'Hagan 2004, "Probabilistic sensitivity analysis of complex models: a
Bayesian approach", JRSS B 66(3); Marrel et al. 2009, "Calculations of Sobol indices for the
Gaussian process metamodel", Reliab. Eng. Syst. Saf. 94(3)).

The inputs are the unit coordinates of :mod:`speedtrap.analysis.sensitivity` (so the indices
apportion variance under the same input distributions as a direct study: log-uniform for ``log``
ranges, equal probability for each level of integer and categorical factors). A discrete factor's
coordinate is moved to the middle of the stretch of ``[0, 1)`` that gives its level
(:func:`emulator_inputs`), so the emulator sees the level, not the position inside its stretch.

**Model.** ``ConstantKernel × Matérn(ν = 5/2, one length scale per input) + WhiteKernel`` on the
standardized outcome (scikit-learn's ``GaussianProcessRegressor``, hyperparameters by maximum
likelihood). The white-noise term absorbs the simulation's noise, so the indices are those of the
*expected* outcome: noise that a direct study with few replications would count as unexplained
variance (lowering every S1) is left out. ``noise_share`` reports how much of the training
outputs' variance it took.

**Checks and intervals.** ``q2``: the share of the outcome's variance that the emulator predicts
at runs it was not fitted to (k-fold cross-validation; 1 is perfect; the noise caps it at about
1 − noise share). Below :data:`MIN_Q2` the indices cannot mean much and a warning says so (an
assumption: 0.9 is a common bar for a usable metamodel, e.g. Marrel et al. 2009 report Q² ≥ 0.9).
The intervals are percentile bootstrap intervals over the training runs (the emulator refitted to
resampled runs with the full fit's kernel hyperparameters, each refit evaluated on a fresh Saltelli
sample; Marrel et al. 2009 discuss both sources of error): they cover the emulator's error from a
finite design and the Monte Carlo error, not the uncertainty of the hyperparameters (refits that
re-optimized them on resampled runs, which repeat points, sometimes collapsed to near-constant
fits) nor the error of an emulator that is wrong everywhere in the same way. ``mc_half_width`` is the largest
Monte Carlo half-width (SALib's bootstrap, 95%) of an index of the full emulator on its own
Saltelli sample.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from speedtrap.analysis.sensitivity import is_constant, salib_problem
from speedtrap.config.experiment import Factor

if TYPE_CHECKING:
    from sklearn.gaussian_process import GaussianProcessRegressor

__all__ = [
    "DEFAULT_BOOTSTRAP",
    "DEFAULT_SOBOL_N",
    "EMULATOR_COLUMNS",
    "MIN_Q2",
    "EmulatedIndices",
    "Emulator",
    "LogEmulator",
    "cross_validated_q2",
    "emulated_sobol",
    "emulator_inputs",
    "fit_emulator",
    "leave_one_out_q2",
    "predictive_q2",
    "training_sample",
]

DEFAULT_SOBOL_N = 4096
"""Base samples of the Saltelli sample the emulator is evaluated on: 4096·(D + 2) predictions
(microseconds each). Its Monte Carlo half-width is reported (``mc_half_width``)."""

DEFAULT_BOOTSTRAP = 30
"""Emulators refitted to resampled training runs for the intervals (an assumption: enough for the
2.5% and 97.5% percentiles to move by well under the intervals' width; more cost seconds each)."""

MIN_Q2 = 0.9
"""Cross-validated Q² below which the emulator's indices get a warning (see the module docstring)."""

CV_FOLDS = 8
"""Folds of the cross-validation that gives ``q2`` (an assumption: between the usual 5 and 10 folds,
Hastie, Tibshirani & Friedman, *The Elements of Statistical Learning*, §7.10)."""

CV_MAX_ITER = 25
"""L-BFGS-B iterations of a cross-validation fold's refit, which starts at the full fit's optimum: the
fold's optimum lies close to it, and the uncapped refits (eight per target and wave, each running to
convergence over 40 hyperparameters) were four fifths of a calibration's emulator time. A lone run
the full fit can only explain as noise still moves a fold's refit away from it within the cap
(tests/analysis/test_history_matching.py, the false-exclusion test)."""

_CHUNK = 8192  # prediction rows at a time (a chunk × 256 training runs of doubles: 16 MiB)

EMULATOR_COLUMNS = ("factor", "S1", "S1_low", "S1_high", "ST", "ST_low", "ST_high")


def training_sample(n: int, d: int, *, seed: int = 0) -> np.ndarray:
    """``n`` points (a power of two, ≥ 4) of a scrambled Sobol' sequence in ``[0, 1)^d``.

    The sequence is nested: its first ``n/2`` points are a balanced design of their own, so an
    emulator fitted to them and one fitted to all ``n`` show how the indices converge."""
    from scipy.stats import qmc

    if n < 4 or n & (n - 1):
        raise ValueError(f"the training design needs a power of two ≥ 4 points, got {n}")
    sampler = qmc.Sobol(d, scramble=True, seed=np.random.default_rng(seed))
    return np.asarray(sampler.random_base2(int(math.log2(n))), dtype=float)


def _level_middles(factor: Factor, grid: int = 1 << 14) -> tuple[np.ndarray, np.ndarray] | None:
    """For a discrete factor, the unit coordinates where each level's stretch begins and its middle."""
    if factor.categories is None and not (factor.range is not None and factor.integer):
        return None
    u = (np.arange(grid) + 0.5) / grid
    labels = [repr(v) for v in factor.from_unit(u)]
    starts = [0] + [i for i in range(1, grid) if labels[i] != labels[i - 1]]
    ends = [*starts[1:], grid]
    edges = np.array(starts, dtype=float) / grid
    middles = (np.array(starts) + np.array(ends)) / (2.0 * grid)
    return edges, middles


def emulator_inputs(factors: Sequence[Factor], unit: np.ndarray) -> np.ndarray:
    """The emulator's inputs for unit coordinates (rows × factors): continuous factors as they are,
    a discrete factor's coordinate moved to the middle of its level's stretch of ``[0, 1)``."""
    unit = np.asarray(unit, dtype=float)
    if unit.ndim != 2 or unit.shape[1] != len(factors):
        raise ValueError(f"unit coordinates must be rows × {len(factors)} factors, got shape {unit.shape}")
    out = unit.copy()
    for j, factor in enumerate(factors):
        levels = _level_middles(factor)
        if levels is not None:
            edges, middles = levels
            index = np.searchsorted(edges, np.clip(unit[:, j], 0.0, np.nextafter(1.0, 0.0)), side="right") - 1
            out[:, j] = middles[index]
    return out


@dataclass(frozen=True)
class Emulator:
    """A fitted GP emulator of one outcome over the unit hypercube (:func:`fit_emulator`)."""

    gp: GaussianProcessRegressor
    n_train: int

    def predict(self, x: np.ndarray) -> np.ndarray:
        """The emulator's mean at inputs ``x`` (rows × inputs, as :func:`emulator_inputs` gives).

        Computed from the fitted kernel directly (the Matérn 5/2 formula, in chunks), which is
        several times faster than ``GaussianProcessRegressor.predict`` on the ≈10⁵ points of a
        Saltelli sample and agrees with it to rounding (``tests/analysis/test_emulator.py``)."""
        x = np.asarray(x, dtype=float)
        gp = self.gp
        out = np.empty(len(x))
        for lo, matern in self._matern_chunks(x):
            out[lo : lo + _CHUNK] = matern @ gp.alpha_
        return np.asarray(out * self._amplitude() * gp._y_train_std + gp._y_train_mean, dtype=float)

    def _amplitude(self) -> float:
        return float(self.gp.kernel_.get_params()["k1__k1__constant_value"])

    def _matern_chunks(self, x: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
        """(first row, Matérn 5/2 correlations of rows ``lo:lo+_CHUNK`` of ``x`` with the training
        inputs) for every chunk of ``x``, with the fitted length scales."""
        from scipy.spatial.distance import cdist

        gp = self.gp
        scale = np.asarray(gp.kernel_.get_params()["k1__k2__length_scale"], dtype=float)
        train = gp.X_train_ / scale
        for lo in range(0, len(x), _CHUNK):
            r = cdist(x[lo : lo + _CHUNK] / scale, train) * math.sqrt(5.0)
            yield lo, (1.0 + r + r * r / 3.0) * np.exp(-r)

    def variance(self, x: np.ndarray) -> np.ndarray:
        """The emulator's variance of the *expected* outcome at inputs ``x`` (rows × inputs, as
        :func:`emulator_inputs` gives), in the outcome's units squared: the GP posterior variance of
        its smooth part (constant × Matérn), computed in chunks like :meth:`predict`.

        The white-noise term is left out: it is the scatter of single training outputs around the
        expected outcome, not uncertainty about the expected outcome. ``GaussianProcessRegressor.
        predict(return_std=True)`` includes it: its variance is this plus ``noise_share·var(y)``
        (``tests/analysis/test_history_matching.py``)."""
        return self._gp_moments(x, mean=False)[1]

    def moments(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(predict(x), variance(x))`` from one pass over the Matérn correlations: the same numbers
        bit for bit, at about half the cost of the two calls (a log emulator's four), which is what a
        wave's implausibility over 10⁵–10⁶ candidates spends its time on."""
        return self._gp_moments(x)

    def _gp_moments(self, x: np.ndarray, *, mean: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """The GP's mean (NaN unless ``mean``) and variance of its smooth part at ``x``, on the scale
        it was fitted on (the log scale for a :class:`LogEmulator`)."""
        from scipy.linalg import solve_triangular

        x = np.asarray(x, dtype=float)
        gp = self.gp
        amplitude = self._amplitude()
        mu = np.full(len(x), math.nan)
        out = np.empty(len(x))
        for lo, matern in self._matern_chunks(x):
            if mean:
                mu[lo : lo + _CHUNK] = matern @ gp.alpha_
            v = solve_triangular(gp.L_, amplitude * matern.T, lower=True, check_finite=False)
            out[lo : lo + _CHUNK] = amplitude - np.einsum("ij,ij->j", v, v)
        mu = np.asarray(mu * amplitude * gp._y_train_std + gp._y_train_mean, dtype=float)
        return mu, np.asarray(np.maximum(out, 0.0) * gp._y_train_std**2, dtype=float)

    @property
    def noise_share(self) -> float:
        """The fitted white-noise variance as a share of the training outputs' variance (the outputs
        are standardized before the fit, so it is the noise term itself, at most 1)."""
        return min(1.0, float(self.gp.kernel_.get_params()["k2__noise_level"]))

    @property
    def length_scales(self) -> np.ndarray:
        """Fitted Matérn length scale per input (unit coordinates; long: the input matters little)."""
        return np.atleast_1d(np.asarray(self.gp.kernel_.get_params()["k1__k2__length_scale"], dtype=float))

    def _white_noise(self) -> float:
        """The fitted white-noise variance on the scale the GP was fitted on."""
        return self.noise_share * float(self.gp._y_train_std) ** 2

    def noise_variance(self, x: np.ndarray) -> np.ndarray:
        """The white-noise term at inputs ``x`` in the outcome's units squared: the scatter of one
        training output around the expected outcome (the same everywhere for this emulator)."""
        return np.full(len(np.asarray(x)), self._white_noise())


@dataclass(frozen=True)
class LogEmulator(Emulator):
    """An emulator of a positive outcome fitted to its logarithm (``fit_emulator(..., log=True)``).

    A relative error is an error on the log scale, and outcomes that span orders of magnitude over
    the input space (a 90th percentile of human response gaps runs from one to sixty minutes) are
    far smoother there. The GP gives the log of the expected outcome a normal distribution
    ``N(μ, v)``, so the moments returned are the log-normal ones, in the outcome's units:
    mean ``exp(μ + v/2)``, variance ``(exp(v) − 1)·exp(2μ + v)``. The white noise (``s²`` on the log
    scale) is returned the same way, around the emulated median ``exp(μ)``."""

    def predict(self, x: np.ndarray) -> np.ndarray:
        """The log-normal mean ``exp(μ + v/2)`` at inputs ``x``."""
        return self.moments(x)[0]

    def variance(self, x: np.ndarray) -> np.ndarray:
        """The log-normal variance ``(exp(v) − 1)·exp(2μ + v)`` of the expected outcome at ``x``."""
        return self.moments(x)[1]

    def moments(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The log-normal mean and variance at ``x`` from one pass (see :meth:`Emulator.moments`)."""
        mu, v = self._gp_moments(x)
        mean = np.asarray(np.exp(mu + v / 2.0), dtype=float)
        return mean, np.asarray(np.expm1(v) * np.exp(2.0 * mu + v), dtype=float)

    def noise_variance(self, x: np.ndarray) -> np.ndarray:
        """``(exp(s²) − 1)·exp(2μ)``: one run's scatter around the emulated median, outcome units."""
        mu = Emulator.predict(self, x)
        return np.asarray(math.expm1(self._white_noise()) * np.exp(2.0 * mu), dtype=float)


def _lbfgsb(
    objective: Any, theta: np.ndarray, bounds: np.ndarray, *, max_iter: int
) -> tuple[np.ndarray, float]:
    """scikit-learn's default optimizer (L-BFGS-B on the log-marginal likelihood) with an iteration cap."""
    from scipy.optimize import minimize

    result = minimize(
        objective, theta, method="L-BFGS-B", jac=True, bounds=bounds, options={"maxiter": max_iter}
    )
    return result.x, float(result.fun)


def _kernel(d: int) -> Any:
    from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

    return ConstantKernel(1.0, (1e-3, 1e3)) * Matern(
        length_scale=np.ones(d), length_scale_bounds=(1e-2, 1e3), nu=2.5
    ) + WhiteKernel(1e-2, (1e-8, 1.0))


def _check_training(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float).ravel()
    if x.ndim != 2 or len(x) != len(y):
        raise ValueError(f"need rows × inputs and one output per row, got shapes {x.shape} and {y.shape}")
    if len(y) < 4:
        raise ValueError(f"an emulator needs at least 4 training runs, got {len(y)}")
    if not np.isfinite(y).all() or not np.isfinite(x).all():
        raise ValueError("training inputs and outputs must be finite")
    return x, y


def fit_emulator(
    x: np.ndarray,
    y: np.ndarray,
    *,
    seed: int = 0,
    restarts: int = 2,
    start: Any = None,
    optimize: bool = True,
    log: bool = False,
    max_iter: int | None = None,
) -> Emulator:
    """Fit the GP emulator to inputs ``x`` (rows × inputs in ``[0, 1]``) and outputs ``y``.

    ``restarts`` extra optimizer starts (random, seeded by ``seed``); ``start``: a fitted kernel to
    start from; ``optimize=False`` keeps ``start``'s hyperparameters as they are (only the weights of
    the training runs are fitted); ``log``: fit to ``log(y)`` (every output must be > 0) and return a
    :class:`LogEmulator`, whose predictions are in ``y``'s units; ``max_iter``: at most this many
    L-BFGS-B iterations (default: scikit-learn's 15,000), for refits that start near their optimum.
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.gaussian_process import GaussianProcessRegressor

    x, y = _check_training(x, y)
    if log:
        if np.any(y <= 0.0):
            raise ValueError("a log-scale emulator needs every output > 0")
        y = np.log(y)
    if not optimize and start is None:
        raise ValueError("optimize=False needs the hyperparameters to keep: pass start=")
    optimizer: Any = "fmin_l_bfgs_b" if optimize else None
    if optimize and max_iter is not None:
        optimizer = functools.partial(_lbfgsb, max_iter=max_iter)
    gp = GaussianProcessRegressor(
        kernel=start if start is not None else _kernel(x.shape[1]),
        optimizer=optimizer,
        normalize_y=True,
        n_restarts_optimizer=restarts,
        random_state=seed,
    )
    with warnings.catch_warnings():
        # a length scale at its upper bound means "this input does not matter": a result, not a failure
        warnings.simplefilter("ignore", ConvergenceWarning)
        gp.fit(x, y)
    return LogEmulator(gp, len(y)) if log else Emulator(gp, len(y))


def cross_validated_q2(
    x: np.ndarray, y: np.ndarray, *, folds: int = CV_FOLDS, seed: int = 0, start: Any = None
) -> float:
    """Q² = 1 − Σ(y − ŷ)² / Σ(y − ȳ)² with ŷ predicted by emulators fitted without the row's fold
    (``folds`` folds in a seeded random order). ``start``: a fitted kernel each fold's fit starts
    from (default: a fresh fit to all rows), so that a fold's optimizer is not left in a poor local
    optimum that the full fit's restarts avoided, for at most :data:`CV_MAX_ITER` iterations."""
    x, y = _check_training(x, y)
    folds = min(folds, len(y))
    if folds < 2:
        raise ValueError(f"cross-validation needs at least 2 folds, got {folds}")
    if is_constant(y):
        return math.nan
    if start is None:
        start = fit_emulator(x, y, seed=seed).gp.kernel_
    order = np.random.default_rng(seed).permutation(len(y))
    predicted = np.empty_like(y)
    for fold in np.array_split(order, folds):
        keep = np.setdiff1d(order, fold)
        refit = fit_emulator(x[keep], y[keep], seed=seed, restarts=0, start=start, max_iter=CV_MAX_ITER)
        predicted[fold] = refit.predict(x[fold])
    return _q2(y, predicted)


def _q2(y: np.ndarray, predicted: np.ndarray) -> float:
    """1 − Σ(y − ŷ)² / Σ(y − ȳ)²: the share of ``y``'s variance that ``predicted`` gets right."""
    return 1.0 - float(((y - predicted) ** 2).sum()) / float(((y - y.mean()) ** 2).sum())


def leave_one_out_q2(emulator: Emulator) -> float:
    """Q² of ``emulator`` by leave-one-out in closed form: each training run predicted by the GP
    conditioned on all the others, with the fitted hyperparameters kept (Rasmussen & Williams 2006,
    *Gaussian Processes for Machine Learning*, §5.4.2: the residual of run ``i`` is
    ``[K⁻¹y]_i / [K⁻¹]_ii``). One matrix inverse instead of a refit per fold; slightly optimistic
    against :func:`cross_validated_q2`, whose folds re-optimize the hyperparameters (NaN when the
    training outputs are constant)."""
    from scipy.linalg import cho_solve

    gp = emulator.gp
    y = np.asarray(gp.y_train_, dtype=float).ravel()  # standardized by normalize_y
    if is_constant(y):
        return math.nan
    inverse = cho_solve((gp.L_, True), np.eye(len(y)), check_finite=False)
    residual = (inverse @ y) / np.diag(inverse)
    return 1.0 - float((residual**2).sum()) / float(((y - y.mean()) ** 2).sum())


def predictive_q2(emulator: Emulator, x: np.ndarray, y: np.ndarray | Sequence[float]) -> float:
    """Q² of ``emulator`` at other runs: 1 − Σ(y − ŷ)² / Σ(y − ȳ)² over inputs ``x`` (as
    :func:`emulator_inputs` gives) and their outputs ``y`` — e.g. runs of another design, which
    checks the emulator where its training design did not go (NaN when ``y`` is constant)."""
    x, y = _check_training(x, np.asarray(y, dtype=float))
    return math.nan if is_constant(y) else _q2(y, emulator.predict(x))


def _saltelli_indices(
    emulator: Emulator, factors: Sequence[Factor], base: np.ndarray, num_resamples: int, seed: int
) -> dict[str, np.ndarray]:
    from SALib.analyze import sobol as sobol_analyze

    y = emulator.predict(emulator_inputs(factors, base))
    if is_constant(y):  # no variance to apportion (as sobol_indices: every index NaN)
        nan = np.full(len(factors), math.nan)
        return {"S1": nan, "ST": nan, "S1_conf": nan, "ST_conf": nan}
    result = sobol_analyze.analyze(
        salib_problem(factors),
        y,
        calc_second_order=False,
        num_resamples=num_resamples,
        seed=np.random.default_rng(seed),
    )
    return {key: np.asarray(result[key], dtype=float) for key in ("S1", "ST", "S1_conf", "ST_conf")}


@dataclass(frozen=True)
class EmulatedIndices:
    """What :func:`emulated_sobol` returns for one outcome.

    ``indices``: one row per factor (:data:`EMULATOR_COLUMNS`: S1 and ST of the emulator fitted to
    all runs, with percentile bootstrap bounds); ``q2``, ``noise_share``, ``mc_half_width`` (the
    largest Monte Carlo half-width of an index), ``n_train`` and ``confidence``: see the module
    docstring; ``emulator``: the emulator fitted to all runs (to predict other runs with
    :func:`predictive_q2`).
    """

    indices: pd.DataFrame
    q2: float
    noise_share: float
    mc_half_width: float
    n_train: int
    confidence: float
    emulator: Emulator

    @property
    def trustworthy(self) -> bool:
        """Whether the emulator predicts held-out runs well enough (q2 ≥ :data:`MIN_Q2`)."""
        return bool(self.q2 >= MIN_Q2)


def emulated_sobol(
    factors: Sequence[Factor],
    unit: np.ndarray,
    y: np.ndarray | Sequence[float],
    *,
    n: int = DEFAULT_SOBOL_N,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    confidence: float = 0.95,
    seed: int = 0,
    restarts: int = 2,
    check: str = "cv",
) -> EmulatedIndices:
    """First-order and total Sobol' indices of ``y`` over ``factors`` through a GP emulator.

    ``unit``: the training runs' unit coordinates (rows × factors, e.g. :func:`training_sample`);
    ``y``: one output per row (a mean over replications, or one run). The emulator is fitted to all
    rows and evaluated on a Saltelli sample of ``n`` base samples (a power of two); ``bootstrap``
    refits on resampled rows, each evaluated on a fresh Saltelli sample, give the ``confidence``
    percentile bounds, which so cover the training design's error and the Monte Carlo error
    (``bootstrap = 0``: no bounds, NaN). Warns when the cross-validated Q² is below :data:`MIN_Q2`.
    Outputs without variance have none to apportion: every index, ``q2`` and ``mc_half_width`` are
    NaN (as :func:`speedtrap.analysis.sensitivity.sobol_indices` gives), without a warning.
    ``restarts``: extra optimizer starts of the fit (:func:`fit_emulator`); ``check``: how ``q2`` is
    computed, ``"cv"`` (:func:`cross_validated_q2`, a refit per fold) or ``"loo"``
    (:func:`leave_one_out_q2`, closed form, the hyperparameters kept: minutes faster on hundreds of
    runs of many inputs).
    """
    from SALib.sample import sobol as sobol_sampler

    factors = list(factors)
    problem = salib_problem(factors)  # refuses no factors and repeated paths
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if bootstrap < 0:
        raise ValueError(f"bootstrap must be ≥ 0 refits, got {bootstrap}")
    if n < 2 or n & (n - 1):
        raise ValueError(f"n must be a power of two ≥ 2 base samples, got {n}")
    if check not in ("cv", "loo"):
        raise ValueError(f"check must be cv or loo, got {check!r}")
    x, y = _check_training(emulator_inputs(factors, unit), np.asarray(y, dtype=float))
    names = [f.path for f in factors]
    rng = np.random.default_rng(seed)

    def saltelli() -> np.ndarray:
        return np.asarray(sobol_sampler.sample(problem, n, calc_second_order=False, scramble=True, seed=rng))

    emulator = fit_emulator(x, y, seed=seed, restarts=restarts)
    full = _saltelli_indices(emulator, factors, saltelli(), 100, seed)
    constant = bool(np.isnan(full["S1"]).all())  # outputs without variance: every index NaN
    if check == "loo":
        q2 = leave_one_out_q2(emulator)
    else:
        q2 = cross_validated_q2(x, y, seed=seed, start=emulator.gp.kernel_)
    draws: dict[str, list[np.ndarray]] = {"S1": [], "ST": []}
    for _ in range(0 if constant else bootstrap):
        rows = rng.integers(0, len(y), len(y))
        if np.ptp(y[rows]) == 0.0:
            continue
        # the full fit's hyperparameters: refits with their own optimizer on resampled runs (which
        # repeat points) sometimes collapse to near-constant fits, whose indices are meaningless
        refit = fit_emulator(x[rows], y[rows], start=emulator.gp.kernel_, optimize=False)
        estimate = _saltelli_indices(refit, factors, saltelli(), 2, seed)  # a fresh sample: MC error too
        draws["S1"].append(estimate["S1"])
        draws["ST"].append(estimate["ST"])
    tail = 100.0 * (1.0 - confidence) / 2.0
    frame = pd.DataFrame({"factor": names})
    for key in ("S1", "ST"):
        frame[key] = full[key]
        if draws[key]:
            low, high = np.percentile(np.vstack(draws[key]), [tail, 100.0 - tail], axis=0)
        else:
            low = high = np.full(len(names), math.nan)
        frame[f"{key}_low"] = low
        frame[f"{key}_high"] = high
    frame = frame[list(EMULATOR_COLUMNS)]
    result = EmulatedIndices(
        indices=frame,
        q2=q2,
        noise_share=emulator.noise_share,
        mc_half_width=math.nan if constant else float(np.max(np.r_[full["S1_conf"], full["ST_conf"]])),
        n_train=len(y),
        confidence=confidence,
        emulator=emulator,
    )
    if not constant and not result.trustworthy:
        warnings.warn(
            f"the emulator predicts held-out runs with Q² = {q2:.2f} (< {MIN_Q2}): its Sobol' indices "
            "cannot mean much; add training runs",
            RuntimeWarning,
            stacklevel=2,
        )
    return result
