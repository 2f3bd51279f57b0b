"""EVPPI against a reference: Strong, Oakley & Brennan's (2014) estimator as they state it — a
generalised additive model of the incremental net benefit on the parameter, here pygam's
``LinearGAM`` with its smoothing chosen by generalised cross-validation (``gridsearch``), the
single-parameter GAM the R packages BCEA and voi fit with mgcv — and against the exact EVPPI of
each case, from its known conditional mean on 2·10⁵ draws.

Cases: a linear, a threshold-like and a U-shaped relation, each at 60 and 200 members with unit
noise. The tolerances were fixed before the estimates were seen: an estimate within 0.05 USD plus a
quarter of the exact EVPPI of it, and the project's estimator within the same of the reference's."""

from __future__ import annotations

import numpy as np
import pytest

from speedtrap.analysis.decisions import evpi, evppi

pygam = pytest.importorskip("pygam")

CASES = {
    "linear": lambda t: 0.6 * t - 0.2,
    "threshold": lambda t: 1.2 * np.tanh(3.0 * (t - 0.4)),
    "u-shaped": lambda t: 0.8 * t * t - 0.9,
}


def _exact(mean) -> float:
    theta = np.random.default_rng(99).standard_normal(200_000)
    g = mean(theta)
    return float(np.maximum(g, 0.0).mean() - max(g.mean(), 0.0))


def _gam_evppi(inb: np.ndarray, theta: np.ndarray) -> float:
    gam = pygam.LinearGAM(pygam.s(0, n_splines=8)).gridsearch(
        theta[:, None], inb, lam=np.logspace(-3, 3, 7), progress=False
    )
    g = np.asarray(gam.predict(theta[:, None]), dtype=float)
    g = g - g.mean() + inb.mean()
    return float(max(0.0, np.maximum(g, 0.0).mean() - max(g.mean(), 0.0)))


@pytest.mark.parametrize("members", [60, 200])
@pytest.mark.parametrize("case", sorted(CASES))
def test_evppi_agrees_with_the_gam_reference_and_the_exact_value(case: str, members: int) -> None:
    mean = CASES[case]
    exact = _exact(mean)
    tolerance = 0.05 + 0.25 * exact
    rng = np.random.default_rng(members)
    theta = rng.standard_normal(members)
    inb = mean(theta) + rng.standard_normal(members)
    ours, reference = evppi(inb, theta), _gam_evppi(inb, theta)
    assert abs(reference - exact) <= tolerance, (case, members, reference, exact)
    assert abs(ours - exact) <= tolerance, (case, members, ours, exact)
    assert abs(ours - reference) <= tolerance, (case, members, ours, reference)
    assert ours <= evpi(inb) + 1e-12
