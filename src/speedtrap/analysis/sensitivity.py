"""Global sensitivity analysis: Sobol' indices and Morris screening of an experiment's factors (SALib).

Pure functions of factors, sample tables and output numbers (no Mesa, no simulation). The SALib
problem lives on the **unit hypercube**: factor ``j`` is drawn as a coordinate ``u ∈ [0, 1]`` and
mapped to its value by :meth:`speedtrap.config.experiment.Factor.from_unit`, the same mapping the
experiment engine's Latin hypercube and Sobol designs use. So

* a ``range`` factor is uniform on ``[low, high]``;
* a ``log`` range is uniform in log space (log-uniform) — the indices apportion the output
  variance under that log-uniform input distribution;
* an ``integer`` range takes each whole number ``low..high`` with equal probability, and a
  ``values``/``choices`` factor each level with equal probability (equal parts of ``[0, 1)``).

What rounding (integer and categorical factors) does to the indices: the output becomes a step
function of ``u``. The Sobol' estimators do not assume smoothness, so S1 and ST remain consistent
estimates of the indices of the *discrete* uniform input; cross-sampled pairs that fall in the same
level simply contribute no difference. Morris elementary effects, however, become finite jumps: a
step of ``Δ`` in ``u`` moves such a factor by a whole number of levels (possibly zero), so its μ* is
an average jump per step rather than a derivative and depends on how the Morris grid
(``num_levels``) falls on the factor's levels — use it to rank factors, not to compare magnitudes
with continuous factors to the last digit.

Sample tables have the layout of :func:`speedtrap.experiments.design_points` (an integer ``point``
column, then one column per factor path), so they can be handed to
``run_experiment(spec, points=...)`` unchanged. ``points.attrs["sensitivity"]`` records the method
and its settings (for Morris also the unit coordinates, which rounding may not let us recover from
the values).

**Outputs and replications.** The analysis takes one number per design point. For a stochastic
simulation it is the mean over the replication seeds; every point runs the same seeds (common random
numbers), so the part of the noise that all points share cancels in the estimators' differences
``f(A) − f(A_B^j)``. Noise the replication mean does not remove acts like one more input: it adds
variance that no factor explains (lowering every S1, and the sum of S1 below one) and inflates ST
slightly and μ*/σ of weak factors. More replications shrink it; compare indices at two replication
counts before trusting small ones.

Sources: Saltelli et al. (2010) estimators for S1 and ST, Saltelli (2002) for S2, Morris (1991)
elementary effects with Campolongo et al. (2007) μ*; implementations from SALib
(``SALib.sample.sobol``, ``SALib.analyze.sobol``, ``SALib.sample.morris``, ``SALib.analyze.morris``).
Confidence half-widths are SALib's bootstrap ones: ``z_{(1+confidence)/2}`` × the standard
deviation of ``num_resamples`` bootstrap estimates.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from SALib.analyze import morris as morris_analyze
from SALib.analyze import sobol as sobol_analyze
from SALib.sample import morris as morris_sampler
from SALib.sample import sobol as sobol_sampler

from speedtrap.config.experiment import Experiment, Factor, check_sobol_points, value_label

POINT = "point"
ATTRS_KEY = "sensitivity"
"""Key of ``points.attrs`` under which a sample records its method and settings."""

SOBOL_COLUMNS = ("factor", "S1", "S1_conf", "ST", "ST_conf")
SECOND_ORDER_COLUMNS = ("factor_i", "factor_j", "S2", "S2_conf")
MORRIS_COLUMNS = ("factor", "mu", "mu_star", "mu_star_conf", "sigma")

DEFAULT_RESAMPLES = 100
"""Bootstrap resamples for the confidence half-widths (SALib's default)."""

DEFAULT_MORRIS_LEVELS = 4
"""Grid levels of a Morris sample (SALib's default; Saltelli et al. 2004 recommend 4)."""

FactorsLike = Experiment | Sequence[Factor]
"""An experiment (its factors and design seed are used) or a plain list of factors."""


def _factors(spec: FactorsLike) -> list[Factor]:
    factors = list(spec.factors) if isinstance(spec, Experiment) else list(spec)
    if not factors:
        raise ValueError("a sensitivity analysis needs at least one factor")
    paths = [f.path for f in factors]
    if len(set(paths)) != len(paths):
        raise ValueError(f"factor paths repeat: {paths}")
    return factors


def _seed(spec: FactorsLike, seed: int | None) -> int:
    if seed is not None:
        return seed
    return spec.design.seed if isinstance(spec, Experiment) else 0


def salib_problem(spec: FactorsLike) -> dict[str, Any]:
    """The SALib problem of ``spec``'s factors: one variable per factor path, bounds ``[0, 1]`` (the
    unit coordinate that :meth:`Factor.from_unit` maps to the factor's value)."""
    factors = _factors(spec)
    return {
        "num_vars": len(factors),
        "names": [f.path for f in factors],
        "bounds": [[0.0, 1.0] for _ in factors],
    }


def points_from_unit(spec: FactorsLike, unit: np.ndarray) -> pd.DataFrame:
    """Design points from unit-hypercube coordinates (rows × factors): ``point`` (0, 1, …) and one
    column per factor path holding its value (tables and lists as compact JSON text)."""
    factors = _factors(spec)
    unit = np.asarray(unit, dtype=float)
    if unit.ndim != 2 or unit.shape[1] != len(factors):
        raise ValueError(f"unit coordinates must be rows × {len(factors)} factors, got shape {unit.shape}")
    frame = pd.DataFrame({POINT: pd.Series(np.arange(len(unit)), dtype="int64")})
    for j, factor in enumerate(factors):
        frame[factor.path] = pd.Series([value_label(v) for v in factor.from_unit(unit[:, j])])
    return frame


def sobol_sample(
    spec: FactorsLike, n: int, *, calc_second_order: bool = False, seed: int | None = None
) -> pd.DataFrame:
    """Saltelli's cross-sampling of a scrambled Sobol' sequence (``SALib.sample.sobol``) over the factors.

    ``n`` base samples (a power of two, ≥ 2) give ``n·(D + 2)`` points for ``D`` factors, or
    ``n·(2D + 2)`` with ``calc_second_order``. ``seed`` (default: the experiment's ``design.seed``,
    or 0 for a list of factors) seeds the scrambling. The rows are in SALib's order, which
    :func:`sobol_indices` relies on: keep the ``point`` numbers.
    """
    if n < 2:
        raise ValueError(f"n must be ≥ 2 base samples (the confidence intervals resample them), got {n}")
    check_sobol_points(n)
    problem = salib_problem(spec)
    rng = np.random.default_rng(_seed(spec, seed))
    unit = sobol_sampler.sample(problem, n, calc_second_order=calc_second_order, scramble=True, seed=rng)
    points = points_from_unit(spec, unit)
    points.attrs[ATTRS_KEY] = {"method": "sobol", "n": n, "calc_second_order": calc_second_order}
    return points


def morris_sample(
    spec: FactorsLike,
    n: int,
    *,
    num_levels: int = DEFAULT_MORRIS_LEVELS,
    optimal_trajectories: int | None = None,
    seed: int | None = None,
) -> pd.DataFrame:
    """``n`` Morris trajectories (``SALib.sample.morris``) over the factors: ``(D + 1)`` points each.

    Each trajectory starts on a ``num_levels`` grid of the unit hypercube and moves one factor at a
    time by ``Δ = num_levels / (2·(num_levels − 1))`` of its range. ``optimal_trajectories`` keeps
    that many of the ``n`` trajectories, chosen for spread (Campolongo et al. 2007). The unit
    coordinates are kept in ``points.attrs["sensitivity"]["unit"]`` for :func:`morris_indices`.
    """
    if n < 2:
        raise ValueError(f"n must be ≥ 2 trajectories, got {n}")
    problem = salib_problem(spec)
    rng = np.random.default_rng(_seed(spec, seed))
    unit = morris_sampler.sample(
        problem, n, num_levels=num_levels, optimal_trajectories=optimal_trajectories, seed=rng
    )
    points = points_from_unit(spec, unit)
    points.attrs[ATTRS_KEY] = {
        "method": "morris",
        "n": optimal_trajectories or n,
        "num_levels": num_levels,
        "unit": unit.tolist(),  # nested lists: attrs are compared when frames are combined
    }
    return points


def _settings(points: pd.DataFrame, method: str) -> dict[str, Any]:
    settings = points.attrs.get(ATTRS_KEY) or {}
    if settings and settings.get("method") != method:
        raise ValueError(f"these points are a {settings.get('method')} sample, not a {method} sample")
    return settings


def _check_points(points: pd.DataFrame, factors: Sequence[Factor]) -> None:
    missing = [f.path for f in factors if f.path not in points.columns]
    if missing:
        raise ValueError(f"points lack the factor columns {', '.join(missing)}")


def output_vector(points: pd.DataFrame, outputs: Sequence[float] | np.ndarray | pd.Series) -> np.ndarray:
    """The outputs as floats in the order of ``points``' rows.

    ``outputs`` is either in row order (a sequence or array as long as ``points``) or a Series
    indexed by point number (e.g. ``table.groupby("point")[outcome].mean()``), which is aligned with
    the ``point`` column. Raises ``ValueError`` for a missing or non-finite output, naming the points.
    """
    if isinstance(outputs, pd.Series) and POINT in points.columns:
        y: np.ndarray = outputs.reindex(points[POINT].to_numpy()).to_numpy(dtype=float)
    else:
        y = np.asarray(outputs, dtype=float).ravel()
        if y.size != len(points):
            raise ValueError(f"got {y.size} outputs for {len(points)} points")
    bad = ~np.isfinite(y)
    if bad.any():
        ids = points[POINT].to_numpy()[bad] if POINT in points.columns else np.flatnonzero(bad)
        shown = ", ".join(map(str, ids[:10])) + (" …" if bad.sum() > 10 else "")
        raise ValueError(
            f"{int(bad.sum())} point(s) have no finite output (points {shown}); every point needs one"
        )
    return y


def _nan_frame(columns: Sequence[str], names: Sequence[Any]) -> pd.DataFrame:
    frame = pd.DataFrame({c: np.full(len(names), math.nan) for c in columns})
    frame[columns[0]] = list(names)
    return frame


def is_constant(y: np.ndarray) -> bool:
    """Whether the outputs ``y`` are constant (their range within machine precision of their
    size): there is no variance to apportion, and every sensitivity index is NaN."""
    return bool(np.ptp(y) <= np.finfo(float).eps * max(1.0, float(np.abs(y).max())))


def _sobol_analysis(
    points: pd.DataFrame,
    outputs: Sequence[float] | np.ndarray | pd.Series,
    spec: FactorsLike,
    confidence: float,
    calc_second_order: bool | None,
    num_resamples: int,
    seed: int,
) -> tuple[list[str], dict[str, Any] | None]:
    factors = _factors(spec)
    _check_points(points, factors)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    settings = _settings(points, "sobol")
    if calc_second_order is None:
        calc_second_order = bool(settings.get("calc_second_order", False))
    d = len(factors)
    step = 2 * d + 2 if calc_second_order else d + 2
    if len(points) % step or len(points) < 2 * step:
        raise ValueError(
            f"{len(points)} points is not a Saltelli sample of {d} factors "
            f"(need a multiple of {step}, at least two base samples, calc_second_order={calc_second_order})"
        )
    y = output_vector(points, outputs)
    names = [f.path for f in factors]
    if is_constant(y):
        return names, None
    result = sobol_analyze.analyze(
        salib_problem(factors),
        y,
        calc_second_order=calc_second_order,
        num_resamples=num_resamples,
        conf_level=confidence,
        seed=np.random.default_rng(seed),  # a Generator: SALib falls back to global state for seed 0
    )
    return names, dict(result)


def sobol_indices(
    points: pd.DataFrame,
    outputs: Sequence[float] | np.ndarray | pd.Series,
    spec: FactorsLike,
    confidence: float = 0.95,
    *,
    calc_second_order: bool | None = None,
    num_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> pd.DataFrame:
    """First-order (S1) and total (ST) Sobol' indices of one output over a :func:`sobol_sample`.

    Tidy, one row per factor: ``factor``, ``S1``, ``S1_conf``, ``ST``, ``ST_conf`` (the ``_conf``
    columns are half-widths of the ``confidence`` interval, bootstrap over base samples seeded by
    ``seed``). Indices are shares of the output variance (unitless); S1 is the share a factor
    explains alone, ST the share it is involved in (alone or with others). ``calc_second_order``
    defaults to the sample's own setting. A constant output has no variance to apportion: every
    index is NaN.
    """
    names, result = _sobol_analysis(points, outputs, spec, confidence, calc_second_order, num_resamples, seed)
    if result is None:
        return _nan_frame(SOBOL_COLUMNS, names)
    return pd.DataFrame(
        {
            "factor": names,
            "S1": np.asarray(result["S1"], dtype=float),
            "S1_conf": np.asarray(result["S1_conf"], dtype=float),
            "ST": np.asarray(result["ST"], dtype=float),
            "ST_conf": np.asarray(result["ST_conf"], dtype=float),
        }
    )


def sobol_second_order(
    points: pd.DataFrame,
    outputs: Sequence[float] | np.ndarray | pd.Series,
    spec: FactorsLike,
    confidence: float = 0.95,
    *,
    num_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> pd.DataFrame:
    """Second-order Sobol' indices (pairwise interactions) of a sample drawn with ``calc_second_order``.

    One row per pair ``i < j``: ``factor_i``, ``factor_j``, ``S2`` (share of output variance due to
    the interaction alone, unitless) and ``S2_conf`` (half-width of the ``confidence`` interval).
    """
    names, result = _sobol_analysis(points, outputs, spec, confidence, True, num_resamples, seed)
    pairs = [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    s2 = np.full((len(names), len(names)), math.nan) if result is None else np.asarray(result["S2"])
    conf = np.full_like(s2, math.nan) if result is None else np.asarray(result["S2_conf"])
    return pd.DataFrame(
        {
            "factor_i": [names[i] for i, _ in pairs],
            "factor_j": [names[j] for _, j in pairs],
            "S2": [float(s2[i, j]) for i, j in pairs],
            "S2_conf": [float(conf[i, j]) for i, j in pairs],
        },
        columns=list(SECOND_ORDER_COLUMNS),
    )


def unit_from_values(spec: FactorsLike, points: pd.DataFrame) -> np.ndarray:
    """Unit-hypercube coordinates of continuous range factors' values (inverse of ``from_unit``).

    Integer and categorical factors cannot be inverted (several coordinates give one value): for
    them keep the sample's ``attrs`` (see :func:`morris_sample`).
    """
    factors = _factors(spec)
    _check_points(points, factors)
    columns = []
    for factor in factors:
        if factor.range is None or factor.integer:
            raise ValueError(
                f"factor {factor.path!r} is integer or categorical: its unit coordinates cannot be "
                "recovered from its values; pass the DataFrame that morris_sample returned (its attrs "
                "hold them)"
            )
        low, high = factor.range
        x = points[factor.path].to_numpy(dtype=float)
        columns.append(np.log(x / low) / np.log(high / low) if factor.log else (x - low) / (high - low))
    return np.column_stack(columns)


def morris_indices(
    points: pd.DataFrame,
    outputs: Sequence[float] | np.ndarray | pd.Series,
    spec: FactorsLike,
    confidence: float = 0.95,
    *,
    num_levels: int | None = None,
    num_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> pd.DataFrame:
    """Morris screening measures of one output over a :func:`morris_sample`.

    Tidy, one row per factor: ``factor``, ``mu`` (mean elementary effect), ``mu_star`` (mean absolute
    elementary effect), ``mu_star_conf`` (half-width of its ``confidence`` interval, bootstrap seeded
    by ``seed``) and ``sigma`` (standard deviation of the elementary effects: nonlinearity or
    interactions). An elementary effect is ``Δy / Δu`` with ``u`` the factor's position in its
    range (log-scaled for log ranges), so all three are in **output units per full range of the
    factor** and comparable across factors. A constant output gives zeros.
    """
    factors = _factors(spec)
    _check_points(points, factors)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    settings = _settings(points, "morris")
    levels = num_levels if num_levels is not None else int(settings.get("num_levels", DEFAULT_MORRIS_LEVELS))
    d = len(factors)
    if len(points) % (d + 1) or len(points) < 2 * (d + 1):
        raise ValueError(
            f"{len(points)} points is not a Morris sample of {d} factors "
            f"(need at least two trajectories of {d + 1} points)"
        )
    unit = settings.get("unit")
    x = np.asarray(unit, dtype=float) if unit is not None else unit_from_values(factors, points)
    if x.shape != (len(points), d):
        raise ValueError(f"the sample's unit coordinates have shape {x.shape}, expected {(len(points), d)}")
    moved = (np.abs(np.diff(x.reshape(-1, d + 1, d), axis=1)) > 1e-9).sum(axis=2)
    if not (moved == 1).all():
        raise ValueError("these points are not Morris trajectories (each step must move exactly one factor)")
    y = output_vector(points, outputs)
    result = morris_analyze.analyze(
        salib_problem(factors),
        x,
        y,
        num_resamples=num_resamples,
        conf_level=confidence,
        num_levels=levels,
        seed=np.random.default_rng(seed),
    )
    return pd.DataFrame(
        {
            "factor": [f.path for f in factors],
            "mu": np.asarray(result["mu"], dtype=float),
            "mu_star": np.asarray(result["mu_star"], dtype=float),
            "mu_star_conf": np.asarray(result["mu_star_conf"], dtype=float),
            "sigma": np.asarray(result["sigma"], dtype=float),
        }
    )


__all__ = [
    "ATTRS_KEY",
    "MORRIS_COLUMNS",
    "SECOND_ORDER_COLUMNS",
    "SOBOL_COLUMNS",
    "FactorsLike",
    "is_constant",
    "morris_indices",
    "morris_sample",
    "output_vector",
    "points_from_unit",
    "salib_problem",
    "sobol_indices",
    "sobol_sample",
    "sobol_second_order",
    "unit_from_values",
]
