"""speedtrap.experiments.claim_gaps: the claims' gaps are the differences of the separate runs, on one
seed, and the emulated-Sobol' script studies them with --claims."""

from __future__ import annotations

import math
import runpy
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from speedtrap.config.scenario import NO_AI, Scenario
from speedtrap.experiments.claim_gaps import BACKENDS, CLAIM_OUTCOMES, claim_gaps
from speedtrap.models.workflow import simulate_summary

TINY: dict[str, Any] = {
    "name": "tiny-claims",
    "developers": 1,
    "horizon_s": 3600.0,
    "task_mix": {"effort_s": {"median": 600.0, "sigma": 0.5}},  # small tasks: several finish in an hour
    "backends": {"gpu-batched": "gpu-batched", "wafer-distilled": "wafer-distilled"},
    "policy": {"kind": "always", "backend": "gpu-batched"},
}


def test_the_gaps_are_the_differences_of_the_separate_runs_on_one_seed() -> None:
    scenario = Scenario.model_validate(TINY)
    gaps = claim_gaps(scenario, 17)
    runs = {short: simulate_summary(scenario.with_backend(name), 17) for short, name in BACKENDS.items()}
    manual = simulate_summary(scenario.with_backend(NO_AI), 17)
    assert gaps["manual_tasks_per_dev_day"] == manual["tasks_per_dev_day"]
    for short, summary in runs.items():
        assert gaps[f"{short}_tasks_per_dev_day"] == summary["tasks_per_dev_day"]
        np.testing.assert_equal(gaps[f"{short}_usd_per_task"], summary["usd_per_task"])  # NaN equals NaN
        assert (
            gaps[f"{short}_ai_gap_tasks_per_dev_day"]
            == summary["tasks_per_dev_day"] - manual["tasks_per_dev_day"]
        )
    for short in ("fast", "wafer"):
        assert gaps[f"{short}_gap_tasks_per_dev_day"] == (
            runs[short]["tasks_per_dev_day"] - runs["batched"]["tasks_per_dev_day"]
        )
    assert set(CLAIM_OUTCOMES) <= set(gaps)
    # gpu-fast is not in the scenario: it runs as its preset, at 6× the list price of gpu-batched
    assert runs["fast"]["usd_per_task"] > runs["batched"]["usd_per_task"]


def test_a_cost_per_task_without_a_completed_task_gives_a_nan_gap() -> None:
    nothing_finishes = {**TINY, "horizon_s": 60.0}  # a minute: no task completes on any backend
    gaps = claim_gaps(Scenario.model_validate(nothing_finishes), 3)
    assert gaps["batched_tasks_per_dev_day"] == 0.0
    assert math.isnan(gaps["fast_gap_usd_per_task"]) and math.isnan(gaps["wafer_gap_usd_per_task"])
    assert gaps["fast_gap_tasks_per_dev_day"] == 0.0


def test_the_emulated_sobol_script_studies_the_claims_gaps_at_quick_size(tmp_path: Path) -> None:
    script = Path(__file__).resolve().parents[2] / "experiments" / "emulated_sobol.py"
    module = runpy.run_path(str(script), run_name="emulated_sobol")  # defines main without running it
    with pytest.warns(RuntimeWarning, match="cannot mean much"):  # 16 runs of 8 inputs: a smoke run
        assert module["main"](["--quick", "--claims", "--results-dir", str(tmp_path)]) == 0
    out = tmp_path / "emulated-sobol-claims-quick"
    indices = pd.read_csv(out / "indices.csv")
    assert set(indices["outcome"]) == set(CLAIM_OUTCOMES) and set(indices["n_train"]) == {8, 16}
    assert len(indices) == len(CLAIM_OUTCOMES) * 2 * 8  # every outcome × size × input
    assert (out / "emulated_sobol.png").stat().st_size > 10_000
    stored = sorted(p.name for p in tmp_path.iterdir())
    assert any(name.startswith("claims-") and "-emulator-n16" in name for name in stored), stored
