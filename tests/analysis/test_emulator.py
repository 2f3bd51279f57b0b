"""The GP emulator's Sobol' indices against closed forms: the Ishigami function (Ishigami & Homma
1990; indices from Sobol' & Levitan 1999) and an additive function with an integer input and noise.
Tolerances were fixed before the figures were seen: 0.05 of the variance for Ishigami (strongly
nonlinear, 256 runs in 3 inputs), 0.03 for the additive function (smooth, 256 runs in 8 inputs)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from speedtrap.analysis.emulator import (
    EMULATOR_COLUMNS,
    MIN_Q2,
    LogEmulator,
    cross_validated_q2,
    emulated_sobol,
    emulator_inputs,
    fit_emulator,
    training_sample,
)
from speedtrap.config.experiment import Factor

ISHIGAMI_A, ISHIGAMI_B = 7.0, 0.1


def ishigami_exact() -> tuple[np.ndarray, np.ndarray]:
    """Closed-form S1 and ST of sin x1 + a sin² x2 + b x3⁴ sin x1, x ~ U(−π, π)³."""
    a, b, pi = ISHIGAMI_A, ISHIGAMI_B, math.pi
    v1 = 0.5 * (1 + b * pi**4 / 5) ** 2
    v2 = a**2 / 8
    v13 = b**2 * pi**8 * (1 / 18 - 1 / 50)
    total = v1 + v2 + v13
    return np.array([v1, v2, 0.0]) / total, np.array([v1 + v13, v2, v13]) / total


def test_ishigami_indices_are_recovered_from_256_runs() -> None:
    factors = [Factor(path=f"x{i}", range=(-math.pi, math.pi)) for i in range(3)]
    unit = training_sample(256, 3, seed=1)
    x = -math.pi + 2 * math.pi * unit
    y = np.sin(x[:, 0]) + ISHIGAMI_A * np.sin(x[:, 1]) ** 2 + ISHIGAMI_B * x[:, 2] ** 4 * np.sin(x[:, 0])
    result = emulated_sobol(factors, unit, y, bootstrap=2, seed=3)
    assert list(result.indices.columns) == list(EMULATOR_COLUMNS)
    s1, st = ishigami_exact()
    assert result.indices["S1"].to_numpy() == pytest.approx(s1, abs=0.05)
    assert result.indices["ST"].to_numpy() == pytest.approx(st, abs=0.05)
    assert result.q2 >= MIN_Q2 and result.trustworthy
    assert result.noise_share < 0.01  # a deterministic function: the noise term takes next to nothing
    assert (result.indices["S1_low"] <= result.indices["S1_high"]).all()
    assert (result.indices["ST_low"] <= result.indices["ST_high"]).all()


def test_additive_indices_with_an_integer_input_and_noise() -> None:
    factors = [Factor(path=f"x{i}", range=(0.0, 1.0)) for i in range(7)]
    factors.append(Factor(path="k", range=(1, 4), integer=True))
    unit = training_sample(256, 8, seed=2)
    weights = np.array([4.0, 2.0, 1.0, 1.0, 0.5, 0.0, 0.0])
    level = np.array(factors[-1].from_unit(unit[:, 7]), dtype=float)
    noise_sd = 0.1
    y = unit[:, :7] @ weights + level + np.random.default_rng(0).normal(0.0, noise_sd, len(unit))
    result = emulated_sobol(factors, unit, y, bootstrap=2, seed=3)
    variances = np.r_[weights**2 / 12, (4**2 - 1) / 12]  # U(0, 1) inputs; k uniform on 1..4
    exact = variances / variances.sum()
    assert result.indices["S1"].to_numpy() == pytest.approx(exact, abs=0.03)
    assert result.indices["ST"].to_numpy() == pytest.approx(exact, abs=0.03)  # additive: ST = S1
    # the noise term estimates the noise's share of the outputs' variance (within a factor 2)
    share = noise_sd**2 / float(np.var(y))
    assert share / 2 < result.noise_share < 2 * share


def test_discrete_inputs_sit_in_the_middle_of_their_level() -> None:
    factors = [
        Factor(path="c", range=(0.0, 1.0)),
        Factor(path="k", range=(1, 4), integer=True),
        Factor(path="m", choices=["a", "b", "c"]),
    ]
    unit = np.array([[0.1, 0.1, 0.1], [0.7, 0.99, 0.5], [0.3, 0.26, 0.999]])
    x = emulator_inputs(factors, unit)
    assert x[:, 0] == pytest.approx(unit[:, 0])  # continuous: unchanged
    assert x[:, 1] == pytest.approx([0.125, 0.875, 0.375], abs=1e-4)
    assert x[:, 2] == pytest.approx([1 / 6, 0.5, 5 / 6], abs=1e-4)
    with pytest.raises(ValueError, match="rows × 3 factors"):
        emulator_inputs(factors, unit[:, :2])


def test_training_sample_is_nested_and_a_power_of_two() -> None:
    full = training_sample(64, 5, seed=4)
    assert full.shape == (64, 5) and ((full >= 0) & (full < 1)).all()
    assert training_sample(32, 5, seed=4) == pytest.approx(full[:32])
    for bad in (3, 48):
        with pytest.raises(ValueError, match="power of two"):
            training_sample(bad, 5)


def test_noise_alone_is_flagged_as_untrustworthy() -> None:
    factors = [Factor(path=f"x{i}", range=(0.0, 1.0)) for i in range(2)]
    unit = training_sample(32, 2, seed=5)
    y = np.random.default_rng(6).standard_normal(32)
    with pytest.warns(RuntimeWarning, match="cannot mean much"):
        result = emulated_sobol(factors, unit, y, bootstrap=2, n=256)
    assert not result.trustworthy and result.q2 < MIN_Q2


def test_bad_inputs_are_refused() -> None:
    factors = [Factor(path="x", range=(0.0, 1.0))]
    unit = training_sample(8, 1)
    y = unit[:, 0] * 2
    with pytest.raises(ValueError, match="at least 4 training runs"):
        emulated_sobol(factors, unit[:3], y[:3])
    with pytest.raises(ValueError, match="finite"):
        emulated_sobol(factors, unit, np.r_[y[:-1], np.nan])
    with pytest.raises(ValueError, match="confidence"):
        emulated_sobol(factors, unit, y, confidence=1.0)
    with pytest.raises(ValueError, match="bootstrap"):
        emulated_sobol(factors, unit, y, bootstrap=-1)
    with pytest.raises(ValueError, match="power of two"):
        emulated_sobol(factors, unit, y, n=1000)
    with pytest.raises(ValueError, match="at least one factor"):
        emulated_sobol([], unit, y)
    assert math.isnan(cross_validated_q2(unit, np.ones(8)))  # no variance to predict
    flat = emulated_sobol(factors, unit, np.ones(8), bootstrap=2, n=256)  # no warning (errors here)
    assert flat.indices[["S1", "ST", "S1_low", "ST_high"]].isna().all().all()
    assert math.isnan(flat.q2) and math.isnan(flat.mc_half_width) and not flat.trustworthy
    with pytest.raises(ValueError, match="repeat"):
        emulated_sobol([factors[0], factors[0]], np.c_[unit, unit], np.r_[y])


def test_emulator_predicts_a_smooth_function_it_was_not_fitted_at() -> None:
    unit = training_sample(64, 2, seed=7)
    emulator = fit_emulator(unit, np.sin(3 * unit[:, 0]) + unit[:, 1] ** 2)
    probe = np.array([[0.33, 0.5], [0.9, 0.1]])
    assert emulator.predict(probe) == pytest.approx(np.sin(3 * probe[:, 0]) + probe[:, 1] ** 2, abs=0.01)
    assert emulator.length_scales.shape == (2,) and emulator.n_train == 64
    many = np.random.default_rng(8).random((20_000, 2))  # more than one chunk of the fast path
    assert emulator.predict(many) == pytest.approx(emulator.gp.predict(many), rel=1e-9, abs=1e-9)


def test_a_log_scale_emulator_returns_the_log_normal_moments_of_its_log_fit() -> None:
    unit = training_sample(32, 2, seed=3)
    y = np.exp(6.0 * unit[:, 0] + 0.5 * unit[:, 1])  # 1 to 665: three orders of magnitude
    log_em = fit_emulator(unit, y, seed=0, restarts=0, log=True)
    on_log = fit_emulator(unit, np.log(y), seed=0, restarts=0)  # the same fit, on the log scale
    assert isinstance(log_em, LogEmulator) and not isinstance(on_log, LogEmulator)
    probe = np.random.default_rng(4).random((500, 2))
    mu, v = on_log.predict(probe), on_log.variance(probe)
    assert log_em.predict(probe) == pytest.approx(np.exp(mu + v / 2), rel=1e-9)
    assert log_em.variance(probe) == pytest.approx(np.expm1(v) * np.exp(2 * mu + v), rel=1e-9, abs=1e-12)
    s2 = on_log.noise_share * float(np.var(np.log(y)))
    assert log_em.noise_variance(probe) == pytest.approx(math.expm1(s2) * np.exp(2 * mu), rel=1e-6, abs=1e-12)
    truth = np.exp(6.0 * probe[:, 0] + 0.5 * probe[:, 1])
    assert np.median(np.abs(log_em.predict(probe) / truth - 1)) < 0.01  # exact on the log scale
    with pytest.raises(ValueError, match="every output > 0"):
        fit_emulator(unit, y - y.min(), log=True)


@pytest.mark.parametrize("log", [False, True])
def test_moments_are_predict_and_variance_bit_for_bit(log: bool) -> None:
    """One pass over the Matérn correlations gives the very numbers of the two separate calls, so a
    calibration's implausibility (which uses it) reproduces a stored wave exactly."""
    unit = training_sample(64, 3, seed=5)
    y = np.exp(2.0 * unit[:, 0] + np.sin(4.0 * unit[:, 1])) + 0.1 * unit[:, 2]
    emulator = fit_emulator(unit, y, seed=0, restarts=0, log=log)
    probe = np.random.default_rng(6).random((20_000, 3))  # more than one chunk
    mean, variance = emulator.moments(probe)
    assert np.array_equal(mean, emulator.predict(probe))
    assert np.array_equal(variance, emulator.variance(probe))
    assert (variance >= 0).all() and np.isfinite(mean).all()
