"""Log-normal algebra and mass vectors on grids, for the mean-value model (pure numpy/scipy).

Partial moments of a log-normal X = m·e^(σZ) (μ = ln m) are closed forms:
P(X ≤ x) = Φ((ln x − μ)/σ), E[X; X ≤ x] = E[X]·Φ((ln x − μ − σ²)/σ),
E[X²; X ≤ x] = m²e^(2σ²)·Φ((ln x − μ − 2σ²)/σ). Its Laplace transform has no closed form and is
integrated over Z. Distributions of sums are convolutions of mass vectors on a uniform grid, each
vector mean-preserving (a draw between two grid points is split between them in proportion).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from speedtrap.config.dist import LogNormal

_SQRT2 = math.sqrt(2.0)


def phi(x: np.ndarray | float) -> np.ndarray:
    """Standard normal CDF."""
    result: np.ndarray = 0.5 * special.erfc(-np.asarray(x, dtype=float) / _SQRT2)
    return result


def cdf(dist: LogNormal, x: np.ndarray | float, scale: float = 1.0) -> np.ndarray:
    """P(scale·X ≤ x)."""
    x = np.asarray(x, dtype=float)
    median = dist.median * scale
    if median <= 0.0:
        return np.where(x >= 0.0, 1.0, 0.0)
    if dist.sigma == 0.0:
        return np.where(x >= median, 1.0, 0.0)
    with np.errstate(divide="ignore"):
        z = (np.log(np.maximum(x, 0.0)) - math.log(median)) / dist.sigma
    return phi(z)


def partial_mean(dist: LogNormal, x: np.ndarray | float, scale: float = 1.0) -> np.ndarray:
    """E[scale·X; scale·X ≤ x]."""
    x = np.asarray(x, dtype=float)
    median = dist.median * scale
    if median <= 0.0:
        return np.zeros_like(x)
    if dist.sigma == 0.0:
        return np.where(x >= median, median, 0.0)
    with np.errstate(divide="ignore"):
        z = (np.log(np.maximum(x, 0.0)) - math.log(median)) / dist.sigma - dist.sigma
    return dist.mean * scale * phi(z)


def min_mean(dist: LogNormal, c: np.ndarray | float, scale: float = 1.0) -> np.ndarray:
    """E[min(scale·X, c)] for c ≥ 0."""
    c = np.maximum(np.asarray(c, dtype=float), 0.0)
    return partial_mean(dist, c, scale) + c * (1.0 - cdf(dist, c, scale))


def min_moments(dist: LogNormal, c: np.ndarray, scales: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """E[min(s·X, c)] and E[min(s·X, c)²] for every scale s (rows) and bound c ≥ 0 (columns)."""
    c = np.maximum(np.asarray(c, dtype=float), 0.0)[None, :]
    scales = np.asarray(scales, dtype=float)[:, None]
    if dist.median <= 0.0:
        zeros = np.zeros((scales.shape[0], c.shape[1]))
        return zeros, zeros
    if dist.sigma == 0.0:
        x = np.minimum(dist.median * scales, c)
        return x, x * x
    sig = dist.sigma
    with np.errstate(divide="ignore"):
        z = (np.log(c) - np.log(dist.median * scales)) / sig
    tail = 1.0 - phi(z)
    first = dist.mean * scales * phi(z - sig) + c * tail
    second = (dist.median * scales) ** 2 * math.exp(2.0 * sig * sig) * phi(z - 2.0 * sig) + c * c * tail
    return first, second


def laplace(dist: LogNormal, s: float, scale: float = 1.0) -> float:
    """E[exp(−s·scale·X)], integrated over the normal variable (trapezoid on ±10 sd)."""
    median = dist.median * scale
    if median <= 0.0 or s == 0.0:
        return 1.0
    if dist.sigma == 0.0:
        return math.exp(-s * median)
    z = np.linspace(-10.0, 10.0, 4001)
    f = np.exp(-0.5 * z * z - s * median * np.exp(dist.sigma * z))
    return float(np.trapezoid(f, z) / math.sqrt(2.0 * math.pi))


def laplace_scaled(dist: LogNormal, s: float, scales: np.ndarray) -> np.ndarray:
    """E[exp(−s·c·X)] for every scale c in ``scales`` (see :func:`laplace`)."""
    scales = np.asarray(scales, dtype=float)
    median = dist.median * scales
    if dist.median <= 0.0 or s == 0.0:
        return np.ones_like(scales)
    if dist.sigma == 0.0:
        return np.exp(-s * median)
    z = np.linspace(-10.0, 10.0, 4001)
    f = np.exp(-0.5 * z * z - s * median[:, None] * np.exp(dist.sigma * z)[None, :])
    return np.trapezoid(f, z, axis=1) / math.sqrt(2.0 * math.pi)


def upper_laplace(dist: LogNormal, s: float, x: np.ndarray) -> np.ndarray:
    """E[exp(−s·X); X > x] for every x (integrated over the normal variable)."""
    x = np.asarray(x, dtype=float)
    if dist.median <= 0.0:
        return np.zeros_like(x)
    if dist.sigma == 0.0:
        return np.where(dist.median > x, math.exp(-s * dist.median), 0.0)
    z = np.linspace(-10.0, 10.0, 8001)
    f = np.exp(-0.5 * z * z - s * dist.median * np.exp(dist.sigma * z)) / math.sqrt(2.0 * math.pi)
    tail = np.concatenate((np.cumsum(((f[1:] + f[:-1]) * 0.5 * (z[1] - z[0]))[::-1])[::-1], [0.0]))
    with np.errstate(divide="ignore"):
        zx = (np.log(np.maximum(x, 1e-300)) - math.log(dist.median)) / dist.sigma
    result: np.ndarray = np.interp(zx, z, tail, left=tail[0], right=0.0)
    return result


def on_grid(dist: LogNormal, step: float, n: int, scale: float = 1.0) -> np.ndarray:
    """Masses of scale·X on the grid 0, step, …, (n−1)·step, mean-preserving within each cell;
    the mass beyond the last point is left out (the masses sum to P(scale·X ≤ (n−1)·step))."""
    masses = np.zeros(n)
    median = dist.median * scale
    if median <= 0.0:
        masses[0] = 1.0
        return masses
    if dist.sigma == 0.0:
        lo, hi, w_hi = split_point(median, step, n)
        if median <= (n - 1) * step:
            masses[lo] += 1.0 - w_hi
            masses[hi] += w_hi
        return masses
    x = np.arange(n) * step
    p_cell = np.diff(cdf(dist, x, scale))
    up = np.clip((np.diff(partial_mean(dist, x, scale)) - x[:-1] * p_cell) / step, 0.0, p_cell)
    masses[:-1] += p_cell - up
    masses[1:] += up
    return masses


def split_point(value: float, step: float, n: int) -> tuple[int, int, float]:
    """The grid indices around ``value`` and the weight of the upper one (mean-preserving)."""
    i = value / step
    lo = min(math.floor(i), n - 1)
    hi = min(lo + 1, n - 1)
    return lo, hi, (i - lo) if hi > lo else 0.0


def convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Convolution of two mass vectors on one grid, truncated to ``a``'s length."""
    n = a.size
    if n * b.size <= 1 << 18:
        return np.convolve(a, b)[:n]
    size = 1 << math.ceil(math.log2(n + b.size))
    return np.clip(np.fft.irfft(np.fft.rfft(a, size) * np.fft.rfft(b, size), size)[:n], 0.0, None)


def batched_convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise convolution of mass arrays (rows × n, or one row broadcast), truncated to n points."""
    n = a.shape[-1]
    size = 1 << math.ceil(math.log2(2 * n))
    out = np.fft.irfft(np.fft.rfft(a, size, axis=-1) * np.fft.rfft(b, size, axis=-1), size, axis=-1)
    return np.clip(out[..., :n], 0.0, None)


def mixture_points(values: np.ndarray, probs: np.ndarray, points: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """A discrete law compressed to ``points`` groups of equal probability (conditional means)."""
    keep = probs > 0
    values, probs = values[keep], probs[keep]
    order = np.argsort(values)
    values, probs = values[order], probs[order] / probs.sum()
    group = np.minimum((np.cumsum(probs) - 0.5 * probs) * points, points - 1).astype(int)
    weight = np.bincount(group, weights=probs, minlength=points)
    total = np.bincount(group, weights=probs * values, minlength=points)
    ok = weight > 0
    return total[ok] / weight[ok], weight[ok]
