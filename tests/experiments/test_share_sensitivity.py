"""The sensitivity report of the headline shares: Sobol' indices through emulators of a known
function, read back from a calibration's outputs, the verdicts, the tables, and the errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from speedtrap.analysis.emulator import training_sample
from speedtrap.experiments.share_sensitivity import (
    CALIBRATE_COMMAND,
    TABLE_COLUMNS,
    load_calibration_runs,
    markdown_table,
    share_sensitivity,
)

PARAMETERS = pd.DataFrame(
    {
        "path": ["a", "b", "c", "d"],
        "low": [0.0, 1.0, 10.0, 0.0],
        "high": [1.0, 100.0, 20.0, 5.0],
        "scale": ["linear", "log", "linear", "linear"],
        "integer": [False, False, False, False],
        "source": ["test"] * 4,
    }
)
TARGETS = pd.DataFrame({"id": ["t_a", "t_d"], "statistic": ["stat_a", "stat_d"]})

# The known function, additive in the unit coordinates (b log-uniform: linear in log b), so
# S1 = ST = each term's variance share: waiting 0.2²/(0.2² + 0.15²) = 0.64 on a, 0.36 on b;
# fixing all on c; the target statistics on a and d alone.
TRUE = {
    "waiting": {"a": 0.64, "b": 0.36, "c": 0.0, "d": 0.0},
    "fixing": {"a": 0.0, "b": 0.0, "c": 1.0, "d": 0.0},
}
TOLERANCE = 0.05
"""Absolute error allowed on every index (fixed before the first run: 64 runs of an additive
function, N = 1024)."""


def write_outputs(directory: Path, points: int = 64, *, shares: bool = True) -> Path:
    """A calibration's outputs (wave1.csv and parameters.csv) whose outputs are the known function."""
    u = training_sample(points, 4, seed=3)
    frame = pd.DataFrame(
        {
            "point": np.arange(points),
            "a": u[:, 0],
            "b": 100.0 ** u[:, 1],
            "c": 10.0 + 10.0 * u[:, 2],
            "d": 5.0 * u[:, 3],
            "stat_a": 5.0 * u[:, 0],
            "stat_d": 2.0 * u[:, 3],
        }
    )
    if shares:
        frame["headline_waiting_share"] = 0.3 + 0.2 * u[:, 0] + 0.15 * u[:, 1]
        frame["headline_fixing_share"] = 0.1 + 0.1 * u[:, 2]
    directory.mkdir(parents=True, exist_ok=True)
    frame.to_csv(directory / "wave1.csv", index=False)
    PARAMETERS.to_csv(directory / "parameters.csv", index=False)
    return directory


def test_indices_of_a_known_function_and_the_verdicts(tmp_path: Path) -> None:
    runs = load_calibration_runs(write_outputs(tmp_path / "calibration"))
    assert runs.unit.shape == (64, 4) and runs.waves == (1,)
    assert np.allclose(runs.unit, training_sample(64, 4, seed=3))  # values mapped back to the cube
    result = share_sensitivity(runs, n=1024, bootstrap=10, seed=1, targets=TARGETS)
    table = result.table.set_index("parameter")
    for share, truth in TRUE.items():
        for parameter, value in truth.items():
            for key in ("S1", "ST"):
                estimate = table.loc[parameter, f"{share}:{key}"]
                assert abs(estimate - value) <= TOLERANCE, (share, parameter, key, estimate)
                assert (
                    table.loc[parameter, f"{share}:{key}_low"] <= table.loc[parameter, f"{share}:{key}_high"]
                )
    assert table.loc["a", "fitted_to"] == "t_a" and table.loc["d", "fitted_to"] == "t_d"
    assert list(table.index[table["flag"]]) == ["c", "b"]  # dominant, and no target moves them
    assert result.flagged == ["c", "b"] and not bool(table.loc["d", "dominant"])
    emulators = result.emulators.set_index("output")
    assert (emulators["q2"] > 0.99).all() and (emulators["n_train"] == 64).all()
    assert set(result.indices["output"]) == {"waiting", "fixing", "t_a", "t_d"}
    assert result.warnings == []
    text = markdown_table(result)
    lines = text.splitlines()
    assert lines[2] == "| " + " | ".join(TABLE_COLUMNS) + " |"
    assert sum(line.startswith("| ") for line in lines) == 1 + 4  # header and one row per parameter
    assert "N = 1024 Saltelli base samples, 10 bootstrap refits" in lines[0]
    assert "**unfitted, ST > 0.20**" in text and "Unfitted with ST > 0.20 on a share: c, b." in text


def test_a_poor_emulator_is_warned_about(tmp_path: Path) -> None:
    directory = write_outputs(tmp_path / "calibration", points=16)
    frame = pd.read_csv(directory / "wave1.csv")
    frame["headline_fixing_share"] = np.random.default_rng(0).random(16)  # noise alone
    frame.to_csv(directory / "wave1.csv", index=False)
    result = share_sensitivity(load_calibration_runs(directory), n=64, bootstrap=2, targets=TARGETS)
    assert any(
        note.startswith("the fixing share's emulator predicts left-out runs") for note in result.warnings
    )


def test_missing_or_old_or_foreign_runs_are_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=CALIBRATE_COMMAND):
        load_calibration_runs(tmp_path / "nowhere")
    old = write_outputs(tmp_path / "old", shares=False)
    with pytest.raises(ValueError, match="no headline_waiting_share column"):
        load_calibration_runs(old)
    foreign = write_outputs(tmp_path / "foreign")
    PARAMETERS.assign(high=[1.0, 10.0, 20.0, 5.0]).to_csv(foreign / "parameters.csv", index=False)
    with pytest.raises(ValueError, match="values of 'b' outside its range"):
        load_calibration_runs(foreign)
