"""`speedtrap sweep --replications/--set/--compare-to`: a finished sweep extends, only changes that
alter stored results are refused, and paired differences from a design point are printed."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from speedtrap.cli import app

runner = CliRunner()

TINY = """
name = "tiny-extend"
replications = 2
seed = 3
outcomes = ["tasks_per_dev_day", "waiting_share", "fixing_share", "usd_per_task"]
scenario = { developers = 1, horizon_s = 3600.0 }
[[factors]]
path = "backend"
values = ["gpu-batched", "wafer-distilled"]
"""


def _sweep(path: Path, results: Path, *extra: str) -> dict[str, object]:
    result = runner.invoke(app, ["sweep", str(path), "--results-dir", str(results), "--json", *extra])
    assert result.exit_code == 0, result.output
    payload: dict[str, object] = json.loads(result.stdout)
    return payload


def test_more_replications_reuse_the_stored_runs_and_fewer_read_a_subset(tmp_path: Path) -> None:
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY)
    first = _sweep(spec, tmp_path)
    assert first["runs"] == 4 and first["new_runs"] == 4
    more = _sweep(spec, tmp_path, "--replications", "3", "--compare-to", "0")
    assert more["runs"] == 6 and more["new_runs"] == 2 and more["replications"] == 3
    differences = more["differences"]
    assert isinstance(differences, list) and {d["point"] for d in differences} == {1}
    again = _sweep(spec, tmp_path)  # the file's 2 replications: the first two of the stored three
    assert again["runs"] == 4 and again["new_runs"] == 0
    assert json.loads((tmp_path / "tiny-extend" / "spec.json").read_text())["experiment"]["replications"] == 3


def test_a_change_that_alters_stored_results_is_refused_and_set_reaches_the_base_scenario(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY)
    _sweep(spec, tmp_path)
    result = runner.invoke(
        app, ["sweep", str(spec), "--results-dir", str(tmp_path), "--set", "scenario.developers=2"]
    )
    assert result.exit_code == 2 and "base_scenario.developers" in result.output
    other = _sweep(spec, tmp_path / "other", "--set", "scenario.developers=2", "--compare-to", "0")
    assert other["runs"] == 4
    result = runner.invoke(app, ["sweep", str(spec), "--results-dir", str(tmp_path), "--compare-to", "0"])
    assert result.exit_code == 0 and "Paired differences from point 0" in result.stdout
    result = runner.invoke(app, ["sweep", str(spec), "--results-dir", str(tmp_path), "--compare-to", "7"])
    assert result.exit_code == 2 and "no such design point" in result.output
