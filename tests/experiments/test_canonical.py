"""The canonical experiments: each `--quick` run writes its runs, tables and figures and prints a
finding with numbers, through the script and through `speedtrap experiment`."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from speedtrap.cli import app
from speedtrap.experiments.canonical import CANONICAL, EXPERIMENTS_DIR, experiment_file, load_spec

runner = CliRunner()

FILES: dict[str, tuple[str, ...]] = {
    "headline": ("summary.csv", "paired.csv", "ledger.png", "ledger.svg", "outcomes.png", "outcomes.svg"),
    "fast_mode_externality": ("summary.csv", "externality.png", "externality.svg"),
    "break_even": ("relative.csv", "analytic.csv", "break_even.png", "break_even.svg"),
}


def written(out: Path, name: str) -> None:
    assert (out / "spec.json").is_file()
    assert list((out / "runs").glob("*.parquet"))
    for file in FILES[name]:
        assert (out / file).stat().st_size > 0, file


@pytest.mark.parametrize("name", [n for n in CANONICAL if n in FILES])
def test_quick_script_writes_its_files_and_a_finding(name: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(EXPERIMENTS_DIR / f"{name}.py"), "--quick", "--results-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    written(tmp_path / f"{name}-quick", name)
    assert "Wrote" in done.stdout


def test_headline_finding_reports_every_backend_against_the_baseline(tmp_path: Path) -> None:
    result = runner.invoke(app, ["experiment", "headline", "--quick", "--results-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    written(tmp_path / "headline-quick", "headline")
    assert "gpu-fast: " in result.stdout and "wafer-distilled: " in result.stdout
    paired = pd.read_csv(tmp_path / "headline-quick" / "paired.csv")
    assert set(paired["backend"]) == {"gpu-fast", "wafer-distilled", "manual"}
    spec = load_spec("headline", quick=True)
    assert (paired["n"] == spec.replications).all()  # every pair matched by seed
    economics = pd.read_csv(tmp_path / "headline-quick" / "economics.csv")
    assert list(economics["arm"]) == ["gpu-fast", "wafer-distilled"]  # not the no-AI arm
    assert "per developer-hour: net" in result.stdout and "× its price" in result.stdout


def test_every_canonical_experiment_has_a_file_and_a_script() -> None:
    for name in CANONICAL:
        assert experiment_file(name).is_file()
        assert (EXPERIMENTS_DIR / f"{name}.py").is_file()
        assert load_spec(name).name == name


def test_unknown_experiment_is_one_line_exit_2() -> None:
    result = runner.invoke(app, ["experiment", "speed_of_light"])
    assert result.exit_code == 2
    assert "unknown experiment 'speed_of_light'" in result.stderr


def test_fleet_outcomes_split_tiers_groups_and_provider() -> None:
    from speedtrap.experiments.canonical.fast_mode_externality import fleet_outcomes

    spec = load_spec("fast_mode_externality", quick=True)
    scenario = spec.scenario.with_overrides({"policy.share": 0.5, "horizon_s": 3600.0})
    out = fleet_outcomes(scenario, 1)
    result_cost = out["revenue_usd_per_gpu_hour"]
    assert out["fast_decode_tok_s"] > 0 and out["standard_decode_tok_s"] > 0
    assert out["fast_tasks_per_dev_day"] >= 0 and out["standard_tasks_per_dev_day"] >= 0
    assert result_cost > 0 and out["provider_tok_s_per_gpu"] > 0
    none = fleet_outcomes(scenario.with_overrides({"policy.share": 0.0}), 1)
    assert math.isnan(none["fast_ttft_s"]) and math.isnan(none["fast_tasks_per_dev_day"])
    # fast mode is billed at 6x: the same work earns more per GPU-hour when half the team buys it
    assert result_cost > none["revenue_usd_per_gpu_hour"]


def test_fleet_outcomes_needs_a_fast_share_policy() -> None:
    from speedtrap.config import Scenario
    from speedtrap.experiments.canonical.fast_mode_externality import fleet_outcomes

    with pytest.raises(ValueError, match="fast_share"):
        fleet_outcomes(Scenario(developers=1, horizon_s=600.0), 1)


def test_break_even_relative_values_are_paired_ratios_to_the_reference() -> None:
    from speedtrap.experiments.canonical.break_even import relative_table, simulated_break_even

    spec = load_spec("break_even", quick=True)
    speed, mult = spec.factor_paths
    table = pd.DataFrame(
        {
            "seed": [1, 2, 1, 2, 1, 2],
            speed: [1.0, 1.0, 6.0, 6.0, 6.0, 6.0],
            mult: [1.0, 1.0, 1.0, 1.0, 2.0, 2.0],
            "tasks_per_dev_day": [10.0, 20.0, 12.0, 24.0, 9.0, 18.0],
            "usd_per_task": [4.0, 4.0, 4.0, 4.0, 5.0, 5.0],
        }
    )
    rel = relative_table(table, spec).set_index(["speedup", "failure_multiplier", "metric"])
    assert rel.loc[(6.0, 1.0, "tasks_per_dev_day"), "relative"] == pytest.approx(1.2)
    assert rel.loc[(6.0, 1.0, "tasks_per_dev_day"), "ci_high"] == pytest.approx(1.2)  # identical ratios
    assert rel.loc[(6.0, 2.0, "usd_per_task"), "relative"] == pytest.approx(1.25)
    crossing = simulated_break_even(relative_table(table, spec), "tasks_per_dev_day").set_index("speedup")
    # 1.2 at m = 1, 0.9 at m = 2: crosses 1 two thirds of the way
    assert crossing.loc[6.0, "m_star_simulated"] == pytest.approx(1.0 + 2.0 / 3.0)


def test_a_script_refuses_an_unknown_executor_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from speedtrap.experiments.canonical import main

    assert main("headline", ["--executor", "threads"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "error: --executor: unknown executor 'threads' (known: serial, processes, dask)"
