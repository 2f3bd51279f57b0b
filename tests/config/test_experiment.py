"""Experiment specs: TOML loading with relative scenario paths, quick variants, and validation
errors that name the offending field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from speedtrap.config import Scenario
from speedtrap.config.experiment import Experiment, flatten_overrides

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "experiments" / "sweeps" / "patience.toml"
HEADLINE = ROOT / "experiments" / "scenarios" / "headline.toml"

BASE: dict[str, Any] = {
    "name": "e",
    "scenario": {"developers": 2, "horizon_s": 3600.0},
    "factors": [
        {"path": "developer.attention.flow_threshold_s", "values": [1.0, 10.0]},
        {"path": "backend", "values": ["gpu-batched", "gpu-fast"]},
    ],
    "replications": 2,
}


def with_changes(**changes: Any) -> dict[str, Any]:
    return {**BASE, **changes}


def test_example_file_loads_with_its_scenario_relative_to_the_file() -> None:
    spec = Experiment.from_toml(EXAMPLE)
    assert spec.name == "patience"
    assert spec.base_scenario == Scenario.from_toml(HEADLINE)
    assert spec.factor_paths == ["developer.attention.patience_s.median", "backend"]
    assert spec.design.kind == "full_factorial"


def test_quick_variant_reduces_and_renames() -> None:
    spec = Experiment.from_toml(EXAMPLE)
    quick = spec.quick_variant()
    assert quick.name == "patience-quick"  # stored apart: results/patience-quick/
    assert quick.quick is None
    assert quick.replications == spec.quick.replications == 2
    assert (quick.scenario.developers, quick.scenario.horizon_s) == (2, 28_800.0)
    assert quick.scenario.task_mix == spec.scenario.task_mix  # everything else is the base's
    assert quick.factors == spec.factors


def test_quick_points_and_nested_scenario_tables(tmp_path: Path) -> None:
    path = tmp_path / "e.toml"
    path.write_text(
        'name = "s"\nscenario = { developers = 3 }\n'
        '[design]\nkind = "sobol"\npoints = 16\n'
        '[[factors]]\npath = "developer.review.detect_prob"\nrange = [0.2, 0.8]\n'
        "[quick]\npoints = 4\n[quick.scenario.developer.attention]\nflow_threshold_s = 5.0\n"
    )
    quick = Experiment.from_toml(path).quick_variant()
    assert quick.design.points == 4
    assert quick.scenario.developer.attention.flow_threshold_s == 5.0
    assert quick.scenario.developers == 3


def test_quick_values_replace_the_levels_of_a_factor() -> None:
    spec = Experiment.model_validate(
        with_changes(quick={"values": {"developer.attention.flow_threshold_s": [5.0]}})
    )
    quick = spec.quick_variant()
    assert quick.factors[0].values == [5.0]
    assert quick.factors[1] == spec.factors[1]


def test_quick_values_must_name_a_factor() -> None:
    spec = Experiment.model_validate(with_changes(quick={"values": {"developers": [1]}}))
    with pytest.raises(ValueError, match=r"quick\.values\.developers: not a factor"):
        spec.quick_variant()


def test_flatten_overrides_keeps_policy_tables_whole() -> None:
    table = {"developer": {"attention": {"flow_threshold_s": 5.0}}, "policy": {"kind": "always"}}
    assert flatten_overrides(table) == {
        "developer.attention.flow_threshold_s": 5.0,
        "policy": {"kind": "always"},
    }


def test_scenario_path_errors(tmp_path: Path) -> None:
    path = tmp_path / "e.toml"
    path.write_text('name = "x"\nscenario = "missing.toml"\n')
    with pytest.raises(ValidationError, match=r"scenario\n.*scenario file .*missing\.toml: no such file"):
        Experiment.from_toml(path)
    path.write_text('name = "x"\nscenario = { developers = 0 }\n')
    with pytest.raises(ValidationError, match=r"scenario\.developers\n"):
        Experiment.from_toml(path)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {
                "factors": [
                    {"path": "developers", "values": [1]},
                    {"path": "developer.atention", "values": [1]},
                ]
            },
            r"factors\.1\.path: unknown scenario field 'developer\.atention' \(developer has: attention",
        ),
        (
            {"factors": [{"path": "backends.gpu-fst.replicas", "values": [2]}]},
            r"factors\.0\.path: unknown scenario field 'backends\.gpu-fst\.replicas' "
            r"\(backends has: gpu-batched\)",
        ),
        (
            {"factors": [{"path": "developers.count", "values": [2]}]},
            r"factors\.0\.path: unknown scenario field 'developers\.count': developers is not a table",
        ),
        (
            {"factors": [{"path": "developer.review.detect_prob", "values": [0.5, 1.5]}]},
            r"factors\.0\.values\.1: developer\.review\.detect_prob: Input should be less than or equal to 1",
        ),
        (
            {"factors": [{"path": "backend", "values": ["gpu-batched", "tpu"]}]},
            r"factors\.0\.values\.1: backend 'tpu' is neither a backend of this scenario",
        ),
        (
            {"factors": [{"path": "developers", "range": [0, 4], "levels": 2, "integer": True}]},
            r"factors\.0\.range\.0: developers: Input should be greater than or equal to 1",
        ),
        (
            {"factors": [{"path": "developers", "values": [1], "range": [1, 2]}]},
            r"factors\.0\n.*give exactly one of values, range or choices \(got: values, range\)",
        ),
        ({"factors": [{"path": "developers", "range": [3, 1]}]}, r"factors\.0\n.*low < high"),
        (
            {"factors": [{"path": "developers", "values": [1], "log": True}]},
            r"factors\.0\n.*log applies to a range",
        ),
        ({"factors": [{"path": "developers", "values": [1, 1]}]}, r"factors\.0\n.*values repeat a level"),
        (
            {"factors": [{"path": "developers", "range": [1, 4]}]},
            r"factors\.0\.levels: a range in a full_factorial design needs levels",
        ),
        (
            {"factors": [{"path": "developers", "values": [1]}, {"path": "developers", "values": [2]}]},
            r"factors\.1\.path: 'developers' is already a factor",
        ),
        ({"factors": [{"path": "seed", "values": [1]}]}, r"factors\.0\.path: 'seed' names a results column"),
        (
            {"design": {"kind": "sobol", "points": 10}},
            r"design\.points\n.*power of 2, got 10 \(use 8 or 16\)",
        ),
        ({"design": {"kind": "lhs"}}, r"design\.points\n.*a lhs design needs a number of points"),
        ({"design": {"kind": "full_factorial", "points": 4}}, r"design\.points\n.*remove points"),
        ({"design": {"kind": "grid"}}, r"design\.kind\n"),
        ({"replications": 0}, r"replications\n"),
        ({"name": "a/b"}, r"name\n"),
        (
            {"outcomes": ["tasks_per_dev_day", "tasks_per_day"]},
            r"outcomes\.1: unknown outcome 'tasks_per_day' \(known: developers,",
        ),
        ({"outcomes": ["waiting_share", "waiting_share"]}, r"outcomes\.1: 'waiting_share' is listed twice"),
        (
            {"factors": [{"path": "developers", "values": [1, 2]}], "outcomes": ["developers"]},
            r"outcomes\.0: 'developers' is also a factor column",
        ),
        (
            {"quick": {"scenario": {"developer": {"atention": 1}}}},
            r"quick\.scenario: unknown scenario field 'developer\.atention'",
        ),
        ({"quick": {"scenario": {"developers": 0}}}, r"quick\.scenario: developers: Input should be greater"),
        ({"quick": {"points": 4}}, r"quick\.points: a full_factorial design takes every combination"),
        ({"quick": {"replication": 2}}, r"quick\.replication\n.*Extra inputs are not permitted"),
        ({"factor": []}, r"factor\n.*Extra inputs are not permitted"),
    ],
)
def test_validation_errors_name_the_field(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Experiment.model_validate(with_changes(**changes))


def test_sobol_quick_points_must_be_a_power_of_two() -> None:
    data = with_changes(
        factors=[{"path": "developer.review.detect_prob", "range": [0.2, 0.8]}],
        design={"kind": "sobol", "points": 8},
        quick={"points": 3},
    )
    with pytest.raises(ValidationError, match=r"quick\.points: a sobol design needs a power of 2, got 3"):
        Experiment.model_validate(data)


def test_spec_round_trips_through_json() -> None:
    spec = Experiment.from_toml(EXAMPLE)
    assert Experiment.model_validate_json(spec.model_dump_json()) == spec
