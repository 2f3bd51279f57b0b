"""History matching against closed forms: toy simulators whose non-implausible region is known.

* **Diamond** (2 inputs): f1 = x1 + x2, f2 = x1 − x2 with targets 1 and 0 and total sd σ = 0.05 each.
  With exact outputs the non-implausible region is |x1 + x2 − 1| ≤ 3σ and |x1 − x2| ≤ 3σ: a
  square turned by 45° of area 2·(3σ)² = 0.045 (the map (x1, x2) → (u, v) has Jacobian 2).
* **Annulus × slab** (3 inputs): f1 = x1² + x2² with target 0.5 and σ = 0.02, f2 = x3 with target
  0.3 and σ = 0.02: a quarter annulus 0.44 ≤ r² ≤ 0.56 (area π/4·0.12, inside the unit square) times
  a slab |x3 − 0.3| ≤ 0.06 (length 0.12): 0.011310 of the cube. Its first wave rules out on the
  second-largest implausibility, which keeps the annulus *or* the slab (0.2029 of the cube); the
  next waves, on the largest, must shrink that to their intersection.

Tolerances, fixed before any result was seen: an estimated share of the space left must lie within
4 binomial standard errors of the analytic one (the estimator's sampling error; a Latin hypercube
does no worse than independent draws) plus 0.002 for the emulators' own variance, which can only
widen the region (a variance of 1% of σ² widens each band by 0.5%). That allowance holds for
emulators fitted densely (the diamond's linear outputs, the annulus's last wave); the annulus's
first wave of 8 runs is checked one-sided, since its emulators' larger variance can only widen
what it keeps. Points inside the true region
with exact implausibility ≤ 2.5 must never be ruled out: the emulators' mean errors near the edge
(I between 2.5 and 3) are allowed to cut there, not inside.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from speedtrap.analysis.emulator import cross_validated_q2, fit_emulator, training_sample
from speedtrap.analysis.history_matching import (
    CUTOFF,
    Parameter,
    Target,
    Wave,
    bounding_box,
    candidate_sample,
    cv_variance_scale,
    held_out_predictions,
    history_matching_wave,
    implausibility,
    kth_largest,
    non_implausible_mask,
    overconfident,
    simulated_implausibility,
    space_filling_subset,
)

SAMPLING_SES = 4.0
EMULATOR_ALLOWANCE = 0.002
CANDIDATES = 20_000


def unit_parameters(d: int) -> list[Parameter]:
    return [Parameter(f"x{i + 1}", 0.0, 1.0, source="toy") for i in range(d)]


def diamond(x: np.ndarray) -> dict[str, np.ndarray]:
    return {"sum": x[:, 0] + x[:, 1], "difference": x[:, 0] - x[:, 1]}


DIAMOND_TARGETS = [
    Target("sum", 1.0, obs_sd=0.03, discrepancy_sd=0.04, source="toy"),  # total sd 0.05
    Target("difference", 0.0, obs_sd=0.04, discrepancy_sd=0.03, source="toy"),
]
DIAMOND_AREA = 2 * (3 * 0.05) ** 2


def annulus(x: np.ndarray) -> dict[str, np.ndarray]:
    return {"radius2": x[:, 0] ** 2 + x[:, 1] ** 2, "height": x[:, 2]}


ANNULUS_TARGETS = [
    Target("radius2", 0.5, obs_sd=0.012, discrepancy_sd=0.016),  # total sd 0.02
    Target("height", 0.3, obs_sd=0.016, discrepancy_sd=0.012),
]
ANNULUS_AREA, SLAB = math.pi / 4 * (6 * 0.02), 6 * 0.02
ANNULUS_VOLUME = ANNULUS_AREA * SLAB
ANNULUS_OR_SLAB = ANNULUS_AREA + SLAB - ANNULUS_VOLUME
"""The first wave rules out on the second-largest implausibility (Vernon et al.'s robust early
wave): with two targets a point goes only when both rule it out, so the annulus or the slab is kept."""


def exact_max_implausibility(simulator, targets: list[Target], x: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    out = simulator(x)
    each = np.column_stack(
        [implausibility(t.value, out[t.name], t.obs_sd**2, t.discrepancy_sd**2) for t in targets]
    )
    return kth_largest(each)


def tolerance(wave: Wave) -> float:
    return SAMPLING_SES * wave.remaining_se + EMULATOR_ALLOWANCE


def run_waves(  # type: ignore[no-untyped-def]
    simulator, targets: list[Target], d: int, sizes: list[int], orders: list[int] | None = None, seed: int = 1
) -> list[Wave]:
    """Waves of history matching on an exact toy simulator: the first design a Sobol' sample, the
    next ones maximin subsets of the kept candidates; every wave fitted to the runs so far that
    earlier waves keep (one optimizer start per fit: these smooth toys need no more)."""
    orders = orders or [1] * len(sizes)
    parameters = unit_parameters(d)
    waves: list[Wave] = []
    design = training_sample(sizes[0], d, seed=seed)
    runs = np.zeros((0, d))
    for number, size in enumerate(sizes, start=1):
        if number > 1:
            design = waves[-1].non_implausible[
                space_filling_subset(waves[-1].non_implausible, size, seed=number)
            ]
        runs = np.vstack([runs, design])
        train = runs[non_implausible_mask(runs, waves)]
        waves.append(
            history_matching_wave(
                train,
                simulator(train),
                targets,
                parameters,
                number=number,
                previous=waves,
                candidates=CANDIDATES,
                order=orders[number - 1],
                seed=seed,
                restarts=0,
            )
        )
    return waves


@pytest.fixture(scope="module")
def diamond_waves() -> list[Wave]:
    return run_waves(diamond, DIAMOND_TARGETS, 2, [16, 16])


@pytest.fixture(scope="module")
def annulus_waves() -> list[Wave]:
    return run_waves(annulus, ANNULUS_TARGETS, 3, [8, 16, 16], orders=[2, 1, 1])


def test_implausibility_closed_form_and_edge_cases() -> None:
    # |1.3 − 1| / sqrt(0.01 + 0.03 + 0.05) = 0.3 / 0.3 = 1
    assert implausibility(1.0, 1.3, 0.01, 0.03, 0.05) == pytest.approx(1.0)
    means = np.array([[1.0, 0.0], [1.6, 0.3]])
    got = implausibility(np.array([1.0, 0.0]), means, 0.04, np.array([0.0, 0.05]))
    assert got == pytest.approx(np.array([[0.0, 0.0], [3.0, 1.0]]))  # broadcast over points × targets
    assert implausibility(1.0, math.nan, 1.0, 1.0)[()] == math.inf  # no output: implausible
    assert (
        implausibility(2.0, 2.0, 0.0, 0.0)[()] == 0.0 and implausibility(2.0, 2.1, 0.0, 0.0)[()] == math.inf
    )
    with pytest.raises(ValueError, match="≥ 0"):
        implausibility(1.0, 1.0, -1.0, 0.0)
    table = np.array([[0.5, 4.0, 2.0], [1.0, math.nan, 0.1]])
    assert kth_largest(table, 1) == pytest.approx([4.0, math.inf])
    assert kth_largest(table, 2) == pytest.approx([2.0, 1.0])
    assert kth_largest(table, 5) == pytest.approx([0.5, 0.1])  # fewer targets than k: the smallest
    assert kth_largest(np.zeros((3, 0))) == pytest.approx([0.0, 0.0, 0.0])
    with pytest.raises(ValueError):
        kth_largest(table, 0)


def test_simulated_implausibility_adds_the_seed_noise_of_the_mean() -> None:
    target = Target("y", 10.0, obs_sd=0.3, discrepancy_sd=0.4)  # V_obs + V_disc = 0.25
    means = {"y": np.array([11.0, 10.0, math.nan, 12.0])}
    noise = {"y": np.array([0.75, 0.0, 0.0, math.nan])}  # s²/r; NaN (one replication) counts as 0
    got = simulated_implausibility([target], means, noise)
    assert got.shape == (4, 1)
    assert got[:, 0] == pytest.approx([1.0 / math.sqrt(1.0), 0.0, math.inf, 2.0 / 0.5])


def test_dataclasses_refuse_bad_values_and_map_the_unit_interval() -> None:
    with pytest.raises(ValueError, match="low < high"):
        Parameter("p", 2.0, 1.0)
    with pytest.raises(ValueError, match="log scale"):
        Parameter("p", 0.0, 1.0, scale="log")
    with pytest.raises(ValueError, match="whole-number"):
        Parameter("p", 0.5, 3.0, integer=True)
    with pytest.raises(ValueError, match="scale"):
        Parameter("p", 0.0, 1.0, scale="cubic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="obs_sd"):
        Target("t", 1.0, obs_sd=-1.0, discrepancy_sd=0.0)
    with pytest.raises(ValueError, match="finite"):
        Target("t", math.nan, obs_sd=1.0, discrepancy_sd=0.0)
    log = Parameter("p", 10.0, 1000.0, scale="log")
    assert log.from_unit(np.array([0.0, 0.5])) == pytest.approx([10.0, 100.0])
    assert log.to_unit(log.from_unit(np.array([0.2, 0.7]))) == pytest.approx([0.2, 0.7])
    whole = Parameter("k", 2.0, 5.0, integer=True)  # four levels, a quarter of [0, 1) each
    assert list(whole.from_unit(np.array([0.0, 0.3, 0.6, 0.99]))) == [2.0, 3.0, 4.0, 5.0]
    assert whole.from_unit(whole.to_unit(np.array([2.0, 5.0]))) == pytest.approx([2.0, 5.0])


def test_sampling_helpers() -> None:
    sample = candidate_sample(500, np.array([0.2, 0.0]), np.array([0.4, 1.0]), seed=3)
    assert sample.shape == (500, 2) and (sample[:, 0] >= 0.2).all() and (sample[:, 0] <= 0.4).all()
    assert np.array_equal(sample, candidate_sample(500, np.array([0.2, 0.0]), np.array([0.4, 1.0]), seed=3))
    low, high = bounding_box(np.array([[0.4, 0.0], [0.6, 0.5]]), 2, margin=0.1)
    assert low == pytest.approx([0.38, 0.0]) and high == pytest.approx([0.62, 0.55])
    assert [list(b) for b in bounding_box(np.zeros((0, 3)), 3)] == [[0.0] * 3, [1.0] * 3]
    points = np.random.default_rng(0).random((2000, 2))
    spread = space_filling_subset(points, 20, seed=1)
    random = space_filling_subset(points, 20, seed=1, method="random")
    assert len(set(spread)) == 20 and len(set(random)) == 20

    def min_distance(rows: np.ndarray) -> float:
        diff = rows[:, None, :] - rows[None, :, :]
        dist = np.sqrt((diff**2).sum(-1))
        return float(dist[np.triu_indices(len(rows), 1)].min())

    assert min_distance(points[spread]) > 2 * min_distance(points[random])  # maximin spreads out
    assert list(space_filling_subset(points[:5], 20)) == [0, 1, 2, 3, 4]


def test_emulator_variance_is_the_latent_part_of_sklearns_predictive_variance() -> None:
    rng = np.random.default_rng(0)
    x = rng.random((40, 3))
    y = np.sin(3 * x[:, 0]) + x[:, 1] ** 2 + rng.normal(0.0, 0.05, 40)
    emulator = fit_emulator(x, y, restarts=0)
    new = rng.random((300, 3))
    _, std = emulator.gp.predict(new, return_std=True)
    noise = float(emulator.gp.kernel_.get_params()["k2__noise_level"]) * float(np.var(y))
    assert emulator.variance(new) + noise == pytest.approx(std**2, rel=1e-8, abs=1e-12)
    assert emulator.variance(x).max() < emulator.variance(new + 3.0).min()  # far from the runs: unsure


def test_held_out_predictions_give_cross_validated_q2() -> None:
    rng = np.random.default_rng(1)
    x = rng.random((24, 2))
    y = np.exp(x[:, 0]) + 0.3 * x[:, 1] + rng.normal(0.0, 0.01, 24)
    start = fit_emulator(x, y, seed=2, restarts=0).gp.kernel_
    mean, variance = held_out_predictions(x, y, start, folds=6, seed=2)
    q2 = 1.0 - ((y - mean) ** 2).sum() / ((y - y.mean()) ** 2).sum()
    assert q2 == pytest.approx(cross_validated_q2(x, y, folds=6, seed=2, start=start), abs=1e-12)
    assert (variance >= 0.0).all() and q2 > 0.95


def test_diamond_wave_rules_out_the_analytic_share(diamond_waves: list[Wave]) -> None:
    for wave in diamond_waves:
        assert wave.remaining_share == pytest.approx(DIAMOND_AREA, abs=tolerance(wave))
        assert wave.ruled_out_share == pytest.approx(1 - DIAMOND_AREA, abs=tolerance(wave))
        assert all(te.used and te.q2 > 0.99 for te in wave.emulators)  # linear outputs: emulated exactly
        # every candidate kept lies in the analytic region (up to the emulators' variance)
        assert (
            exact_max_implausibility(diamond, DIAMOND_TARGETS, wave.non_implausible) <= CUTOFF * 1.01
        ).all()
    second = diamond_waves[1]
    # the second wave's candidates come from the kept candidates' box widened by 10%: it holds the
    # diamond's own box [0.35, 0.65]² and lies within that box widened by 10% of its width
    assert (second.box[0] <= 0.35).all() and (second.box[1] >= 0.65).all()
    assert (second.box[0] >= 0.32 - 1e-9).all() and (second.box[1] <= 0.68 + 1e-9).all()
    table = second.diagnostics()
    assert list(table.columns) == [
        "wave",
        "target",
        "n_train",
        "q2",
        "coverage",
        "false_exclusions",
        "noise_share",
        "variance_scale",
        "used",
        "ruled_out_by",
    ]
    # fitted to the 16 new runs and the first wave's runs that its cut keeps
    assert set(table["target"]) == {"sum", "difference"} and (table["n_train"] > 16).all()
    assert (
        table["n_train"] == 16 + non_implausible_mask(training_sample(16, 2, seed=1), diamond_waves[:1]).sum()
    ).all()


def true_region_sample(simulator, targets: list[Target], d: int, bound: float) -> np.ndarray:  # type: ignore[no-untyped-def]
    x = np.random.default_rng(11).random((400_000, d))
    return x[exact_max_implausibility(simulator, targets, x) <= bound][:300]


@pytest.mark.parametrize("case", ["diamond", "annulus"])
def test_waves_never_rule_out_the_true_parameter(case: str, request: pytest.FixtureRequest) -> None:
    simulator, targets, d, truth = (
        (diamond, DIAMOND_TARGETS, 2, [0.5, 0.5])
        if case == "diamond"
        else (annulus, ANNULUS_TARGETS, 3, [0.5, 0.5, 0.3])
    )
    waves: list[Wave] = request.getfixturevalue(f"{case}_waves")
    inside = true_region_sample(simulator, targets, d, 2.5)
    assert len(inside) == 300
    for k in range(1, len(waves) + 1):
        assert non_implausible_mask(np.array([truth]), waves[:k]).all()
        assert non_implausible_mask(inside, waves[:k]).all(), f"wave {k} ruled out part of the true region"


def test_annulus_waves_shrink_the_space_to_the_analytic_volume(annulus_waves: list[Wave]) -> None:
    first, last = annulus_waves[0], annulus_waves[-1]
    # 8 runs: the first wave's emulators are unsure, which can only widen what it keeps
    assert first.remaining_share >= ANNULUS_OR_SLAB - tolerance(first)
    assert last.remaining_share == pytest.approx(ANNULUS_VOLUME, abs=tolerance(last))
    for earlier, later in itertools.pairwise(annulus_waves):
        assert later.remaining_share <= earlier.remaining_share + SAMPLING_SES * earlier.remaining_se
        assert non_implausible_mask(later.non_implausible, annulus_waves[: earlier.number]).all()  # nested
    assert last.ruled_out_share > first.ruled_out_share + 0.15


def test_final_check_keeps_only_points_inside_the_true_region(annulus_waves: list[Wave]) -> None:
    last = annulus_waves[-1]
    checked = last.non_implausible[space_filling_subset(last.non_implausible, 200, seed=4)]
    out = annulus(checked)
    zero = {name: np.zeros(len(checked)) for name in out}
    each = simulated_implausibility(ANNULUS_TARGETS, out, zero)
    ensemble = checked[(each < CUTOFF).all(axis=1)]
    assert len(ensemble) >= 0.9 * len(checked)  # the emulated region is the true one, nearly
    assert (exact_max_implausibility(annulus, ANNULUS_TARGETS, ensemble) < CUTOFF).all()
    r2 = ensemble[:, 0] ** 2 + ensemble[:, 1] ** 2
    assert ((r2 >= 0.44) & (r2 <= 0.56) & (np.abs(ensemble[:, 2] - 0.3) <= 0.06)).all()


def test_noisy_simulator_keeps_the_truth_and_counts_the_seed_noise() -> None:
    """Runs with seed noise (sd 0.03) averaged over 4 replications: the emulators' white-noise term
    takes the noise, the true parameter survives, and the final check widens each band by the
    noise of the mean (0.03²/4) — a closed form the check must reproduce."""
    parameters = unit_parameters(2)
    rng = np.random.default_rng(5)
    design = training_sample(32, 2, seed=2)
    reps = 4
    runs = np.stack([diamond(design)["sum"] + rng.normal(0.0, 0.03, 32) for _ in range(reps)])
    outputs = {"sum": runs.mean(axis=0), "difference": diamond(design)["difference"]}
    wave = history_matching_wave(
        design, outputs, DIAMOND_TARGETS, parameters, candidates=5000, seed=3, restarts=0
    )
    assert non_implausible_mask(np.array([[0.5, 0.5]]), [wave]).all()
    assert wave.emulators[0].emulator is not None and wave.emulators[0].emulator.noise_share > 0.0
    mean = np.array([1.155])
    noise = np.array([0.03**2 / reps])
    got = simulated_implausibility(DIAMOND_TARGETS[:1], {"sum": mean}, {"sum": noise})
    assert got[0, 0] == pytest.approx(0.155 / math.sqrt(0.05**2 + noise[0]))
    assert got[0, 0] < CUTOFF < 0.155 / 0.05  # the seed noise keeps a point 3.1σ off


def test_a_target_out_of_reach_rules_out_everything_and_bad_inputs_are_refused() -> None:
    parameters = unit_parameters(2)
    design = training_sample(16, 2, seed=1)
    far = [Target("sum", 5.0, obs_sd=0.05, discrepancy_sd=0.0)]
    wave = history_matching_wave(design, diamond(design), far, parameters, candidates=2000, restarts=0)
    assert len(wave.non_implausible) == 0 and wave.remaining_share == 0.0 and wave.ruled_out_share == 1.0
    after = history_matching_wave(
        design, diamond(design), far, parameters, previous=[wave], candidates=500, restarts=0
    )
    assert len(after.non_implausible) == 0  # an empty region stays empty
    with pytest.raises(KeyError, match="no outputs"):
        history_matching_wave(design, {"other": design[:, 0]}, far, parameters)
    with pytest.raises(ValueError, match="rows × 2"):
        history_matching_wave(design[:, :1], diamond(design), far, parameters)
    sparse = {"sum": np.where(np.arange(16) < 3, 1.0, math.nan)}  # 3 finite outputs: no emulator
    wave = history_matching_wave(design, sparse, far, parameters, candidates=500, restarts=0)
    assert wave.emulators[0].emulator is None and not wave.emulators[0].used
    assert wave.remaining_share == 1.0  # nothing could rule out


def test_an_emulator_that_would_exclude_a_kept_run_rules_nothing_out() -> None:
    """One run hits the target and the rest are far off: held out, that run is predicted far off
    too, so the emulator would rule out a run the simulator keeps (a false exclusion) and the wave
    does not use it (Andrianakis et al. 2015)."""
    parameters = unit_parameters(2)
    design = training_sample(16, 2, seed=1)
    spike = {"sum": np.where(np.arange(16) == 5, 1.0, 0.0)}
    target = [Target("sum", 1.0, obs_sd=0.01, discrepancy_sd=0.0)]
    wave = history_matching_wave(design, spike, target, parameters, candidates=500, restarts=0)
    check = wave.emulators[0]
    assert check.false_exclusions == pytest.approx(1 / 16) and not check.used
    assert wave.remaining_share == 1.0
    table = wave.diagnostics()
    assert table.loc[0, "coverage"] < 1.0 and not table.loc[0, "used"]


def test_a_noisy_run_just_inside_the_cut_off_is_no_false_exclusion() -> None:
    """One run per point of a noisy linear simulator (y = x1 + N(0, 0.05²)), with the target's band
    (3 × 0.02) a little narrower than the noise: runs whose expected output lies just beyond the cut-off
    land inside it by their noise alone. An emulator that predicts the expected output rules them out
    rightly: they are inside its 3-sd predictive interval, so no false exclusion, and it is used; the
    spike of the test above stays a false exclusion because it lies far outside."""
    parameters = unit_parameters(2)
    design = training_sample(128, 2, seed=4)
    y = design[:, 0] + np.random.default_rng(9).normal(0.0, 0.05, len(design))
    target = Target("y", 0.5, obs_sd=0.02, discrepancy_sd=0.0)
    wave = history_matching_wave(design, {"y": y}, [target], parameters, candidates=4000, seed=1, restarts=0)
    check = wave.emulators[0]
    assert check.q2 > 0.9
    # the old rule: kept by its single noisy run, ruled out by the emulator of the expected output
    mean, variance = held_out_predictions(design, y, check.emulator.gp.kernel_, folds=8, seed=1)  # type: ignore[union-attr]
    noise = check.noise_variance
    simulated = implausibility(0.5, y, 0.02**2, 0.0, noise)
    emulated = implausibility(0.5, mean, 0.02**2, 0.0, check.variance_scale * variance)
    assert ((simulated <= CUTOFF) & (emulated > CUTOFF)).any()  # such runs exist in this design
    assert check.false_exclusions == 0.0 and check.used
    assert not non_implausible_mask(np.array([[0.9, 0.5]]), [wave]).any()  # far off: ruled out
    assert non_implausible_mask(np.array([[0.5, 0.5]]), [wave]).all()  # the truth survives


def test_overconfidence_is_a_binomial_test_of_pukelsheims_coverage() -> None:
    def tail(misses: int, n: int) -> float:  # P(Binomial(n, 0.05) ≥ misses)
        return sum(math.comb(n, k) * 0.05**k * 0.95 ** (n - k) for k in range(misses, n + 1))

    assert tail(1, 8) == pytest.approx(1 - 0.95**8) and not overconfident(1, 8)  # 34%: an honest miss
    assert tail(3, 8) < 0.01 and overconfident(3, 8)
    assert tail(10, 100) > 0.01 and not overconfident(10, 100)
    assert tail(12, 100) < 0.01 and overconfident(12, 100)
    assert not overconfident(0, 5)


def test_batches_top_up_until_enough_candidates_are_left() -> None:
    parameters = unit_parameters(2)
    design = training_sample(16, 2, seed=1)
    thin = [Target("sum", 1.0, obs_sd=0.002, discrepancy_sd=0.0)]  # a band 0.012 wide: few kept per batch
    wave = history_matching_wave(
        design, diamond(design), thin, parameters, candidates=1000, min_left=60, max_batches=8, restarts=0
    )
    assert wave.candidates > 1000 and (len(wave.non_implausible) >= 60 or wave.candidates == 8000)
    assert wave.remaining_share == pytest.approx(2 * 0.006 - 0.006**2, abs=4 * wave.remaining_se + 0.002)


def test_cv_variance_scale_is_bachocs_estimator_and_only_widens() -> None:
    y, mean = np.array([1.0, 2.0]), np.zeros(2)
    assert cv_variance_scale(y, mean, np.array([0.25, 1.0])) == pytest.approx(4.0)  # z² = 4, 4
    assert cv_variance_scale(y, mean, np.array([1.0, 16.0])) == pytest.approx(1.0)  # z² = 1, ¼: widened to 1
    assert cv_variance_scale(y, y, np.zeros(2)) == 1.0  # exact predictions with no variance
    assert cv_variance_scale(y, mean, np.array([0.0, 1.0])) == math.inf  # a miss claimed certain


def test_an_overconfident_emulator_is_widened_until_its_held_out_errors_have_unit_mean_square() -> None:
    """A rough output on few runs: the emulator's held-out errors are larger than its variance says.
    The wave widens its variance by the CV scale, so that the standardized held-out errors (the same
    folds) have mean square 1, and the wave's implausibility uses the widened variance."""
    parameters = unit_parameters(3)
    design = training_sample(32, 3, seed=3)
    rng = np.random.default_rng(3)
    rough = {"sum": np.sin(9.0 * design[:, 0]) * np.cos(7.0 * design[:, 1]) + rng.normal(0.0, 0.3, 32)}
    target = [Target("sum", 0.0, obs_sd=0.05, discrepancy_sd=0.0)]
    wave = history_matching_wave(design, rough, target, parameters, candidates=300, restarts=0)
    te = wave.emulators[0]
    assert te.emulator is not None
    mean, variance = held_out_predictions(design, rough["sum"], te.emulator.gp.kernel_, seed=0)
    noise = te.emulator.noise_share * float(np.var(rough["sum"]))
    raw = float(np.mean((rough["sum"] - mean) ** 2 / (variance + noise)))
    assert te.variance_scale == pytest.approx(max(1.0, raw), rel=1e-9)
    x = design[:5]
    assert te.variance(x) == pytest.approx(te.variance_scale * te.emulator.variance(x), rel=1e-12)
    assert te.noise_variance == pytest.approx(te.variance_scale * noise, rel=1e-9)
    assert wave.diagnostics().loc[0, "variance_scale"] == te.variance_scale
    widened = (rough["sum"] - mean) ** 2 / (te.variance_scale * (variance + noise))
    assert te.variance_scale > 1.0 and float(np.mean(widened)) == pytest.approx(1.0, rel=1e-9)


def test_a_relative_target_is_emulated_on_the_log_scale_and_matched_exactly() -> None:
    """f = exp(6·x1 + 0.5·x2) spans three orders of magnitude; target 50 with total sd σ = √(2.5² + 5²):
    the region |f − 50| ≤ 3σ is the band ln(50 − 3σ) ≤ 6·x1 + 0.5·x2 ≤ ln(50 + 3σ), of area
    ln((50 + 3σ)/(50 − 3σ))/6 inside the unit square. From 16 runs the log-scale emulator is exact;
    the linear one keeps far more than the band."""
    parameters = [Parameter("a", 0.0, 1.0), Parameter("b", 0.0, 1.0)]
    x = training_sample(16, 2, seed=1)
    outputs = {"f": np.exp(6.0 * x[:, 0] + 0.5 * x[:, 1])}
    kept: dict[str, float] = {}
    for scale in ("linear", "log"):
        target = Target("f", 50.0, 2.5, 5.0, scale=scale)  # type: ignore[arg-type]
        wave = history_matching_wave(x, outputs, [target], parameters, candidates=100_000, seed=0)
        sigma = math.sqrt(target.variance)
        area = math.log((50 + 3 * sigma) / (50 - 3 * sigma)) / 6
        kept[scale] = wave.remaining_share
        probe = np.random.default_rng(11).random((400_000, 2))
        exact = implausibility(50.0, np.exp(6.0 * probe[:, 0] + 0.5 * probe[:, 1]), target.variance, 0.0)
        assert non_implausible_mask(probe[exact <= 2.5][:300], [wave]).all()  # never the true region
        if scale == "log":
            assert wave.remaining_share == pytest.approx(area, abs=tolerance(wave))
    assert kept["linear"] > kept["log"] + 0.03
    # an output ≤ 0 cannot be logged: that wave falls back to the linear scale
    zero = {"f": outputs["f"] - outputs["f"].min()}
    fallback = history_matching_wave(
        x, zero, [Target("f", 50.0, 2.5, 5.0, scale="log")], parameters, candidates=1000, seed=0
    )
    assert fallback.emulators[0].emulator is not None
    assert type(fallback.emulators[0].emulator).__name__ == "Emulator"
    with pytest.raises(ValueError, match="scale must be linear or log"):
        Target("f", 50.0, 2.5, 5.0, scale="sqrt")  # type: ignore[arg-type]


def test_an_interval_target_is_zero_inside_and_grows_outside() -> None:
    # METR's ratio as an interval: 1.013–1.395, discrepancy sd 0.059
    t = Target("ratio", 1.188, 0.0974, 0.059, low=1.013, high=1.395)
    inside = t.implausibility(np.array([1.013, 1.2, 1.395]))
    assert np.all(inside == 0.0)
    outside = t.implausibility(np.array([0.91, 1.5]), 0.0)
    assert outside == pytest.approx([(1.013 - 0.91) / 0.059, (1.5 - 1.395) / 0.059])
    # the emulator's variance widens the denominator; further away is more implausible
    assert t.implausibility(0.91, 0.05**2) < t.implausibility(0.91)
    assert t.implausibility(0.8) > t.implausibility(0.91)
    # a point target at the interval's centre would call a mean at either end implausible by ≈ 1.5
    point = Target("ratio", 1.188, 0.0974, 0.059)
    assert point.implausibility(1.395) > 1.5


def test_a_hard_target_rules_out_every_final_mean_outside_its_interval() -> None:
    t = Target("ratio", 1.188, 0.0974, 0.059, low=1.013, high=1.395, hard=True)
    final = t.implausibility(np.array([1.0, 1.013, 1.3, 1.396]), 0.0, final=True)
    assert list(final) == [math.inf, 0.0, 0.0, math.inf]
    # in the emulated waves it is soft (distance over the discrepancy and emulator variance)
    assert math.isfinite(float(t.implausibility(1.0)))
    table = simulated_implausibility([t], {"ratio": np.array([0.99, 1.2])}, {"ratio": np.array([1e-4, 1e-4])})
    assert table[:, 0].tolist() == [math.inf, 0.0]


def test_interval_targets_need_both_ends_in_order() -> None:
    with pytest.raises(ValueError, match="low ≤ high"):
        Target("x", 1.0, 0.1, 0.1, low=2.0, high=1.0)
    with pytest.raises(ValueError, match="low ≤ high"):
        Target("x", 1.0, 0.1, 0.1, low=0.5)
    with pytest.raises(ValueError, match="hard target needs"):
        Target("x", 1.0, 0.1, 0.1, hard=True)


def test_the_calibration_reads_inside_interval_rows_as_hard_intervals() -> None:
    from speedtrap.validation.parameters import calibration_targets

    targets = {t.name: t for t in calibration_targets()}
    ratio = targets["ai_vs_manual_time_ratio"]
    assert ratio.hard and (ratio.low, ratio.high) == (1.013, 1.395)
    assert not targets["agent_stretch_median"].has_interval
    # a range of sources (human turns) or an assumed end (acceptance) is a soft interval
    turns, acceptance = targets["human_turns_per_session"], targets["acceptance_rate"]
    assert turns.has_interval and acceptance.has_interval and not (turns.hard or acceptance.hard)


@pytest.mark.parametrize("case", ["diamond_waves", "annulus_waves"])
def test_survives_is_the_cut_found_target_by_target(case: str, request: pytest.FixtureRequest) -> None:
    """The target-by-target cut that earlier waves apply to new candidates keeps exactly the points
    the full cut keeps, at first and second largest implausibility (the annulus' first wave)."""
    waves: list[Wave] = request.getfixturevalue(case)
    points = np.random.default_rng(11).random((5000, len(waves[0].parameters)))
    for wave in waves:
        kept = wave.cut(points)[0]
        assert 0 < kept.sum() < len(points)  # the check has both kinds of points
        assert np.array_equal(wave.survives(points), kept)
        assert np.array_equal(wave.survives(points[kept]), np.ones(int(kept.sum()), dtype=bool))
    assert {w.order for w in waves} >= ({1, 2} if case == "annulus_waves" else {1})
