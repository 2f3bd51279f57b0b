"""``speedtrap validate workflow --sensitivity``: its errors in one line, its JSON, CSV and Markdown
from a constructed calibration directory, and the quick path end to end (slow)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from speedtrap.cli import app
from speedtrap.experiments.share_sensitivity import load_calibration_runs, markdown_table, share_sensitivity
from speedtrap.validation.parameters import load_parameters

runner = CliRunner()
SMALL = ["--sobol-n", "64", "--bootstrap", "2"]


def fails_naming(args: list[str], *needles: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1, result.output
    for needle in needles:
        assert needle in result.output, result.output


def calibration_dir(directory: Path, points: int = 12) -> Path:
    """wave1.csv and parameters.csv of two parameters: waiting moves with x, fixing with y."""
    u = np.random.default_rng(5).random((points, 2))
    directory.mkdir(parents=True)
    pd.DataFrame(
        {"path": ["x", "y"], "low": [0.0, 1.0], "high": [1.0, 3.0], "scale": ["linear", "linear"]}
        | {"integer": [False, False], "source": ["test", "test"]}
    ).to_csv(directory / "parameters.csv", index=False)
    pd.DataFrame(
        {
            "point": np.arange(points),
            "x": u[:, 0],
            "y": 1.0 + 2.0 * u[:, 1],
            "headline_waiting_share": 0.2 + 0.1 * u[:, 0] + 0.01 * u[:, 1],
            "headline_fixing_share": 0.1 + 0.05 * u[:, 1],
            "agent_stretch_median": 30.0 + 20.0 * u[:, 0],
        }
    ).to_csv(directory / "wave1.csv", index=False)
    return directory


def test_errors_are_one_line_naming_what_to_do(tmp_path: Path) -> None:
    fails_naming(
        ["validate", "workflow", "--sensitivity", "--calibration", str(tmp_path / "none")],
        "no calibration runs in",
        "python experiments/calibrate.py",
    )
    fails_naming(["validate", "workflow", "--markdown"], "--markdown needs --sensitivity")
    fails_naming(
        ["validate", "workflow", "--calibration", str(tmp_path)], "--calibration needs --sensitivity"
    )
    fails_naming(
        ["validate", "workflow", "--sensitivity", "--sobol-n", "100"], "--sobol-n must be a power of two"
    )
    fails_naming(
        ["validate", "workflow", "--sensitivity", "--quick", "--calibration", str(tmp_path)],
        "--quick runs its own design",
    )
    old = calibration_dir(tmp_path / "old")
    pd.read_csv(old / "wave1.csv").drop(columns="headline_fixing_share").to_csv(
        old / "wave1.csv", index=False
    )
    fails_naming(
        ["validate", "workflow", "--sensitivity", "--calibration", str(old)],
        "no headline_fixing_share column",
        "rerun `python experiments/calibrate.py`",
    )


def test_json_csv_and_markdown_from_stored_runs(tmp_path: Path) -> None:
    directory = calibration_dir(tmp_path / "calibration")
    out = tmp_path / "table.csv"
    args = ["validate", "workflow", "--sensitivity", "--calibration", str(directory), *SMALL]
    result = runner.invoke(app, [*args, "--json", "--csv", str(out)])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["n"] == 64 and payload["bootstrap"] == 2 and payload["waves"] == [1]
    assert payload["thresholds"] == {"dominance": 0.2, "fit": 0.1, "target_q2": 0.5}
    rows = {row["parameter"]: row for row in payload["parameters"]}
    assert rows["x"]["waiting:ST"] > 0.9 and rows["y"]["fixing:ST"] > 0.9
    assert [e["output"] for e in payload["emulators"]] == ["waiting", "fixing", "stretch_median_s"]
    assert payload["flagged"] == [p for p in ("x", "y") if not rows[p]["fitted"]]
    assert rows["x"]["fitted_to"] == "stretch_median_s" and rows["y"]["fitted_to"] == ""
    assert list(pd.read_csv(out)["parameter"]) == [row["parameter"] for row in payload["parameters"]]
    markdown = runner.invoke(app, [*args, "--markdown"])
    assert markdown.exit_code == 0, markdown.output
    expected = share_sensitivity(load_calibration_runs(directory), n=64, bootstrap=2)
    assert markdown.output == markdown_table(expected)  # what the README's table is compared with
    table = runner.invoke(app, args)
    assert table.exit_code == 0 and "Sensitivity of the headline shares" in table.output


@pytest.mark.slow
def test_quick_path_runs_its_own_design(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "validate",
            "workflow",
            "--sensitivity",
            "--quick",
            "--results-dir",
            str(tmp_path),
            "--json",
            *SMALL,
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert len(payload["parameters"]) == len(load_parameters()) and payload["emulators"][0]["n_train"] == 8
    assert (tmp_path / "calibration-quick" / "wave1-design.csv").exists()
