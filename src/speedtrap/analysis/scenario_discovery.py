"""Scenario discovery: the boxes of assumptions in which a claim holds (or flips).

Given sampled inputs ``x`` (one numeric column per lever or uncertainty) and a boolean ``y`` (the
case of interest at each sample: the claim holds, or it flips), find a box — an interval on a few of
the inputs — that holds most of the cases (**coverage**: the share of all cases that fall in the box)
and in which most samples are cases (**density**: the share of the box's samples that are cases). Its
**mass** is the share of all samples in the box.

* :func:`prim_box`: the Patient Rule Induction Method (Friedman & Fisher 1999) as the EMA Workbench
  implements it (``ema_workbench.analysis.prim``, Kwakkel 2017). It peels slices of ``peel_alpha`` of
  the samples off the box's faces while the density grows, down to ``mass_min``; of the boxes on that
  peeling trajectory whose density is at least ``min_density`` we take the one with the largest
  harmonic mean of coverage and density (none: of all of them).
* :func:`cart_box`: the cross-check, a depth-limited classification tree (scikit-learn's CART): of its
  leaves, chosen by the same rule.

Both give a :class:`Box` whose coverage and density are counted here from the samples, so that the
two are comparable; :func:`box_agreement` is the Jaccard overlap of the samples they hold, and
:meth:`Box.describe` says the box in words. The EMA Workbench is imported only when PRIM runs (it
loads its whole framework, a few seconds); its import-time notices about optional extras and a pandas
deprecation inside it are silenced there.

Pure: numbers and DataFrames in, boxes out (no Mesa, no agents or models).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

DEFAULT_MIN_DENSITY = 0.8
"""A box is taken among those with at least this density (assumption: 4 cases in 5)."""
DEFAULT_PEEL_ALPHA = 0.05
"""Share of the box's samples PRIM peels per step (the EMA Workbench's and Friedman & Fisher's default)."""
DEFAULT_MASS_MIN = 0.05
"""Smallest share of all samples a PRIM box may hold (the EMA Workbench's default)."""
DEFAULT_TREE_DEPTH = 3
"""Depth of the CART cross-check: a box of at most three restricted inputs, as PRIM's usually are."""

PRIM_NOTICES = (
    "ipyparallel not installed",  # optional extras of the EMA Workbench, announced at import
    "altair based interactive inspection",
    "The inplace keyword",  # a pandas 3.1 deprecation inside ema_workbench 3.0's Prim.__init__
)


@dataclass(frozen=True)
class Bound:
    """One restricted input of a box: ``low <= x <= high`` (``None``: that side is open)."""

    path: str
    low: float | None
    high: float | None

    def inside(self, values: np.ndarray) -> np.ndarray:
        ok = np.ones(values.shape, dtype=bool)
        if self.low is not None:
            ok &= values >= self.low
        if self.high is not None:
            ok &= values <= self.high
        return ok

    def words(self, label: str | None = None) -> str:
        name = label or self.path
        if self.low is not None and self.high is not None:
            return f"{name} is between {_number(self.low)} and {_number(self.high)}"
        if self.high is not None:
            return f"{name} ≤ {_number(self.high)}"
        assert self.low is not None
        return f"{name} ≥ {_number(self.low)}"


def _number(value: float) -> str:
    return f"{value:.3g}"


@dataclass(frozen=True)
class Box:
    """A box over the inputs (its restricted ones: ``bounds``; the others are free) with the share
    of the cases it holds (``coverage``), the share of its samples that are cases (``density``), the
    share of all samples inside (``mass``) and how many samples it holds (``n_inside``); ``method``
    is ``"prim"`` or ``"cart"``."""

    bounds: tuple[Bound, ...]
    coverage: float
    density: float
    mass: float
    n_inside: int
    method: str

    def contains(self, x: pd.DataFrame) -> np.ndarray:
        """Which rows of ``x`` lie in the box."""
        ok = np.ones(len(x), dtype=bool)
        for bound in self.bounds:
            ok &= bound.inside(x[bound.path].to_numpy(dtype=float))
        return ok

    def conditions(self, labels: Mapping[str, str] | None = None) -> str:
        """The box's conditions in words, joined by "and" ("everywhere" for an unrestricted box)."""
        labels = labels or {}
        if not self.bounds:
            return "everywhere in the sampled ranges"
        return " and ".join(b.words(labels.get(b.path)) for b in self.bounds)

    def describe(self, what: str = "holds", labels: Mapping[str, str] | None = None) -> str:
        """E.g. ``holds when review detection ≤ 0.6 and task effort ≥ 7.2e+03 (coverage 0.81, density
        0.92)``."""
        if not self.bounds and self.density < 1.0:  # the whole space, where it does not always hold
            return (
                f"no boundary: no region of the sampled ranges where it {what} more often than overall "
                f"(density {self.density:.2f} over all {self.n_inside} samples)"
            )
        where = f"when {self.conditions(labels)}" if self.bounds else self.conditions(labels)
        return (
            f"{what} {where} "
            f"(coverage {self.coverage:.2f}, density {self.density:.2f}, {self.n_inside} samples)"
        )

    def as_dict(self) -> dict[str, Any]:
        """Plain data (for JSON): the bounds, coverage, density, mass, samples and method."""
        return {
            "method": self.method,
            "bounds": [{"path": b.path, "low": b.low, "high": b.high} for b in self.bounds],
            "coverage": self.coverage,
            "density": self.density,
            "mass": self.mass,
            "n_inside": self.n_inside,
        }


def checked_inputs(
    x: pd.DataFrame, y: Sequence[bool] | np.ndarray | pd.Series
) -> tuple[pd.DataFrame, np.ndarray]:
    """``x`` and ``y`` as PRIM and CART take them, checked (as many rows as flags, some inputs)."""
    if len(x) != len(y):
        raise ValueError(f"x has {len(x)} rows and y {len(y)} values")
    if x.shape[1] == 0:
        raise ValueError("x has no columns: nothing to bound")
    numeric = x.apply(pd.to_numeric, errors="coerce").astype(float)
    bad = [str(c) for c in x.columns if numeric[c].isna().any()]
    if bad:
        raise ValueError(f"inputs must be numbers without NaN; not so: {', '.join(bad)}")
    flags = np.asarray(y, dtype=bool)
    return numeric.reset_index(drop=True), flags


def measured_box(bounds: Sequence[Bound], x: pd.DataFrame, y: np.ndarray, method: str) -> Box:
    """The box of ``bounds`` with its coverage, density and mass measured on ``x`` and ``y``."""
    inside = Box(tuple(bounds), 0.0, 0.0, 0.0, 0, method).contains(x)
    n_inside = int(inside.sum())
    cases = int(y.sum())
    hits = int((inside & y).sum())
    return Box(
        bounds=tuple(bounds),
        coverage=hits / cases if cases else math.nan,
        density=hits / n_inside if n_inside else math.nan,
        mass=n_inside / len(y),
        n_inside=n_inside,
        method=method,
    )


def everywhere_box(x: pd.DataFrame, y: np.ndarray, method: str) -> Box:
    """The unrestricted box, measured."""
    return measured_box((), x, y, method)


def _balance(coverage: float, density: float) -> float:
    """The harmonic mean of coverage and density (0 when either is 0 or undefined)."""
    if not coverage > 0 or not density > 0:
        return 0.0
    return 2 * coverage * density / (coverage + density)


def _pick(candidates: Sequence[tuple[float, float]], min_density: float) -> int:
    """Index of the (coverage, density) pair that balances the two best — the largest harmonic mean
    — among those with density ≥ ``min_density``; when none reaches it, among all (ties: the first).

    Not simply the largest coverage at that density: with noisy cases, a box can grow past the cases'
    region until its density falls to the threshold, and its bounds then say less than they could."""
    dense = [i for i, (_, d) in enumerate(candidates) if d >= min_density]
    pool = dense or list(range(len(candidates)))
    return max(pool, key=lambda i: (_balance(*candidates[i]), -i))


def prim_box(
    x: pd.DataFrame,
    y: Sequence[bool] | np.ndarray | pd.Series,
    *,
    min_density: float = DEFAULT_MIN_DENSITY,
    peel_alpha: float = DEFAULT_PEEL_ALPHA,
    mass_min: float = DEFAULT_MASS_MIN,
) -> Box | None:
    """The PRIM box of the cases ``y`` over the numeric inputs ``x`` (module docstring); ``None``
    without a case; an unrestricted box when every sample is one."""
    x, flags = checked_inputs(x, y)
    if not flags.any():
        return None
    if flags.all():
        return everywhere_box(x, flags, "prim")
    found, pick = prim_trajectory(x, flags, min_density=min_density, peel_alpha=peel_alpha, mass_min=mass_min)
    return measured_box(prim_bounds(found, pick, x), x, flags, "prim")


def prim_trajectory(
    x: pd.DataFrame, flags: np.ndarray, *, min_density: float, peel_alpha: float, mass_min: float
) -> tuple[Any, int]:
    """The EMA Workbench's PRIM box (its peeling trajectory) and the step :func:`_pick` chooses."""
    with warnings.catch_warnings():
        for notice in PRIM_NOTICES:
            warnings.filterwarnings("ignore", message=notice)
        from ema_workbench.analysis import prim as ema_prim

        finder = ema_prim.Prim(x, flags.astype(int), peel_alpha=peel_alpha, mass_min=mass_min)
        found = finder.find_box()
    trajectory = found.peeling_trajectory
    pick = _pick(list(zip(trajectory["coverage"], trajectory["density"], strict=True)), min_density)
    return found, pick


def prim_bounds(found: Any, pick: int, x: pd.DataFrame) -> list[Bound]:
    """The restricted inputs of step ``pick`` of a PRIM trajectory."""
    limits = found.box_lims[pick]
    full = found.box_lims[0]
    bounds = []
    for path in x.columns:
        low, high = float(limits.loc[0, path]), float(limits.loc[1, path])
        lo0, hi0 = float(full.loc[0, path]), float(full.loc[1, path])
        if low > lo0 or high < hi0:
            bounds.append(Bound(str(path), low if low > lo0 else None, high if high < hi0 else None))
    return bounds


def cart_box(
    x: pd.DataFrame,
    y: Sequence[bool] | np.ndarray | pd.Series,
    *,
    max_depth: int = DEFAULT_TREE_DEPTH,
    min_density: float = DEFAULT_MIN_DENSITY,
    min_leaf: float = DEFAULT_MASS_MIN,
) -> Box | None:
    """The cross-check: a leaf of a depth-``max_depth`` classification tree (leaves of at least
    ``min_leaf`` of the samples), chosen as PRIM's box is (:func:`prim_box`), as a box; ``None``
    without a case."""
    from sklearn.tree import DecisionTreeClassifier

    x, flags = checked_inputs(x, y)
    if not flags.any():
        return None
    if flags.all():
        return everywhere_box(x, flags, "cart")
    leaf_size = max(1, math.ceil(min_leaf * len(flags)))
    tree = DecisionTreeClassifier(max_depth=max_depth, min_samples_leaf=leaf_size, random_state=0)
    tree.fit(x.to_numpy(), flags)
    structure = tree.tree_
    paths = [str(c) for c in x.columns]
    leaves: list[list[Bound]] = []

    def walk(node: int, box: dict[str, tuple[float | None, float | None]]) -> None:
        left, right = int(structure.children_left[node]), int(structure.children_right[node])
        if left == right:  # a leaf
            leaves.append([Bound(p, lo, hi) for p, (lo, hi) in box.items()])
            return
        path = paths[int(structure.feature[node])]
        cut = float(structure.threshold[node])
        lo, hi = box.get(path, (None, None))
        walk(left, {**box, path: (lo, cut if hi is None else min(hi, cut))})
        walk(right, {**box, path: (cut if lo is None else max(lo, cut), hi)})

    walk(0, {})
    boxes = [measured_box(bounds, x, flags, "cart") for bounds in leaves]
    pick = _pick([(b.coverage, b.density) for b in boxes], min_density)
    return boxes[pick]


def box_agreement(first: Box, second: Box, x: pd.DataFrame) -> float:
    """Jaccard overlap of the samples of ``x`` inside the two boxes (1: the same samples)."""
    a, b = first.contains(x), second.contains(x)
    either = int((a | b).sum())
    return int((a & b).sum()) / either if either else math.nan


__all__ = [
    "DEFAULT_MASS_MIN",
    "DEFAULT_MIN_DENSITY",
    "DEFAULT_PEEL_ALPHA",
    "DEFAULT_TREE_DEPTH",
    "PRIM_NOTICES",
    "Bound",
    "Box",
    "box_agreement",
    "cart_box",
    "checked_inputs",
    "everywhere_box",
    "measured_box",
    "prim_bounds",
    "prim_box",
    "prim_trajectory",
]
