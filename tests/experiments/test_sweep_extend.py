"""`speedtrap sweep --replications/--set/--compare-to`: a finished sweep extends with more
replications or new design points (runs are matched by factor values and seed), only changes that
alter stored results are refused, and paired differences from a design point are printed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from speedtrap.cli import app
from speedtrap.config import Scenario
from speedtrap.config.experiment import Experiment
from speedtrap.experiments import ResultStore, StoreMismatchError, run_experiment
from speedtrap.experiments.identity import point_key
from speedtrap.experiments.store import STORE_FORMAT

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


THREE = TINY.replace(
    'values = ["gpu-batched", "wafer-distilled"]', 'values = ["gpu-batched", "wafer-distilled", "gpu-fast"]'
)


def _by_backend(payload: dict[str, object]) -> dict[tuple[str, str], dict[str, object]]:
    summary = payload["summary"]
    assert isinstance(summary, list)
    return {(record["backend"], record["outcome"]): record for record in summary}


def test_a_new_value_runs_only_its_point_and_keeps_the_stored_rows(tmp_path: Path) -> None:
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY)
    first = _sweep(spec, tmp_path)
    store = ResultStore(tmp_path / "tiny-extend")
    before = store.read()
    parts = {p: p.stat().st_mtime_ns for p in store.part_paths()}
    spec.write_text(THREE)
    more = _sweep(spec, tmp_path)
    assert more["runs"] == 6 and more["new_runs"] == 2
    after = store.read()
    assert set(after["point"]) == {0, 1, 2} and (after["point"] == 2).sum() == 2
    pd.testing.assert_frame_equal(after[after["point"] < 2].reset_index(drop=True), before)
    assert {p: p.stat().st_mtime_ns for p in parts} == parts  # stored part files untouched
    old, new = _by_backend(first), _by_backend(more)
    assert {key: new[key] for key in old} == old  # the reused points' summaries are the stored ones
    assert {backend for backend, _ in new} == {"gpu-batched", "wafer-distilled", "gpu-fast"}
    recorded = json.loads((tmp_path / "tiny-extend" / "spec.json").read_text())
    assert recorded["format"] == STORE_FORMAT and recorded["run_key"] == ["factor values", "seed"]
    assert [(p["point"], p["backend"]) for p in recorded["points"]] == [
        (0, "gpu-batched"),
        (1, "wafer-distilled"),
        (2, "gpu-fast"),
    ]


def _values(*backends: str) -> str:
    return TINY.replace('["gpu-batched", "wafer-distilled"]', json.dumps(list(backends)))


def test_reordered_or_fewer_values_compute_nothing_and_removed_points_stay_stored(tmp_path: Path) -> None:
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY)
    first = _by_backend(_sweep(spec, tmp_path))
    spec.write_text(_values("gpu-fast"))  # design point 0 now, but not stored
    fast = _sweep(spec, tmp_path)
    assert fast["runs"] == 2 and fast["new_runs"] == 2
    spec.write_text(_values("wafer-distilled", "gpu-fast", "gpu-batched"))
    reordered = _sweep(spec, tmp_path, "--compare-to", "2")
    assert reordered["runs"] == 6 and reordered["new_runs"] == 0
    assert _by_backend(reordered) == {**first, **_by_backend(fast)}
    differences = reordered["differences"]
    assert isinstance(differences, list) and {d["point"] for d in differences} == {0, 1}
    spec.write_text(_values("gpu-fast", "gpu-batched"))
    fewer = _sweep(spec, tmp_path)
    assert fewer["runs"] == 4 and fewer["new_runs"] == 0
    assert _by_backend(fewer) == {
        k: v for k, v in _by_backend(reordered).items() if k[0] != "wafer-distilled"
    }
    assert len(ResultStore(tmp_path / "tiny-extend").read()) == 6  # wafer-distilled's runs kept on disk


def test_a_changed_base_scenario_or_factor_set_is_refused_with_new_values(tmp_path: Path) -> None:
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY)
    _sweep(spec, tmp_path)
    spec.write_text(THREE.replace("developers = 1", "developers = 2"))
    result = runner.invoke(app, ["sweep", str(spec), "--results-dir", str(tmp_path)])
    assert result.exit_code == 2 and "changed: base_scenario.developers)" in result.stderr
    spec.write_text(THREE + '\n[[factors]]\npath = "developers"\nvalues = [1, 2]\n')
    result = runner.invoke(app, ["sweep", str(spec), "--results-dir", str(tmp_path)])
    assert result.exit_code == 2 and "changed: factor paths (backend → backend, developers)" in result.stderr
    assert len(ResultStore(tmp_path / "tiny-extend").read()) == 4  # nothing mixed in


def test_a_store_written_before_runs_were_matched_by_value_is_extended(tmp_path: Path) -> None:
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY)
    first = _by_backend(_sweep(spec, tmp_path))
    path = tmp_path / "tiny-extend" / "spec.json"
    record = json.loads(path.read_text())
    del record["points_fixed"], record["run_key"]  # the format-1 spec.json: points numbered by position
    path.write_text(json.dumps({**record, "format": 1}))
    spec.write_text(THREE)
    more = _sweep(spec, tmp_path)
    assert more["new_runs"] == 2 and {key: v for key, v in _by_backend(more).items() if key in first} == first
    assert json.loads(path.read_text())["format"] == STORE_FORMAT


def test_a_point_is_its_factor_values_with_numbers_compared_as_floats() -> None:
    assert point_key({"point": 0, "developers": 2, "backend": "a"}) == point_key(
        {"backend": "a", "developers": 2.0}
    )
    assert point_key({"developers": 2}) != point_key({"developers": 2.5})
    assert point_key({"flag": True}) != point_key({"flag": 1})
    assert point_key({"policy": '{"kind":"always"}'}) != point_key({"policy": '{"kind":"never"}'})


def _counting(
    spec: Experiment, results: Path, calls: list[int], points: pd.DataFrame | None = None
) -> pd.DataFrame:
    """``run_experiment`` with a cheap model that records the developers of every run it makes."""

    def model(scenario: Scenario, seed: int) -> dict[str, float]:
        calls.append(scenario.developers)
        return {"developers_run": float(scenario.developers), "seed_low": float(seed % 1000)}

    return run_experiment(spec, results_dir=results, progress=False, model=model, points=points)


def test_more_levels_of_a_range_run_only_the_new_levels(
    make_tiny: Callable[..., Experiment], tmp_path: Path
) -> None:
    def spec(levels: int) -> Experiment:
        factor = {"path": "developers", "range": [1, 3], "levels": levels, "integer": True}
        return make_tiny(factors=[factor], outcomes=None)

    calls: list[int] = []
    two = _counting(spec(2), tmp_path, calls)
    assert sorted(calls) == [1, 1, 3, 3]
    calls.clear()
    three = _counting(spec(3), tmp_path, calls)
    assert calls == [2, 2]  # only the new level
    assert three["developers"].tolist() == [1, 1, 2, 2, 3, 3]
    reused = three[three["developers"] != 2].drop(columns="point").reset_index(drop=True)
    pd.testing.assert_frame_equal(reused, two.drop(columns="point"))


def test_a_sampled_design_keeps_its_points_and_extends_only_in_replications(
    make_tiny: Callable[..., Experiment], tmp_path: Path
) -> None:
    def lhs(points: int, replications: int = 2) -> Experiment:
        factor = {"path": "developers", "range": [1, 4], "integer": True}
        design = {"kind": "lhs", "points": points, "seed": 1}
        return make_tiny(factors=[factor], design=design, replications=replications, outcomes=None)

    calls: list[int] = []
    _counting(lhs(3), tmp_path, calls)
    assert len(calls) == 6
    with pytest.raises(
        StoreMismatchError, match=r"changed: experiment\.design\.points, points \(3 → 4 entries\)"
    ):
        _counting(lhs(4), tmp_path, calls)
    calls.clear()
    table = _counting(lhs(3, replications=3), tmp_path, calls)
    assert len(calls) == 3 and len(table) == 9


def test_a_format_1_store_of_explicit_points_is_reused_as_it_was(
    make_tiny: Callable[..., Experiment], tmp_path: Path
) -> None:
    tiny = make_tiny(outcomes=None)
    points = pd.DataFrame({"backend": ["gpu-fast"]})
    calls: list[int] = []
    first = _counting(tiny, tmp_path, calls, points=points)
    path = tmp_path / "tiny" / "spec.json"
    record = json.loads(path.read_text())
    del record["points_fixed"], record["run_key"]
    path.write_text(json.dumps({**record, "format": 1}))
    calls.clear()
    again = _counting(tiny, tmp_path, calls, points=points)
    assert calls == [] and json.loads(path.read_text())["points_fixed"] is True
    pd.testing.assert_frame_equal(again, first)
