"""`speedtrap sweep`: runs and resumes an experiment file, prints means ± CI, bad input exits 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from speedtrap.cli import app

runner = CliRunner()
EXAMPLE = Path(__file__).resolve().parents[2] / "experiments" / "sweeps" / "patience.toml"

TINY = """
name = "tiny"
replications = 2
seed = 3
outcomes = ["tasks_per_dev_day", "waiting_share", "fixing_share", "usd_per_task"]
scenario = { developers = 1, horizon_s = 3600.0 }
[[factors]]
path = "backend"
values = ["gpu-batched", "wafer-distilled"]
"""


def test_quick_example_writes_results_and_resumes(tmp_path: Path) -> None:
    args = ["sweep", str(EXAMPLE), "--quick", "--results-dir", str(tmp_path)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    store = tmp_path / "patience-quick"
    assert (store / "spec.json").is_file() and list((store / "runs").glob("part-*.parquet"))
    for text in ("tasks per dev-day", "waiting (% of time)", "$ per task (USD)", "wafer-distilled", " ± "):
        assert text in result.stdout
    assert f"Results: {store}/ (18 runs, 18 new" in result.stdout  # 3 thresholds × 3 backends × 2
    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    assert "(18 runs, 0 new" in again.stdout
    assert not (tmp_path / "patience").exists()  # quick results are kept apart


def test_json_summary(tmp_path: Path) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    result = runner.invoke(app, ["sweep", str(path), "--results-dir", str(tmp_path / "r"), "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert (payload["schema_version"], payload["experiment"], payload["runs"], payload["new_runs"]) == (
        1,
        "tiny",
        4,
        4,
    )
    assert payload["factors"] == ["backend"] and payload["results_dir"] == str(tmp_path / "r" / "tiny")
    records = payload["summary"]
    assert len(records) == 2 * 4
    assert {r["backend"] for r in records} == {"gpu-batched", "wafer-distilled"}
    assert all(r["n"] == 2 and r["ci_low"] <= r["mean"] <= r["ci_high"] for r in records if r["n"] == 2)


@pytest.mark.parametrize(
    ("text", "args", "message"),
    [
        (None, [], "no such experiment file"),
        ("name = [", [], "not valid TOML"),
        (TINY.replace('"backend"', '"developer.atention"'), [], "factors.0.path: unknown scenario field"),
        (TINY.replace("replications = 2", "replications = 0"), [], "replications: Input should be greater"),
        (TINY, ["--executor", "threads"], "unknown executor 'threads'"),
        (TINY, ["--scheduler", "tcp://127.0.0.1:1"], "a scheduler address needs the dask executor"),
    ],
)
def test_bad_input_is_one_line_with_exit_code_2(
    tmp_path: Path, text: str | None, args: list[str], message: str
) -> None:
    path = tmp_path / "e.toml"
    if text is not None:
        path.write_text(text)
    result = runner.invoke(app, ["sweep", str(path), "--results-dir", str(tmp_path / "r"), *args])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: ")
    assert message in result.stderr
    assert not (tmp_path / "r").exists()


def test_a_changed_spec_under_the_same_name_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "e.toml"
    path.write_text(TINY)
    results = ["--results-dir", str(tmp_path / "r")]
    assert runner.invoke(app, ["sweep", str(path), *results]).exit_code == 0
    path.write_text(TINY.replace("seed = 3", "seed = 4"))
    result = runner.invoke(app, ["sweep", str(path), *results])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert (
        "holds results of a different experiment spec (changed: experiment.seed, seeds.0, seeds.1)"
        in result.stderr
    )
