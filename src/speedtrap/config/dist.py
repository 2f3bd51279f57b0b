"""Distributions used by the work and developer specs: they know their own mean and variance."""

from __future__ import annotations

import math

import numpy as np
from pydantic import Field

from speedtrap.config.base import Spec

MAX_LOG_SD = 10.0
"""Largest log-sd a spec accepts: exp(10·z) stays finite for any normal draw, and a log-sd of 10
(p99/median ≈ 10^10) is far beyond any spread speedtrap models."""


class LogNormal(Spec):
    """A log-normal distribution given by its median and log-standard-deviation ``sigma``.

    ``sigma = 0`` makes it deterministic (every draw equals the median), which tiny hand-computed
    scenarios use. Units are those of the field that holds it (seconds, tokens).
    """

    median: float = Field(ge=0, description="Median (= exp(mu)), in the unit of the quantity.")
    sigma: float = Field(
        default=0.0,
        ge=0,
        le=MAX_LOG_SD,
        description="Standard deviation of the log (at most 10: draws then stay finite).",
    )

    @classmethod
    def from_mean(cls, mean: float, sigma: float) -> LogNormal:
        """The log-normal with this ``mean`` and log-sd ``sigma`` (median = mean·exp(−σ²/2))."""
        return cls(median=mean * math.exp(-0.5 * sigma * sigma), sigma=sigma)

    @property
    def mean(self) -> float:
        """Analytic mean, median·exp(σ²/2)."""
        return self.median * math.exp(0.5 * self.sigma * self.sigma)

    @property
    def variance(self) -> float:
        """Analytic variance, (exp(σ²) − 1)·mean²."""
        return math.expm1(self.sigma * self.sigma) * self.mean**2

    def quantile(self, q: float) -> float:
        """The ``q``-quantile (0 < q < 1)."""
        from scipy.stats import norm

        return self.median * math.exp(self.sigma * float(norm.ppf(q)))

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` draws. Always consumes ``size`` normals from ``rng``, even when ``sigma = 0``,
        so that the stream stays aligned whatever the parameters."""
        z = rng.standard_normal(size)
        return self.median * np.exp(self.sigma * z)

    def draw(self, rng: np.random.Generator) -> float:
        """One draw: ``float(sample(rng, 1)[0])``, bit for bit (the same normal from ``rng``, the same
        arithmetic on a numpy scalar instead of a one-element array, which costs a third as much)."""
        return float(self.median * np.exp(self.sigma * rng.standard_normal()))
