"""Design points: which factor values each point of an experiment takes.

A design is data: :func:`design_points` returns one row per point (an integer ``point`` column and
one column per factor, named by its path). Structured values (tables, lists) appear as compact JSON
text; :func:`scenario_for` turns a row back into the scenario it stands for.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import qmc

from speedtrap.config.experiment import Experiment, apply_overrides, value_label
from speedtrap.config.scenario import Scenario

POINT = "point"


def _frame(spec: Experiment, rows: list[tuple[Any, ...]]) -> pd.DataFrame:
    columns: dict[str, Any] = {POINT: pd.Series(np.arange(len(rows)), dtype="int64")}
    for j, path in enumerate(spec.factor_paths):
        columns[path] = pd.Series([value_label(row[j]) for row in rows])
    return pd.DataFrame(columns)


def _rng_keyword(engine: type, rng: np.random.Generator) -> dict[str, np.random.Generator]:
    """``{"rng": rng}`` for SciPy ≥ 1.15 (where ``seed=`` is deprecated), ``{"seed": rng}`` before."""
    return {"rng": rng} if "rng" in inspect.signature(engine).parameters else {"seed": rng}


def unit_samples(spec: Experiment, points: int) -> np.ndarray:
    """``points`` × factors samples of the unit hypercube from the spec's lhs or sobol sampler.

    Latin hypercube: ``qmc.LatinHypercube``; Sobol: scrambled ``qmc.Sobol`` via ``random_base2``
    (``points`` must be a power of two). Both are seeded by ``spec.design.seed``.
    """
    d = len(spec.factors)
    rng = np.random.default_rng(spec.design.seed)
    if spec.design.kind == "lhs":
        return qmc.LatinHypercube(d, **_rng_keyword(qmc.LatinHypercube, rng)).random(points)
    if spec.design.kind == "sobol":
        m = points.bit_length() - 1
        if 1 << m != points:
            raise ValueError(f"design.points: a sobol design needs a power of 2, got {points}")
        return qmc.Sobol(d, scramble=True, **_rng_keyword(qmc.Sobol, rng)).random_base2(m)
    raise ValueError(f"design.kind {spec.design.kind!r} has no unit-hypercube sampler")


def design_points(spec: Experiment) -> pd.DataFrame:
    """One row per design point: ``point`` (0, 1, …) and one column per factor (named by its path).

    * ``full_factorial``: every combination of the factors' levels, the first factor varying slowest;
    * ``lhs`` / ``sobol``: ``design.points`` samples of the unit hypercube mapped to each factor
      (ranges: uniform or log-uniform; ``values``/``choices``: equal parts of the unit interval).

    Without factors there is one point: the base scenario.
    """
    if not spec.factors:
        return _frame(spec, [()])
    if spec.design.kind == "full_factorial":
        rows = list(itertools.product(*(f.grid() for f in spec.factors)))
        return _frame(spec, rows)
    assert spec.design.points is not None
    u = unit_samples(spec, spec.design.points)
    columns = [f.from_unit(u[:, j]) for j, f in enumerate(spec.factors)]
    return _frame(spec, list(zip(*columns, strict=True)))


def check_points(spec: Experiment, points: pd.DataFrame) -> pd.DataFrame:
    """Explicit design points (e.g. a Saltelli sample) in :func:`design_points`' layout.

    ``points`` has one column per factor path (no others except an optional integer ``point``
    column, which must be unique; without it the rows are numbered 0, 1, …).
    """
    paths = spec.factor_paths
    missing = [p for p in paths if p not in points.columns]
    extra = [c for c in points.columns if c not in (*paths, POINT)]
    if missing or extra:
        raise ValueError(
            f"points must have one column per factor ({', '.join(paths) or 'none'})"
            + (f"; missing: {', '.join(missing)}" if missing else "")
            + (f"; unknown: {', '.join(map(str, extra))}" if extra else "")
        )
    if POINT in points.columns:
        index = pd.Series(points[POINT].to_numpy(), dtype="int64")
        if index.duplicated().any():
            raise ValueError("points: the point column repeats a point number")
    else:
        index = pd.Series(np.arange(len(points)), dtype="int64")
    frame = pd.DataFrame({POINT: index})
    for path in paths:
        frame[path] = points[path].to_numpy()
    return frame


def point_overrides(spec: Experiment, row: Mapping[str, Any]) -> dict[str, Any]:
    """The scenario overrides of one design-point row (factor path → scenario value)."""
    return {f.path: f.value_for(row[f.path]) for f in spec.factors}


def scenario_for(spec: Experiment, row: Mapping[str, Any] | pd.Series) -> Scenario:
    """The scenario of one design point: the base scenario with the row's factor values applied."""
    return apply_overrides(spec.scenario, point_overrides(spec, row))
