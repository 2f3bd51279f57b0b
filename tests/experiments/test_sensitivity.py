"""Sensitivity analysis through the experiment engine: known answers from cheap model functions, the
headline model function at a tiny size, stores and resuming, and the plots."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from speedtrap.analysis.sensitivity import MORRIS_COLUMNS, SOBOL_COLUMNS, sobol_indices
from speedtrap.config.experiment import Experiment
from speedtrap.config.scenario import Scenario
from speedtrap.experiments.seeds import replication_seeds
from speedtrap.experiments.sensitivity import (
    BATCHED,
    GAP_KEYS,
    SCREENING_OUTCOMES,
    WAFER,
    EmulatedSensitivityResult,
    SensitivityResult,
    compare_direct,
    emulated_finding,
    external_q2,
    index_convergence,
    point_means,
    productivity_gap,
    run_emulated_sobol,
    run_morris,
    run_sobol,
    screening_finding,
    screening_table,
    sobol_indices_from_first,
)
from speedtrap.experiments.store import ResultStore
from speedtrap.models.workflow import simulate_summary
from speedtrap.plots import plot_emulator_check, plot_morris, plot_sensitivity

FLOW = "developer.attention.flow_threshold_s"
DETECT = "developer.review.detect_prob"
A, B = 1.0, 20.0
"""y = A·flow + B·detect with flow ~ U(0, 10) s and detect ~ U(0, 1): variances A²·100/12 and B²/12."""
NOISE = 5.0


def additive(scenario: Scenario, seed: int) -> dict[str, float]:
    """A cheap model with known Sobol' indices, plus noise that depends only on the seed (so under
    common random numbers it is shared by every design point)."""
    flow = scenario.developer.attention.flow_threshold_s
    detect = scenario.developer.review.detect_prob
    noise = NOISE * float(np.random.default_rng(seed).standard_normal())
    return {"y": A * flow + B * detect + noise, "flow_only": flow}


def additive_spec(**changes: Any) -> Experiment:
    data: dict[str, Any] = {
        "name": "additive",
        "scenario": {"developers": 1, "horizon_s": 3600.0},
        "design": {"kind": "sobol", "points": 64, "seed": 9},
        "factors": [{"path": FLOW, "range": [0.0, 10.0]}, {"path": DETECT, "range": [0.0, 1.0]}],
        "replications": 3,
        "seed": 5,
    }
    data.update(changes)
    return Experiment.model_validate(data)


def test_run_sobol_recovers_the_indices_of_an_additive_model(tmp_path: Path) -> None:
    spec = additive_spec()
    result = run_sobol(spec, model=additive, outcome=["y", "flow_only"], results_dir=tmp_path, progress=False)
    d, n = 2, 64
    assert len(result.points) == n * (d + 2)
    assert len(result.table) == n * (d + 2) * spec.replications
    assert list(result.indices.columns) == ["outcome", *SOBOL_COLUMNS]
    y = result.indices[result.indices["outcome"] == "y"].set_index("factor")
    var_flow, var_detect = A**2 * 100 / 12, B**2 / 12
    exact = {FLOW: var_flow / (var_flow + var_detect), DETECT: var_detect / (var_flow + var_detect)}
    for factor, share in exact.items():
        for column in ("S1", "ST"):  # additive: no interactions, so ST = S1
            half = y.loc[factor, f"{column}_conf"]
            # floor 0.02 of the variance: as in tests/analysis/test_sensitivity.py
            assert abs(y.loc[factor, column] - share) <= max(3 * half, 0.02), (factor, column, half)
    only = result.indices[result.indices["outcome"] == "flow_only"].set_index("factor")
    assert abs(only.loc[FLOW, "S1"] - 1.0) <= max(3 * only.loc[FLOW, "S1_conf"], 0.02)
    assert only.loc[DETECT, "S1"] == 0.0 and only.loc[DETECT, "ST"] == 0.0  # f never moves with detect

    # The seed noise is the same at every point (common random numbers), so averaging over the
    # replications shifts every point by the same amount and leaves the indices of the noise-free
    # function exactly: compare with the analysis of A·flow + B·detect evaluated directly.
    direct = A * result.points[FLOW].to_numpy() + B * result.points[DETECT].to_numpy()
    seeds = replication_seeds(spec.seed, spec.replications)
    shift = np.mean([NOISE * np.random.default_rng(seed).standard_normal() for seed in seeds])
    means = point_means(result.table, ["y"])["y"].to_numpy()
    assert means == pytest.approx(direct + shift, abs=1e-9)  # every point averaged the same seeds
    expected = sobol_indices(result.points, direct, spec)
    pd.testing.assert_frame_equal(y.reset_index().drop(columns="outcome"), expected, rtol=1e-9, atol=1e-12)


def test_run_sobol_stores_apart_and_resumes_without_rerunning(tmp_path: Path) -> None:
    spec = additive_spec(design={"kind": "sobol", "points": 8, "seed": 1}, replications=2)
    first = run_sobol(spec, model=additive, outcome="y", results_dir=tmp_path, progress=False)
    store = ResultStore(tmp_path / "additive-sobol-n8")
    parts = store.part_paths()
    assert parts and len(store.read()) == 8 * 4 * 2
    again = run_sobol(spec, model=additive, outcome="y", results_dir=tmp_path, progress=False)
    assert store.part_paths() == parts  # nothing new was run
    pd.testing.assert_frame_equal(again.indices, first.indices)
    morris = run_morris(spec, 4, model=additive, outcome="y", results_dir=tmp_path, progress=False)
    assert (tmp_path / "additive-morris-n4").is_dir() and len(morris.table) == 4 * 3 * 2


def test_sobol_indices_from_the_first_base_samples_are_the_smaller_study() -> None:
    spec = additive_spec(design={"kind": "sobol", "points": 16, "seed": 3}, replications=2)
    kwargs: dict[str, Any] = {"model": additive, "outcome": ["y", "flow_only"], "results_dir": None}
    full = run_sobol(spec, progress=False, **kwargs)
    half = sobol_indices_from_first(full, spec, 8)
    pd.testing.assert_frame_equal(half, run_sobol(spec, 8, progress=False, **kwargs).indices)
    pd.testing.assert_frame_equal(sobol_indices_from_first(full, spec, 16), full.indices)
    moved = index_convergence(half, full.indices).set_index("outcome")
    assert list(moved.index) == ["y", "flow_only"]
    for outcome in moved.index:
        a, b = (t[t["outcome"] == outcome] for t in (half, full.indices))
        assert moved.loc[outcome, "widest_conf_smaller"] == max(a["S1_conf"].max(), a["ST_conf"].max())
        assert moved.loc[outcome, "widest_conf_larger"] == max(b["S1_conf"].max(), b["ST_conf"].max())
        change = np.abs(b[["S1", "ST"]].to_numpy() - a[["S1", "ST"]].to_numpy()).max()
        assert moved.loc[outcome, "max_change"] == pytest.approx(change)
    with pytest.raises(ValueError, match="share no outcome"):
        index_convergence(half, full.indices.assign(outcome="other"))
    for bad in (1, 12, 32):
        with pytest.raises(ValueError, match="power of two between 2 and the study's 16"):
            sobol_indices_from_first(full, spec, bad)
    morris = run_morris(spec, 4, progress=False, **kwargs)
    with pytest.raises(ValueError, match="not a Sobol'"):
        sobol_indices_from_first(morris, spec, 2)


def test_run_morris_measures_effects_per_factor_range() -> None:
    spec = additive_spec(replications=2)
    result = run_morris(spec, 6, model=additive, outcome="y", results_dir=None, progress=False)
    assert list(result.indices.columns) == ["outcome", *MORRIS_COLUMNS]
    assert len(result.table) == 6 * 3 * 2
    indices = result.indices.set_index("factor")
    # a full range of flow (10 s) moves y by A·10; of detect (1) by B; the seed noise cancels.
    assert indices.loc[FLOW, "mu_star"] == pytest.approx(A * 10, rel=1e-9)
    assert indices.loc[DETECT, "mu_star"] == pytest.approx(B, rel=1e-9)
    assert indices["sigma"].to_numpy() == pytest.approx([0.0, 0.0], abs=1e-9)


def test_run_emulated_sobol_recovers_the_additive_indices_and_resumes(tmp_path: Path) -> None:
    spec = additive_spec(replications=1)
    kwargs: dict[str, Any] = {"model": additive, "outcome": "y", "results_dir": tmp_path, "progress": False}
    result = run_emulated_sobol(spec, 32, bootstrap=2, sobol_n=1024, **kwargs)
    assert len(result.points) == 32 and len(result.table) == 32
    assert sorted(result.indices["n_train"].unique()) == [16, 32]  # the nested half too
    var_flow, var_detect = A**2 * 100 / 12, B**2 / 12
    exact = {FLOW: var_flow / (var_flow + var_detect), DETECT: var_detect / (var_flow + var_detect)}
    full = result.indices[result.indices["n_train"] == 32].set_index("factor")
    for factor, share in exact.items():  # a plane (the seed noise is shared by every point): exact
        assert full.loc[factor, "S1"] == pytest.approx(share, abs=0.02)
        assert full.loc[factor, "ST"] == pytest.approx(share, abs=0.02)
    assert result.diagnostics["trustworthy"].all() and (result.diagnostics["q2"] > 0.99).all()
    store = ResultStore(tmp_path / "additive-emulator-n32")
    parts = store.part_paths()
    again = run_emulated_sobol(spec, 32, bootstrap=2, sobol_n=1024, **kwargs)
    assert store.part_paths() == parts  # nothing new was run
    pd.testing.assert_frame_equal(again.indices, result.indices)
    # checked at another design's runs (Morris trajectories reach the corners): a plane is predicted
    morris = run_morris(spec, 4, **kwargs)
    assert external_q2(spec, result, morris) == {"y": pytest.approx(1.0, abs=1e-3)}
    sobol = run_sobol(
        additive_spec(design={"kind": "sobol", "points": 2, "seed": 1}, replications=1), **kwargs
    )
    with pytest.raises(ValueError, match="unit coordinates"):
        external_q2(spec, result, sobol)
    direct = run_sobol(spec, 16, **kwargs)  # the plane's indices, directly: the emulated ones agree
    both = compare_direct(result, direct)
    assert set(both["factor"]) == {FLOW, DETECT} and both["S1_inside"].all() and both["ST_inside"].all()
    assert both["emulated_S1"].to_numpy() == pytest.approx(full.loc[both["factor"], "S1"].to_numpy())
    with pytest.raises(ValueError, match="at least 8 training points"):
        run_emulated_sobol(spec, 4, **kwargs)
    with pytest.raises(ValueError, match="power of two"):
        run_emulated_sobol(spec, 24, **kwargs)


def test_emulated_finding_ranks_by_total_share_and_reports_convergence() -> None:
    rows = []
    for n_train, shift in ((16, 0.05), (32, 0.0)):
        for factor, s1, st in (("a.big", 0.6, 0.7), ("a.mid", 0.25 + shift, 0.3), ("a.none", 0.0, 0.001)):
            rows.append(
                {"outcome": "gap_x", "n_train": n_train, "factor": factor, "S1": s1, "S1_low": s1 - 0.05,
                 "S1_high": s1 + 0.05, "ST": st, "ST_low": st - 0.05, "ST_high": min(st + 0.05, 0.015)
                 if factor == "a.none" else st + 0.05}
            )  # fmt: skip
    diagnostics = pd.DataFrame(
        {"outcome": ["gap_x"] * 2, "n_train": [16, 32], "q2": [0.8, 0.97], "noise_share": [0.01] * 2,
         "mc_half_width": [0.01] * 2, "trustworthy": [False, True]}
    )  # fmt: skip
    result = EmulatedSensitivityResult(pd.DataFrame(rows), diagnostics, pd.DataFrame(), pd.DataFrame(), {})
    text = emulated_finding(result, "gap_x", title="things")
    assert text.startswith("Gap in things (emulator of 32 runs, held-out Q² = 0.97")
    assert text.index("a.big 60% [55–65] alone, 70% [65–75] in all") < text.index("a.mid 25%")
    assert "Under 2% in all: a.none." in text
    assert "Interactions: 15% (1 − ΣS1)." in text
    assert (
        "From 16 runs the indices moved by at most 5.0 pp and the widest interval narrowed from 10.0 to"
        in text
    )
    assert "cannot mean much" not in text
    with pytest.raises(KeyError, match="gap_y"):
        emulated_finding(result, "gap_y", title="y")


def _emulated_and_direct(
    emulated: list[tuple[float, float, float]], direct: list[tuple[float, float]]
) -> tuple[EmulatedSensitivityResult, SensitivityResult]:
    """An emulated result and a direct study of one outcome, factors f0, f1, ...: emulated (index,
    low, high) and direct (index, half-width), the same values for S1 and ST."""
    rows = [
        {"outcome": "gap_x", "n_train": 32, "factor": f"f{i}", "S1": v, "S1_low": lo, "S1_high": hi,
         "ST": v, "ST_low": lo, "ST_high": hi}
        for i, (v, lo, hi) in enumerate(emulated)
    ]  # fmt: skip
    ours = EmulatedSensitivityResult(pd.DataFrame(rows), pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), {})
    theirs = pd.DataFrame(
        [{"outcome": "gap_x", "factor": f"f{i}", "S1": v, "S1_conf": c, "ST": v, "ST_conf": c}
         for i, (v, c) in enumerate(direct)]
    )  # fmt: skip
    return ours, SensitivityResult(theirs, pd.DataFrame(), pd.DataFrame())


def test_compare_direct_tells_inside_from_overlapping_intervals() -> None:
    ours, theirs = _emulated_and_direct(
        [(0.50, 0.45, 0.55), (0.30, 0.25, 0.35), (0.30, 0.28, 0.32)],
        [(0.48, 0.05), (0.20, 0.06), (0.10, 0.05)],
    )
    both = compare_direct(ours, theirs).set_index("factor")
    # f0: the emulated index lies within the direct interval; f1: outside it, but the intervals
    # overlap (0.25 ≤ 0.26); f2: apart (0.28 > 0.15)
    for key in ("S1", "ST"):
        assert both[f"{key}_inside"].tolist() == [True, False, False]
        assert both[f"{key}_overlap"].tolist() == [True, True, False]
    assert both.loc["f1", "emulated_ST_low"] == 0.25 and both.loc["f1", "emulated_ST_high"] == 0.35


def test_plot_emulator_check_draws_both_studies_and_names_the_disagreements() -> None:
    ours, theirs = _emulated_and_direct(
        [(0.50, 0.45, 0.55), (0.30, 0.28, 0.32)], [(0.48, 0.05), (0.10, 0.05)]
    )
    both = compare_direct(ours, theirs)
    ax = plot_emulator_check(both, labels={"f1": "F one"}, title="gap")
    assert [t.get_text() for t in ax.texts] == ["intervals apart:\nF one (ST)\nF one (S1)"]  # only f1
    points = [line for line in ax.lines if line.get_marker() in ("o", "s")]
    xs = sorted(float(x) for line in points for x in line.get_xdata())
    assert xs == pytest.approx([10.0, 10.0, 48.0, 48.0])  # direct indices in %
    assert ax.get_xlim()[1] >= 55.0 and ax.get_ylim()[1] >= 55.0  # every interval inside the axes
    assert "bootstrap half-width" in ax.get_xlabel() and "percentile interval" in ax.get_ylabel()
    with pytest.raises(ValueError, match="several outcomes"):
        plot_emulator_check(pd.concat([both, both.assign(outcome="gap_y")]))
    plt.close("all")


def test_emulated_sobol_script_runs_at_quick_size(tmp_path: Path) -> None:
    script = Path(__file__).resolve().parents[2] / "experiments" / "emulated_sobol.py"
    module = runpy.run_path(str(script), run_name="emulated_sobol")  # defines main without running it
    with pytest.warns(RuntimeWarning, match="cannot mean much"):  # 16 runs of 8 inputs: a smoke run
        assert module["main"](["--quick", "--direct", "4", "--results-dir", str(tmp_path)]) == 0
    out = tmp_path / "emulated-sobol-quick"
    direct = pd.read_csv(out / "direct-n4.csv")  # every outcome × input, emulated beside direct
    assert len(direct) == len(SCREENING_OUTCOMES) * 8
    assert {"S1_inside", "ST_inside", "S1_overlap", "ST_overlap", "emulated_ST_low"} <= set(direct.columns)
    assert (out / "direct-n4.png").stat().st_size > 10_000
    moved = pd.read_csv(out / "direct-n4-convergence.csv")  # from 2 to 4 base samples, per gap
    assert set(moved["outcome"]) == set(SCREENING_OUTCOMES) and (moved["max_change"] >= 0).all()
    indices = pd.read_csv(out / "indices.csv")
    assert set(indices["outcome"]) == set(SCREENING_OUTCOMES) and set(indices["n_train"]) == {8, 16}
    assert set(pd.read_csv(out / "diagnostics.csv").columns) >= {"q2", "noise_share", "trustworthy"}
    assert (out / "emulated_sobol.png").stat().st_size > 10_000
    for bad in (["--points", "12"], ["--replications", "0"], ["--bootstrap", "1"], ["--direct", "3"]):
        with pytest.raises(SystemExit):
            module["main"](["--quick", *bad, "--results-dir", str(tmp_path)])


def test_unknown_outcomes_and_missing_sizes_are_refused() -> None:
    spec = additive_spec(design={"kind": "sobol", "points": 2, "seed": 1}, replications=1)
    with pytest.raises(KeyError, match="no outcome 'z'"):
        run_sobol(spec, model=additive, outcome="z", results_dir=None, progress=False)
    factorial = additive_spec(
        design={"kind": "full_factorial"},
        factors=[{"path": FLOW, "range": [0.0, 10.0], "levels": 2}],
    )
    with pytest.raises(ValueError, match="give n"):
        run_morris(factorial, model=additive, outcome="y", results_dir=None, progress=False)


TINY_TWO_BACKENDS: dict[str, Any] = {
    "name": "tiny-two",
    "developers": 1,
    "horizon_s": 3600.0,
    "task_mix": {"effort_s": {"median": 600.0, "sigma": 0.5}},  # small tasks: several finish in an hour
    "backends": {BATCHED: BATCHED, WAFER: WAFER},
    "policy": {"kind": "always", "backend": BATCHED},
}


def test_productivity_gap_runs_both_backends_on_the_same_seed() -> None:
    scenario = Scenario.model_validate(TINY_TWO_BACKENDS)
    gap = productivity_gap(scenario, 17)
    wafer = simulate_summary(scenario.with_backend(WAFER), 17)
    batched = simulate_summary(scenario.with_backend(BATCHED), 17)
    for key in GAP_KEYS:
        np.testing.assert_equal(gap[f"backend_{key}"], wafer[key])  # NaN equals NaN here
        np.testing.assert_equal(gap[f"baseline_{key}"], batched[key])
        if np.isfinite(wafer[key]) and np.isfinite(batched[key]):
            assert gap[f"gap_{key}"] == pytest.approx(wafer[key] - batched[key])
    rate = batched["tasks_per_dev_day"]
    assert gap["relative_gap_tasks_per_dev_day"] == pytest.approx(wafer["tasks_per_dev_day"] / rate - 1)


def test_sobol_and_morris_of_the_productivity_gap_at_quick_size(tmp_path: Path) -> None:
    spec = Experiment.model_validate(
        {
            "name": "gap",
            "scenario": TINY_TWO_BACKENDS,
            "design": {"kind": "sobol", "points": 2, "seed": 3},
            "factors": [
                {"path": f"backends.{WAFER}.decode_speedup", "range": [0.4, 1.6], "log": True},
                {"path": f"backends.{WAFER}.quality.failure_multiplier", "range": [1.15, 1.8]},
                {"path": "developer.attention.max_parallel_sessions", "range": [1, 4], "integer": True},
            ],
            "replications": 2,
            "seed": 1,
        }
    )
    outcomes = ["gap_tasks_per_dev_day", "backend_tasks_per_dev_day"]
    sobol = run_sobol(spec, model=productivity_gap, outcome=outcomes, results_dir=tmp_path, progress=False)
    assert list(sobol.indices.columns) == ["outcome", *SOBOL_COLUMNS]
    assert sobol.indices["outcome"].tolist() == [o for o in outcomes for _ in range(3)]
    assert sobol.indices["factor"].tolist() == spec.factor_paths * 2
    assert len(sobol.table) == 2 * (3 + 2) * 2
    table = sobol.table
    assert np.allclose(
        table["gap_tasks_per_dev_day"],
        table["backend_tasks_per_dev_day"] - table["baseline_tasks_per_dev_day"],
    )
    means = point_means(table, outcomes)
    assert means.index.tolist() == list(range(len(sobol.points)))
    morris = run_morris(
        spec, 2, model=productivity_gap, outcome=outcomes[0], results_dir=None, progress=False
    )
    assert list(morris.indices.columns) == ["outcome", *MORRIS_COLUMNS]
    assert len(morris.table) == 2 * (3 + 1) * 2
    assert np.isfinite(morris.indices[["mu", "mu_star", "sigma"]].to_numpy()).all()


def test_the_example_sensitivity_file_loads_with_sourced_factors() -> None:
    path = Path(__file__).resolve().parents[2] / "experiments" / "sweeps" / "sensitivity.toml"
    spec = Experiment.from_toml(path)
    assert set(spec.scenario.backends) == {BATCHED, WAFER}
    assert spec.design.kind == "sobol" and len(spec.factors) == 8
    quick = spec.quick_variant()
    assert quick.design.points == 8 and quick.scenario.developers == 1


def _sobol_table() -> pd.DataFrame:
    rows = {
        "factor": ["a", "b", "c"],
        "S1": [0.1, 0.5, 0.0],
        "S1_conf": [0.02, 0.05, 0.01],
        "ST": [0.3, 0.6, 0.05],
        "ST_conf": [0.03, 0.04, 0.02],
    }
    one = pd.DataFrame(rows)
    return pd.concat([one.assign(outcome="y"), one.assign(outcome="z")], ignore_index=True)


def test_plot_sensitivity_sorts_by_total_index_and_needs_one_outcome() -> None:
    table = _sobol_table()
    with pytest.raises(ValueError, match="several outcomes"):
        plot_sensitivity(table)
    ax = plot_sensitivity(table, outcome="y", labels={"b": "B"})
    try:
        assert [t.get_text() for t in ax.get_yticklabels()] == ["B", "a", "c"]
        widths = sorted(round(p.get_width(), 6) for p in ax.patches)  # indices drawn in % of variance
        assert widths == sorted([10.0, 50.0, 0.0, 30.0, 60.0, 5.0])
        assert "%" in ax.get_xlabel()
    finally:
        plt.close(ax.figure)


def test_plot_morris_labels_every_factor() -> None:
    indices = pd.DataFrame(
        {
            "factor": ["a", "b"],
            "mu": [1.0, -0.5],
            "mu_star": [2.0, 0.5],
            "mu_star_conf": [0.2, 0.1],
            "sigma": [0.5, 1.5],
        }
    )
    ax = plot_morris(indices, unit="tasks per developer-day")
    try:
        assert {t.get_text() for t in ax.texts} == {"a", "b"}
        assert "tasks per developer-day" in ax.get_xlabel()
    finally:
        plt.close(ax.figure)


def _morris_rows(rows: list[tuple[str, float, float, float, float]]) -> pd.DataFrame:
    """Indices of one outcome ``gap_x`` from (factor, mu, mu_star, mu_star_conf, sigma) rows."""
    frame = pd.DataFrame(rows, columns=["factor", "mu", "mu_star", "mu_star_conf", "sigma"])
    frame.insert(0, "outcome", "gap_x")
    return frame


def test_screening_finding_ranks_by_mu_star_and_says_what_it_can_resolve() -> None:
    indices = _morris_rows(
        [
            ("developer.review.detect_prob", -5.0, 6.0, 1.0, 2.0),  # weak, monotone down
            ("backends.w.quality.failure_multiplier", -20.0, 20.0, 3.0, 5.0),  # strongest, monotone down
            ("task_mix.tool_s.median", 2.0, 16.0, 2.0, 25.0),  # overlaps the top (18 ≥ 17); mixed signs
        ]
    )
    text = screening_finding(indices, "gap_x", unit="tasks per developer-day")
    # ranked by μ*, with half-widths and the direction only where the signs agree
    assert text.index("quality.failure_multiplier 20 ± 3") < text.index("tool_s.median 16 ± 2")
    assert text.index("tool_s.median 16 ± 2;") < text.index("review.detect_prob 6 ± 1")
    assert "quality.failure_multiplier 20 ± 3, raising it lowers the gap" in text
    assert "tool_s.median 16 ± 2;" in text  # μ = 0.2 of μ* = 1.6: no direction
    assert "Strongest: quality.failure_multiplier (not separable from tool_s.median)." in text
    assert text.endswith("Nonlinear or interacting (σ > μ*): tool_s.median.")
    assert "(tasks per developer-day;" in text
    with pytest.raises(KeyError, match="gap_y"):
        screening_finding(indices, "gap_y", unit="x")


def test_screening_table_shows_shares_in_percentage_points() -> None:
    rows = [("developer.review.detect_prob", -0.01, 0.02, 0.005, 0.03)]
    indices = pd.concat(
        [_morris_rows(rows).assign(outcome=outcome) for outcome in (*SCREENING_OUTCOMES, "gap_other")]
    )
    shown = screening_table(indices).set_index("outcome")
    assert set(shown.index) == set(SCREENING_OUTCOMES)  # other outcomes are left out
    assert shown.loc[
        "gap_waiting_share", ["mu", "mu_star", "mu_star_conf", "sigma"]
    ].tolist() == pytest.approx([-1.0, 2.0, 0.5, 3.0])
    assert shown.loc["gap_waiting_share", "unit"] == "pp of time"
    assert shown.loc["gap_usd_per_task", "mu_star"] == pytest.approx(0.02)
    assert shown.loc["gap_usd_per_task", "unit"] == "US$ per task"


def test_screening_script_runs_at_quick_size(tmp_path: Path) -> None:
    script = Path(__file__).resolve().parents[2] / "experiments" / "screening.py"
    module = runpy.run_path(str(script), run_name="screening")  # defines main without running it
    assert module["main"](["--quick", "--results-dir", str(tmp_path)]) == 0
    shown = pd.read_csv(tmp_path / "screening-quick" / "screening.csv")
    assert set(shown["outcome"]) == set(SCREENING_OUTCOMES)
    assert (tmp_path / "screening-quick" / "screening.png").stat().st_size > 10_000
    waiting = shown[shown["outcome"] == "gap_waiting_share"]
    assert (waiting["unit"] == "pp of time").all()
    with pytest.raises(SystemExit):
        module["main"](["--quick", "--trajectories", "1", "--results-dir", str(tmp_path)])
