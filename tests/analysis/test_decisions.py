"""Decisions over an ensemble (speedtrap.analysis.decisions): EVPI and EVPPI against closed forms,
the share paying, and the boundary found where the members disagree."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from speedtrap.analysis.decisions import (
    analyse_decision,
    evpi,
    evpi_seed_noise,
    evppi,
    explained_share,
    inb_by_member,
    wilson_interval,
)


def test_evppi_of_a_normal_parameter_matches_its_closed_form() -> None:
    # INB = θ + ε, θ ~ N(0.2, 1), ε ~ N(0, 0.5²): EVPPI(θ) = E[max(θ, 0)] − max(E θ, 0)
    # = σφ(μ/σ) + μΦ(μ/σ) − max(μ, 0) = 0.3069; tolerance ±0.03 (Monte Carlo and smoothing, 2000
    # members), fixed before the run
    rng = np.random.default_rng(5)
    mu, n = 0.2, 2000
    theta = rng.normal(mu, 1.0, n)
    noise = rng.normal(0.0, 1.0, n)
    inb = theta + 0.5 * rng.normal(0.0, 1.0, n)
    exact = stats.norm.pdf(mu) + mu * stats.norm.cdf(mu) - mu
    assert evppi(inb, theta) == pytest.approx(exact, abs=0.03)
    assert evppi(inb, noise) < 0.03  # an irrelevant parameter is worth (almost) nothing
    assert evppi(inb, theta) <= evpi(inb) + 1e-9
    # EVPI of INB ~ N(0.2, 1 + 0.25) in closed form
    s = math.sqrt(1.25)
    assert evpi(inb) == pytest.approx(s * stats.norm.pdf(mu / s) + mu * stats.norm.cdf(mu / s) - mu, abs=0.03)


def test_evpi_is_zero_when_every_member_agrees() -> None:
    assert evpi(np.array([1.0, 2.0, 3.0])) == 0.0 and evpi(np.array([-1.0, -0.5])) == 0.0
    assert math.isnan(evppi(np.arange(5.0), np.arange(5.0)))  # too few members


def test_a_decision_that_depends_on_patience_gets_its_boundary() -> None:
    rng = np.random.default_rng(9)
    n = 63
    params = pd.DataFrame(
        {
            "patience": np.exp(rng.uniform(np.log(10), np.log(600), n)),
            "detect": rng.uniform(0.45, 0.7, n),
        }
    )
    inb = pd.Series(0.5 * (params["patience"] - 100.0) + rng.normal(0, 5, n))
    result = analyse_decision("fast mode vs standard", inb, params)
    assert result.verdict() == "depends" and not result.settled
    assert result.evppi.index[0] == "patience" and result.evppi["patience"] > 5 * result.evppi["detect"]
    assert result.prim is not None
    (bound,) = [b for b in result.prim.bounds if b.path == "patience"]
    # the box is of the minority side: patience above the edge pays, below it does not (edge 100 s)
    assert result.seeks == ("pays" if result.share_paying <= 0.5 else "does not pay")
    edge, open_end = (bound.low, bound.high) if result.seeks == "pays" else (bound.high, bound.low)
    assert edge is not None and 70 < edge < 140 and open_end is None
    expected = float((inb > 0).mean())
    assert result.share_paying == pytest.approx(expected)
    assert result.share_low < expected < result.share_high
    assert inb.min() <= result.inb_low < result.mean_inb < result.inb_high <= inb.max()


def test_a_settled_decision_has_no_boundary() -> None:
    params = pd.DataFrame({"a": np.linspace(0, 1, 20)})
    result = analyse_decision("wafer vs standard", pd.Series(np.linspace(1, 2, 20)), params)
    assert result.verdict() == "pays" and result.prim is None and result.evpi == 0.0


def test_members_inb_is_their_seeds_mean_and_wilson_bounds() -> None:
    means = inb_by_member(np.array([1.0, 3.0, -2.0, 0.0]), np.array([0, 0, 1, 1]))
    assert means.to_dict() == {0: 2.0, 1: -1.0}
    low, high = wilson_interval(0, 10)
    assert low == 0.0 and 0.2 < high < 0.35


def test_the_seed_noise_floor_of_evpi_matches_its_closed_form() -> None:
    # 200 members, each with two runs at mean -1 ± 1: every member's true INB is -1 and its mean's
    # seed noise has sd 1 (pooled within-member variance 2, over 2 runs), so the EVPI the noise alone
    # gives is E[max(X, 0)] for X ~ N(-1, 1): phi(1) - Phi(-1) = 0.0833
    k = 200
    net = np.concatenate([np.full(k, 0.0), np.full(k, -2.0)])
    members = np.concatenate([np.arange(k), np.arange(k)])
    expected = stats.norm.pdf(1.0) - stats.norm.cdf(-1.0)
    assert evpi_seed_noise(net, members) == pytest.approx(expected, rel=0.03)
    assert evpi_seed_noise(net, members) == evpi_seed_noise(net, members)  # deterministic
    assert np.isnan(evpi_seed_noise(np.array([1.0, 2.0]), np.array([0, 1])))  # one run per member


def test_an_evpi_made_of_seed_noise_is_flagged_and_a_real_one_is_not() -> None:
    rng = np.random.default_rng(3)
    k, r = 40, 2
    members = np.repeat(np.arange(k), r)
    params = pd.DataFrame({"a": np.linspace(0, 1, k)})
    noise = rng.normal(0.0, 50.0, k * r)
    # the members do not differ: every one's INB is -10, the runs scatter by 50
    runs = (-10 + noise, members)
    flat = analyse_decision("noise", inb_by_member(*runs), params, runs=runs)
    assert flat.evpi > 0 and any("not clearly above" in n for n in flat.notes)
    # the members differ by their parameter far more than the runs scatter
    truth = np.repeat(np.linspace(-200, 200, k), r)
    runs = (truth + noise / 10, members)
    real = analyse_decision("real", inb_by_member(*runs), params, runs=runs)
    assert real.evpi > 2 * real.evpi_noise and not any("not clearly above" in n for n in real.notes)


def test_a_real_boundary_is_stable_and_one_drawn_from_noise_is_not() -> None:
    rng = np.random.default_rng(9)
    n = 40
    params = pd.DataFrame(
        {"patience": np.exp(rng.uniform(np.log(10), np.log(600), n)), "detect": rng.uniform(0.45, 0.7, n)}
    )
    real = pd.Series(0.5 * (params["patience"] - 100.0) + rng.normal(0, 5, n))
    found = analyse_decision("real", real, params, stability=True)
    assert found.stable is not None and found.stable.stable
    assert "patience" in found.boundary() and "stable: bootstrap overlap" in found.boundary()
    # who pays is a coin toss, unrelated to either parameter: PRIM still finds a box, which does not
    # survive resampling
    noise = pd.Series(rng.normal(0, 1, n))
    drawn = analyse_decision("noise", noise, params, stability=True)
    assert drawn.prim is not None and drawn.stable is not None and not drawn.stable.stable
    assert drawn.boundary().startswith("no stable box")
    assert analyse_decision("noise", noise, params).stable is None  # judged only when asked


def test_two_parameters_known_together_match_their_closed_form() -> None:
    # INB = a + b + 0.3ε, a ~ N(0.2, 1), b ~ N(0, 0.5²): knowing a and b together is worth
    # E[max(a + b, 0)] − 0.2 with a + b ~ N(0.2, 1.25), more than a alone (σ = 1); tolerance ±0.03
    # (Monte Carlo and smoothing, 2000 members), fixed before the run
    rng = np.random.default_rng(11)
    mu, n = 0.2, 2000
    a, b = rng.normal(mu, 1.0, n), rng.normal(0.0, 0.5, n)
    inb = a + b + 0.3 * rng.normal(0.0, 1.0, n)

    def worth(s: float) -> float:
        return s * stats.norm.pdf(mu / s) + mu * stats.norm.cdf(mu / s) - mu

    together = evppi(inb, np.column_stack([a, b]))
    assert together == pytest.approx(worth(math.sqrt(1.25)), abs=0.03)
    assert evppi(inb, a) == pytest.approx(worth(1.0), abs=0.03) and evppi(inb, a) < together
    assert together <= evpi(inb) + 1e-9
    params = pd.DataFrame({"a": a[:60], "b": b[:60], "c": rng.normal(0, 1, 60)})
    found = analyse_decision("pair", pd.Series(inb[:60]), params)
    assert set(found.pair) == {"a", "b"} and found.pair_evppi >= found.evppi.max() - 1e-9


def test_when_most_members_pay_the_boundary_is_where_it_does_not() -> None:
    """A decision that pays for most members is bounded on its minority side: PRIM seeks the members
    that do not pay (a region where it pays more often than 85% leaves PRIM little to find)."""
    rng = np.random.default_rng(5)
    n = 80
    params = pd.DataFrame({"patience": rng.uniform(0, 600, n), "detect": rng.uniform(0.45, 0.7, n)})
    inb = pd.Series(0.5 * (params["patience"] - 90.0) + rng.normal(0, 5, n))
    found = analyse_decision("mostly", inb, params, stability=True)
    assert 0.5 < found.share_paying < 0.95 and found.seeks == "does not pay"
    assert found.prim is not None and [b.path for b in found.prim.bounds] == ["patience"]
    (bound,) = found.prim.bounds
    assert bound.low is None and bound.high is not None and 60 <= bound.high <= 120  # the edge: 90 s
    assert found.boundary().startswith("does not pay when") and "stable" in found.boundary()
    fewer = analyse_decision("fewer", -inb, params)  # the mirror image: the paying side is the rare one
    assert fewer.seeks == "pays" and fewer.prim is not None
    assert [b.path for b in fewer.prim.bounds] == ["patience"]


def test_with_every_evppi_zero_the_boundary_is_sought_where_inb_varies() -> None:
    """No single parameter moves the conditional mean across 0 (every EVPPI 0): the boundary's
    parameters are those whose regression explains most of INB's variance, not the first in order."""
    rng = np.random.default_rng(8)
    n = 60
    params = pd.DataFrame({"idle": rng.uniform(0, 1, n), "driver": rng.uniform(0, 1, n)})
    inb = pd.Series(-200.0 + 150.0 * params["driver"] + rng.normal(0, 20, n))
    found = analyse_decision("negative", inb, params, boundary_parameters=1)
    assert (found.evppi.fillna(0.0) < 1.0).all()  # nothing a single measurement would change
    assert found.pair == ("driver",)
    assert explained_share(inb.to_numpy(), params["driver"].to_numpy()) > explained_share(
        inb.to_numpy(), params["idle"].to_numpy()
    )
