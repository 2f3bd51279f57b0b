"""Sobol' and Morris analysis against functions with known indices (Ishigami, linear, log, integer)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
import pytest

from speedtrap.analysis.sensitivity import (
    morris_indices,
    morris_sample,
    output_vector,
    salib_problem,
    sobol_indices,
    sobol_sample,
    sobol_second_order,
)
from speedtrap.config.experiment import Experiment, Factor

ISHIGAMI_A = 7.0
ISHIGAMI_B = 0.1
NAMES = ("x1", "x2", "x3")

# Floor of the tolerance, in shares of output variance: SALib's bootstrap half-widths estimate the
# sampling error of the estimators, and for an index whose estimate happens to sit near its bound the
# half-width can be small; 0.02 (2% of the variance, far below the gaps between the Ishigami indices)
# keeps the check from demanding more precision than the estimator has.
INDEX_FLOOR = 0.02


def ishigami_factors() -> list[Factor]:
    return [Factor(path=name, range=(-math.pi, math.pi)) for name in NAMES]


def ishigami(x: np.ndarray) -> np.ndarray:
    """f = sin x1 + a sin² x2 + b x3⁴ sin x1 (Ishigami & Homma 1990)."""
    return np.sin(x[:, 0]) + ISHIGAMI_A * np.sin(x[:, 1]) ** 2 + ISHIGAMI_B * x[:, 2] ** 4 * np.sin(x[:, 0])


def ishigami_indices(a: float, b: float) -> dict[str, dict[str, float]]:
    """Closed-form Sobol' indices of the Ishigami function with x_i ~ U(−π, π) (Sobol' & Levitan 1999).

    V1 = ½(1 + bπ⁴/5)², V2 = a²/8, V3 = 0, V13 = b²π⁸(1/18 − 1/50), V = a²/8 + bπ⁴/5 + b²π⁸/18 + ½.
    """
    pi4, pi8 = math.pi**4, math.pi**8
    v1 = 0.5 * (1 + b * pi4 / 5) ** 2
    v2 = a**2 / 8
    v3 = 0.0
    v13 = b**2 * pi8 * (1 / 18 - 1 / 50)
    v = a**2 / 8 + b * pi4 / 5 + b**2 * pi8 / 18 + 0.5
    assert math.isclose(v, v1 + v2 + v3 + v13)  # the decomposition is complete
    return {
        "S1": {"x1": v1 / v, "x2": v2 / v, "x3": v3 / v},
        "ST": {"x1": (v1 + v13) / v, "x2": v2 / v, "x3": (v3 + v13) / v},
        "S13": {"x1": v13 / v},
    }


def evaluate(
    points: pd.DataFrame, fn: Callable[[np.ndarray], np.ndarray], names: Sequence[str] = NAMES
) -> np.ndarray:
    """``fn`` of the factor columns ``names`` of ``points`` (rows × factors)."""
    return fn(points[list(names)].to_numpy(dtype=float))


def test_analytic_ishigami_indices_match_the_published_values() -> None:
    # A check of the closed forms above against the values usually quoted (3 decimals).
    exact = ishigami_indices(ISHIGAMI_A, ISHIGAMI_B)
    assert [round(exact["S1"][n], 3) for n in NAMES] == [0.314, 0.442, 0.0]
    assert [round(exact["ST"][n], 3) for n in NAMES] == [0.558, 0.442, 0.244]


def test_sobol_indices_of_ishigami_agree_with_theory_within_their_confidence_intervals() -> None:
    factors = ishigami_factors()
    points = sobol_sample(factors, 1024, seed=3)
    indices = sobol_indices(points, evaluate(points, ishigami), factors).set_index("factor")
    exact = ishigami_indices(ISHIGAMI_A, ISHIGAMI_B)
    for column in ("S1", "ST"):
        for name in NAMES:
            estimate = indices.loc[name, column]
            half = indices.loc[name, f"{column}_conf"]
            assert 0 < half < 0.15, (name, column, half)  # an informative interval at n = 1024
            tolerance = max(3 * half, INDEX_FLOOR)
            assert abs(estimate - exact[column][name]) <= tolerance, (name, column, estimate, half)
    # The qualitative facts the indices exist to reveal: x3 matters only through its interaction with x1.
    assert indices.loc["x3", "ST"] - 3 * indices.loc["x3", "ST_conf"] > 0.1
    assert indices.loc["x1", "ST"] > indices.loc["x1", "S1"] + 0.1


def test_second_order_index_of_ishigami_is_the_x1_x3_interaction() -> None:
    factors = ishigami_factors()
    points = sobol_sample(factors, 1024, calc_second_order=True, seed=5)
    assert len(points) == 1024 * (2 * 3 + 2)
    y = evaluate(points, ishigami)
    s2 = sobol_second_order(points, y, factors).set_index(["factor_i", "factor_j"])
    exact = ishigami_indices(ISHIGAMI_A, ISHIGAMI_B)["S13"]["x1"]
    for pair, truth in {("x1", "x2"): 0.0, ("x1", "x3"): exact, ("x2", "x3"): 0.0}.items():
        estimate, half = s2.loc[pair, "S2"], s2.loc[pair, "S2_conf"]
        assert abs(estimate - truth) <= max(3 * half, INDEX_FLOOR), (pair, estimate, half)
    # first/total indices still come from the same sample (its attrs say it is second order)
    first = sobol_indices(points, y, factors)
    assert list(first["factor"]) == list(NAMES)


def test_sobol_sample_layout_seed_and_balance() -> None:
    factors = [
        Factor(path="lin", range=(2.0, 4.0)),
        Factor(path="log", range=(1.0, 100.0), log=True),
        Factor(path="int", range=(1, 4), integer=True),
    ]
    n = 64
    points = sobol_sample(factors, n, seed=11)
    assert list(points.columns) == ["point", "lin", "log", "int"]
    assert len(points) == n * (len(factors) + 2)
    assert points["point"].tolist() == list(range(len(points)))
    assert points["lin"].between(2.0, 4.0).all() and points["log"].between(1.0, 100.0).all()
    # Sobol' points are balanced at powers of two: exactly half below the (geometric) midpoint ...
    assert (points["lin"] < 3.0).mean() == 0.5
    assert (points["log"] < 10.0).mean() == 0.5
    # ... and an integer range takes each whole number equally often.
    assert points["int"].value_counts().to_dict() == dict.fromkeys(range(1, 5), len(points) // 4)
    assert sobol_sample(factors, n, seed=11).equals(points)
    assert not sobol_sample(factors, n, seed=12).equals(points)
    with pytest.raises(ValueError, match="power of 2"):
        sobol_sample(factors, 48)


def test_an_experiment_supplies_its_factors_and_design_seed() -> None:
    spec = Experiment.model_validate(
        {
            "name": "s",
            "scenario": {},
            "design": {"kind": "sobol", "points": 8, "seed": 4},
            "factors": [
                {"path": "developer.review.detect_prob", "range": [0.3, 0.9]},
                {"path": "developer.attention.max_parallel_sessions", "range": [1, 3], "integer": True},
            ],
        }
    )
    problem = salib_problem(spec)
    assert problem["names"] == spec.factor_paths and problem["bounds"] == [[0.0, 1.0]] * 2
    points = sobol_sample(spec, 8)
    assert points.equals(sobol_sample(spec.factors, 8, seed=4))
    assert points["developer.attention.max_parallel_sessions"].isin([1, 2, 3]).all()


def test_outputs_align_by_point_number_and_must_be_finite() -> None:
    factors = ishigami_factors()
    points = sobol_sample(factors, 64, seed=1)
    y = evaluate(points, ishigami)
    by_point = pd.Series(y, index=points["point"]).sample(frac=1.0, random_state=np.random.default_rng(0))
    assert np.array_equal(output_vector(points, by_point), y)
    assert sobol_indices(points, by_point, factors).equals(sobol_indices(points, y, factors))
    broken = y.copy()
    broken[7] = np.nan
    with pytest.raises(ValueError, match="points 7"):
        sobol_indices(points, broken, factors)
    with pytest.raises(ValueError, match="outputs for"):
        sobol_indices(points, y[:-1], factors)
    with pytest.raises(ValueError, match="not a Saltelli sample"):
        sobol_indices(points.iloc[:-1], y[:-1], factors)


def test_a_constant_output_has_no_variance_to_apportion() -> None:
    factors = ishigami_factors()
    points = sobol_sample(factors, 16, seed=1)
    indices = sobol_indices(points, np.full(len(points), 3.0), factors)
    assert list(indices["factor"]) == list(NAMES)
    assert indices[["S1", "S1_conf", "ST", "ST_conf"]].isna().all().all()


def test_morris_ranks_a_linear_function_in_output_units_per_factor_range() -> None:
    # f = 10·x1 + 1·x2 + 0·x3 with x1 on [0, 2]: a full range of x1 moves f by 20, of x2 by 1.
    factors = [Factor(path="x1", range=(0.0, 2.0)), Factor(path="x2", range=(0.0, 1.0))]
    factors.append(Factor(path="x3", range=(5.0, 6.0)))
    points = morris_sample(factors, 20, seed=2)
    assert len(points) == 20 * (3 + 1)
    y = evaluate(points, lambda x: 10 * x[:, 0] + 1 * x[:, 1] + 0 * x[:, 2])
    indices = morris_indices(points, y, factors).set_index("factor")
    assert indices["mu_star"].to_numpy() == pytest.approx([20.0, 1.0, 0.0], abs=1e-9)
    assert indices["mu"].to_numpy() == pytest.approx([20.0, 1.0, 0.0], abs=1e-9)
    assert indices["sigma"].to_numpy() == pytest.approx([0.0, 0.0, 0.0], abs=1e-9)


def test_morris_log_and_integer_factors() -> None:
    # ln(x) is linear in the log-scaled position of x on [1, e²]: 2 per full range. An integer factor
    # m on 1..4 on a 4-level grid always moves by two whole units per step (Δ = 2/3 of the range):
    # 3·m moves by 6 per step, 9 per full range (the span of m is 3).
    factors = [
        Factor(path="x", range=(1.0, math.e**2), log=True),
        Factor(path="m", range=(1, 4), integer=True),
    ]
    points = morris_sample(factors, 10, seed=3)
    y = np.log(points["x"].to_numpy(dtype=float)) + 3 * points["m"].to_numpy(dtype=float)
    indices = morris_indices(points, y, factors).set_index("factor")
    assert indices.loc["x", "mu_star"] == pytest.approx(2.0, rel=1e-9)
    assert indices.loc["m", "mu_star"] == pytest.approx(9.0, rel=1e-9)
    assert indices["sigma"].to_numpy() == pytest.approx([0.0, 0.0], abs=1e-9)
    # Without the sample's attrs, an integer factor's unit coordinates cannot be recovered.
    with pytest.raises(ValueError, match="cannot be recovered"):
        morris_indices(_without_attrs(points.copy()), y, factors)


def _without_attrs(frame: pd.DataFrame) -> pd.DataFrame:
    frame.attrs = {}
    return frame


def test_morris_recovers_continuous_coordinates_from_values() -> None:
    factors = [Factor(path="a", range=(0.0, 4.0)), Factor(path="b", range=(1.0, 10.0), log=True)]
    points = morris_sample(factors, 8, seed=4)
    y = evaluate(points, lambda x: x[:, 0] ** 2 + np.log10(x[:, 1]), names=("a", "b"))
    with_attrs = morris_indices(points, y, factors)
    without = morris_indices(_without_attrs(points.copy()), y, factors)
    pd.testing.assert_frame_equal(with_attrs, without, rtol=1e-9)


def test_morris_on_ishigami_finds_x3_through_its_interaction() -> None:
    factors = ishigami_factors()
    r = 50
    points = morris_sample(factors, r, seed=1)
    indices = morris_indices(points, evaluate(points, ishigami), factors).set_index("factor")
    # Every factor's μ* is clearly above zero, x3's included, although x3 explains nothing alone
    # (S1 = 0): its effect changes sign with sin x1, so its mean effect μ is consistent with zero.
    assert (indices["mu_star"] > 2 * indices["mu_star_conf"]).all()
    assert abs(indices.loc["x3", "mu"]) <= 4 * indices.loc["x3", "sigma"] / math.sqrt(r)
    assert indices.loc["x3", "sigma"] > indices.loc["x3", "mu_star"]


def test_the_analysis_refuses_the_other_method_s_sample() -> None:
    factors = ishigami_factors()
    sobol_points = sobol_sample(factors, 8, seed=1)
    with pytest.raises(ValueError, match="sobol sample, not a morris"):
        morris_indices(sobol_points, evaluate(sobol_points, ishigami), factors)
    morris_points = morris_sample(factors, 4, seed=1)
    with pytest.raises(ValueError, match="morris sample, not a sobol"):
        sobol_indices(morris_points, evaluate(morris_points, ishigami), factors)
