"""Where history matching draws and spreads its points (pure functions; no Mesa): a Latin hypercube
of candidates in a box, the box around the points a wave kept, and a space-filling subset of them
(:mod:`speedtrap.analysis.history_matching` uses all three)."""

from __future__ import annotations

from typing import Literal

import numpy as np

__all__ = ["BOX_MARGIN", "bounding_box", "candidate_sample", "space_filling_subset"]

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
    a seeded random choice. All rows when there are at most ``n``. ``beside``: points chosen
    before (rows of the same coordinates; maximin only), which the new ones also keep away from, so
    that a design can grow with the points it has; rows equal to one of them are never chosen, so
    fewer than ``n`` come back when the rest are all among them."""
    points = np.asarray(points, dtype=float)
    if n < 1:
        raise ValueError(f"n must be ≥ 1, got {n}")
    rng = np.random.default_rng(seed)
    if len(points) <= n:
        return np.arange(len(points))
    if method == "random":
        return np.sort(rng.choice(len(points), size=n, replace=False))
    if method != "maximin":
        raise ValueError(f"method must be maximin or random, got {method!r}")
    before = np.zeros((0, points.shape[1])) if beside is None else np.asarray(beside, dtype=float)
    if len(before):
        chosen: list[int] = []
        nearest = np.full(len(points), np.inf)
        for b in before:
            nearest = np.minimum(nearest, np.sum((points - b) ** 2, axis=1))
        nearest[nearest <= 1e-24] = -np.inf  # a point chosen before is never chosen again
        n = min(n, int(np.isfinite(nearest).sum()))
    else:
        chosen = [int(rng.integers(len(points)))]
        nearest = np.sum((points - points[chosen[0]]) ** 2, axis=1)
    while len(chosen) < n:
        nxt = int(np.argmax(nearest))
        chosen.append(nxt)
        nearest = np.minimum(nearest, np.sum((points - points[nxt]) ** 2, axis=1))
    return np.asarray(chosen, dtype=int)
