"""Where history matching draws and spreads its points (pure functions; no Mesa): the uncertain
inputs and their unit coordinates (:class:`Parameter`), a Latin hypercube of candidates in a box, the
box around the points a wave kept, and a space-filling subset of them
(:mod:`speedtrap.analysis.history_matching` uses them all)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from speedtrap.config.experiment import Factor

__all__ = ["BOX_MARGIN", "Parameter", "Scale", "bounding_box", "candidate_sample", "space_filling_subset"]

Scale = Literal["linear", "log"]
"""How a range is spread over the unit interval: uniformly, or uniformly in its logarithm."""

BOX_MARGIN = 0.1
"""The next wave's candidates are drawn in the bounding box of the kept candidates, widened on
each side by this share of its width (and clipped to the unit cube). Assumption: it guards against
a box that the kept candidates, a finite sample, draw slightly too tight."""


def candidate_sample(n: int, low: np.ndarray, high: np.ndarray, *, seed: int = 0) -> np.ndarray:
    """``n`` points of a Latin hypercube (``scipy.stats.qmc``) in the box ``[low, high]``."""
    from scipy.stats import qmc

    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    if n < 1 or low.shape != high.shape or low.ndim != 1 or np.any(high < low):
        raise ValueError(f"need n ≥ 1 and a box low ≤ high, got n = {n}, {low} – {high}")
    unit = qmc.LatinHypercube(len(low), rng=np.random.default_rng(seed)).random(n)
    return np.asarray(low + unit * (high - low), dtype=float)


def bounding_box(points: np.ndarray, d: int, *, margin: float = BOX_MARGIN) -> tuple[np.ndarray, np.ndarray]:
    """The bounding box of ``points`` (rows × ``d``) widened by ``margin`` of its width on each side
    and clipped to the unit cube; the whole cube when there are no points."""
    points = np.asarray(points, dtype=float).reshape(-1, d)
    if len(points) == 0:
        return np.zeros(d), np.ones(d)
    low, high = points.min(axis=0), points.max(axis=0)
    width = high - low
    return np.clip(low - margin * width, 0.0, 1.0), np.clip(high + margin * width, 0.0, 1.0)


SAME_POINT = 1e-24
"""Squared distance at or below which two rows are the same point: never chosen twice."""


def space_filling_subset(
    points: np.ndarray,
    n: int,
    *,
    seed: int = 0,
    method: Literal["maximin", "random"] = "maximin",
    beside: np.ndarray | None = None,
) -> np.ndarray:
    """Indices of ``n`` rows of ``points`` that spread over them: greedy maximin (each next point
    the farthest from those chosen, from a seeded random start; Johnson, Moore & Ylvisaker 1990) or
    a seeded random choice. ``beside``: points chosen
    before (rows of the same coordinates; maximin only), which the new ones also keep away from, so
    that a design can grow with the points it has. No point is chosen twice: rows equal to one chosen
    before or already (copies) are skipped, so fewer than ``n`` come back when too few distinct rows
    are left. Without ``beside``, all rows come back when there are at most ``n``."""
    points = np.asarray(points, dtype=float)
    if n < 1:
        raise ValueError(f"n must be ≥ 1, got {n}")
    rng = np.random.default_rng(seed)
    before = np.zeros((0, points.shape[1])) if beside is None else np.asarray(beside, dtype=float)
    if len(points) <= n and not len(before):
        return np.arange(len(points))
    if method == "random":
        if len(before):
            raise ValueError("beside needs the maximin method")
        return np.sort(rng.choice(len(points), size=n, replace=False))
    if method != "maximin":
        raise ValueError(f"method must be maximin or random, got {method!r}")
    if len(before):
        chosen: list[int] = []
        nearest = np.full(len(points), np.inf)
        for b in before:
            nearest = np.minimum(nearest, np.sum((points - b) ** 2, axis=1))
        nearest[nearest <= SAME_POINT] = -np.inf  # a point chosen before is never chosen again
    else:
        chosen = [int(rng.integers(len(points)))]
        nearest = np.sum((points - points[chosen[0]]) ** 2, axis=1)
    while len(chosen) < n:
        nxt = int(np.argmax(nearest))
        if not nearest[nxt] > SAME_POINT:  # only points chosen already (or their copies) are left
            break
        chosen.append(nxt)
        nearest = np.minimum(nearest, np.sum((points - points[nxt]) ** 2, axis=1))
    return np.asarray(chosen, dtype=int)


@dataclass(frozen=True)
class Parameter:
    """An uncertain input: ``name`` (a scenario path), its range ``[low, high]`` on a ``linear`` or
    ``log`` scale, whether it takes whole numbers only, and where the range comes from."""

    name: str
    low: float
    high: float
    scale: Scale = "linear"
    integer: bool = False
    source: str = ""

    def __post_init__(self) -> None:
        if self.scale not in ("linear", "log"):
            raise ValueError(f"parameter {self.name!r}: scale must be linear or log, got {self.scale!r}")
        if not (math.isfinite(self.low) and math.isfinite(self.high) and self.low < self.high):
            raise ValueError(f"parameter {self.name!r}: need low < high, got [{self.low}, {self.high}]")
        if self.scale == "log" and self.low <= 0.0:
            raise ValueError(f"parameter {self.name!r}: a log scale needs low > 0, got {self.low}")
        if self.integer and (self.low != int(self.low) or self.high != int(self.high)):
            raise ValueError(f"parameter {self.name!r}: an integer range needs whole-number bounds")

    @property
    def factor(self) -> Factor:
        """The same range as an experiment factor (its mapping from unit coordinates is this one's)."""
        return Factor(
            path=self.name, range=(self.low, self.high), log=self.scale == "log", integer=self.integer
        )

    def from_unit(self, u: np.ndarray) -> np.ndarray:
        """Values at unit coordinates ``u`` (uniform, log-uniform, integers by equal stretches)."""
        return np.asarray(self.factor.from_unit(np.asarray(u, dtype=float)), dtype=float)

    def to_unit(self, value: np.ndarray) -> np.ndarray:
        """Unit coordinates of ``value`` (the inverse of :meth:`from_unit` for a continuous range;
        an integer's coordinate is the middle of its stretch)."""
        v = np.asarray(value, dtype=float)
        if self.integer and self.scale == "linear":
            return (v - self.low + 0.5) / (self.high - self.low + 1.0)
        if self.scale == "log":
            return np.asarray(np.log(v / self.low) / math.log(self.high / self.low), dtype=float)
        return (v - self.low) / (self.high - self.low)
