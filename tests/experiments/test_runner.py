"""The runner: a tidy table of the model's outcomes, resume without recomputation, a changed spec
refused, finished runs kept when a run fails, and common random numbers narrowing paired differences."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from speedtrap.analysis import paired_differences
from speedtrap.config import Scenario
from speedtrap.config.experiment import Experiment
from speedtrap.experiments import (
    ResultStore,
    StoreMismatchError,
    design_points,
    evaluate,
    replication_seeds,
    run_experiment,
    scenario_for,
)
from speedtrap.models.workflow import simulate_summary


class CountingModel:
    """``simulate_summary`` that records which (backend, seed) it ran, and can fail after some calls."""

    def __init__(self, fail_after: int | None = None) -> None:
        self.calls: list[tuple[str, int]] = []
        self.fail_after = fail_after

    def __call__(self, scenario: Scenario, seed: int) -> Mapping[str, float]:
        if self.fail_after is not None and len(self.calls) >= self.fail_after:
            raise RuntimeError("the model broke")
        self.calls.append((next(iter(scenario.backends)), seed))
        return simulate_summary(scenario, seed)


def test_table_is_tidy_sorted_and_matches_the_model(tiny: Experiment) -> None:
    table = run_experiment(tiny, results_dir=None, progress=False)
    outcomes = ["tasks_completed", "tasks_per_dev_day", "waiting_share", "usd_total"]
    assert list(table.columns) == ["point", "replication", "seed", "backend", *outcomes]
    assert table.attrs == {"factors": ["backend"], "outcomes": outcomes}
    assert table[["point", "replication"]].values.tolist() == [[0, 0], [0, 1], [1, 0], [1, 1]]
    assert table["backend"].tolist() == ["gpu-batched"] * 2 + ["wafer-distilled"] * 2
    seeds = replication_seeds(tiny.seed, tiny.replications)
    points = design_points(tiny)
    for row in table.itertuples():
        scenario = scenario_for(tiny, points.iloc[row.point])
        expected = simulate_summary(scenario, seeds[row.replication])
        assert [getattr(row, k) for k in outcomes] == [expected[k] for k in outcomes]
    assert (table["tasks_completed"] > 0).all()


def test_default_outcomes_are_every_summary_key_but_factor_columns(
    make_tiny: Callable[..., Experiment],
) -> None:
    spec = make_tiny(outcomes=None, factors=[{"path": "developers", "values": [1, 2]}], replications=1)
    table = run_experiment(spec, results_dir=None, progress=False)
    summary = simulate_summary(spec.scenario, replication_seeds(spec.seed, 1)[0])
    assert table.attrs["outcomes"] == [k for k in summary if k != "developers"]
    assert table["developers"].tolist() == [1, 2]  # the factor column, not the outcome


def test_resume_runs_only_what_is_missing(tiny: Experiment, tmp_path: Path) -> None:
    first = CountingModel()
    partial = run_experiment(tiny, results_dir=tmp_path, progress=False, model=first, max_runs=3)
    assert len(first.calls) == 3 and len(partial) == 3
    store = ResultStore(tmp_path / "tiny")
    assert store.completed_keys() == {(0, 0), (0, 1), (1, 0)}
    parts = {p: p.stat().st_mtime_ns for p in store.part_paths()}

    second = CountingModel()
    table = run_experiment(tiny, results_dir=tmp_path, progress=False, model=second)
    seeds = replication_seeds(tiny.seed, 2)
    assert second.calls == [("wafer-distilled", seeds[1])]  # only the missing run
    assert {p: p.stat().st_mtime_ns for p in list(parts)} == parts  # stored parts untouched

    third = CountingModel()
    again = run_experiment(tiny, results_dir=tmp_path, progress=False, model=third)
    assert third.calls == []
    fresh = run_experiment(tiny, results_dir=None, progress=False)
    pd.testing.assert_frame_equal(table, fresh)
    pd.testing.assert_frame_equal(again, fresh)


def test_finished_runs_are_kept_when_a_run_fails(tiny: Experiment, tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="the model broke"):
        run_experiment(tiny, results_dir=tmp_path, progress=False, model=CountingModel(fail_after=2))
    assert ResultStore(tmp_path / "tiny").completed_keys() == {(0, 0), (0, 1)}
    resumed = CountingModel()
    run_experiment(tiny, results_dir=tmp_path, progress=False, model=resumed)
    assert [backend for backend, _ in resumed.calls] == ["wafer-distilled"] * 2


def test_a_changed_spec_is_refused_before_any_run(
    tiny: Experiment, make_tiny: Callable[..., Experiment], tmp_path: Path
) -> None:
    run_experiment(tiny, results_dir=tmp_path, progress=False)
    model = CountingModel()
    with pytest.raises(StoreMismatchError, match=r"changed: model\)"):  # more replications alone extend
        run_experiment(make_tiny(replications=3), results_dir=tmp_path, progress=False, model=model)
    with pytest.raises(StoreMismatchError, match=r"base_scenario\.developers"):
        run_experiment(
            make_tiny(scenario={"developers": 1, "horizon_s": 3600.0}), results_dir=tmp_path, progress=False
        )
    assert model.calls == []
    assert len(ResultStore(tmp_path / "tiny").read()) == 4  # nothing mixed in


def test_quick_results_are_stored_apart(tiny: Experiment, tmp_path: Path) -> None:
    run_experiment(tiny, results_dir=tmp_path, progress=False)
    quick = tiny.quick_variant()
    run_experiment(quick, results_dir=tmp_path, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny", "tiny-quick"]


def test_explicit_points_replace_the_design(tiny: Experiment, tmp_path: Path) -> None:
    points = pd.DataFrame({"backend": ["gpu-fast"]})
    table = run_experiment(tiny, results_dir=tmp_path, progress=False, points=points)
    assert table["backend"].tolist() == ["gpu-fast"] * 2
    with pytest.raises(StoreMismatchError, match=r"changed: points \(1 → 2 entries\)"):
        run_experiment(tiny, results_dir=tmp_path, progress=False)  # the spec's own design: refused
    with pytest.raises(StoreMismatchError, match=r"changed: points\.0\.backend\)"):
        run_experiment(
            tiny, results_dir=tmp_path, progress=False, points=points.replace("gpu-fast", "gpu-batched")
        )


def test_evaluate_runs_every_scenario_with_every_seed() -> None:
    scenarios = [Scenario(developers=1, horizon_s=1800.0), Scenario(developers=2, horizon_s=1800.0)]
    table = evaluate(scenarios, [5, 6], outcomes=["developers", "tasks_started"])
    assert table[["point", "replication", "seed", "developers"]].values.tolist() == [
        [0, 0, 5, 1.0],
        [0, 1, 6, 1.0],
        [1, 0, 5, 2.0],
        [1, 1, 6, 2.0],
    ]
    assert table["tasks_started"].iloc[2] == simulate_summary(scenarios[1], 5)["tasks_started"]


def test_common_random_numbers_make_paired_differences_tighter(make_tiny: Callable[..., Experiment]) -> None:
    spec = make_tiny(scenario={"developers": 2, "horizon_s": 14_400.0}, replications=12, seed=7)
    table = run_experiment(spec, results_dir=None, progress=False)
    base = table[table["backend"] == "gpu-batched"].set_index("seed")
    wafer = table[table["backend"] == "wafer-distilled"].set_index("seed")
    diffs = paired_differences(table, "backend", "gpu-batched").set_index("outcome")
    for outcome in ("tasks_per_dev_day", "waiting_share", "usd_total"):
        paired = (wafer[outcome] - base[outcome]).var(ddof=1)
        unpaired = wafer[outcome].var(ddof=1) + base[outcome].var(
            ddof=1
        )  # var of a difference of independent runs
        assert paired < unpaired, outcome
        assert diffs.loc[outcome, "std"] ** 2 == pytest.approx(paired)
        assert diffs.loc[outcome, "n"] == 12
    assert np.isfinite(diffs["ci_low"]).all()


def test_the_progress_bar_shows_in_a_terminal_and_in_jupyter_not_in_a_pipe() -> None:
    import io

    from rich.console import Console

    from speedtrap.experiments.runner import _progress

    jupyter = Console(file=io.StringIO(), force_jupyter=True, force_terminal=False)
    terminal = Console(file=io.StringIO(), force_terminal=True, force_jupyter=False)
    pipe = Console(file=io.StringIO(), force_terminal=False, force_jupyter=False)
    assert not _progress(True, jupyter).disable
    assert not _progress(True, terminal).disable
    assert _progress(True, pipe).disable
    assert _progress(False, terminal).disable
