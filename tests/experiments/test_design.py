"""Designs: full factorial counts, Latin hypercube and Sobol samples within their ranges,
deterministic for a seed, categorical choices, explicit points, and the scenario of each point."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from speedtrap.config.experiment import Experiment
from speedtrap.experiments import check_points, design_points, scenario_for

SCENARIO: dict[str, Any] = {"developers": 2, "horizon_s": 3600.0}


def experiment(factors: list[dict[str, Any]], **design: Any) -> Experiment:
    return Experiment(
        name="d", scenario=SCENARIO, factors=factors, design=design or {"kind": "full_factorial"}
    )


def test_full_factorial_is_every_combination_first_factor_slowest() -> None:
    spec = experiment(
        [
            {"path": "developer.attention.flow_threshold_s", "values": [1.0, 10.0, 60.0]},
            {"path": "backend", "values": ["gpu-batched", "gpu-fast"]},
            {"path": "developers", "range": [1, 4], "levels": 4, "integer": True},
        ]
    )
    points = design_points(spec)
    assert len(points) == 3 * 2 * 4
    assert list(points.columns) == ["point", "developer.attention.flow_threshold_s", "backend", "developers"]
    assert points["point"].tolist() == list(range(24))
    assert points["developer.attention.flow_threshold_s"].tolist()[:8] == [1.0] * 8
    assert points["backend"].tolist()[:8] == ["gpu-batched"] * 4 + ["gpu-fast"] * 4
    assert points["developers"].tolist()[:4] == [1, 2, 3, 4]
    assert not points.drop(columns="point").duplicated().any()


def test_range_levels_are_evenly_spaced_linear_or_log() -> None:
    spec = experiment(
        [
            {"path": "developer.attention.flow_threshold_s", "range": [1.0, 100.0], "levels": 3, "log": True},
            {"path": "developer.review.detect_prob", "range": [0.2, 0.8], "levels": 4},
        ]
    )
    points = design_points(spec)
    assert sorted(set(points["developer.attention.flow_threshold_s"])) == pytest.approx([1.0, 10.0, 100.0])
    assert sorted(set(points["developer.review.detect_prob"])) == pytest.approx([0.2, 0.4, 0.6, 0.8])


FACTORS: list[dict[str, Any]] = [
    {"path": "developer.attention.flow_threshold_s", "range": [1.0, 60.0]},
    {"path": "developer.review.detect_prob", "range": [0.3, 0.9]},
    {"path": "backends.gpu-batched.quality.failure_multiplier", "range": [1.0, 2.0], "log": True},
    {"path": "developers", "range": [1, 3], "integer": True},
    {"path": "backend", "choices": ["gpu-batched", "gpu-fast", "wafer-distilled"]},
]


@pytest.mark.parametrize("kind", ["lhs", "sobol"])
def test_sampled_designs_stay_in_range_and_are_deterministic(kind: str) -> None:
    spec = experiment(FACTORS, kind=kind, points=64, seed=5)
    points = design_points(spec)
    assert len(points) == 64
    pd.testing.assert_frame_equal(points, design_points(spec))
    other = design_points(experiment(FACTORS, kind=kind, points=64, seed=6))
    assert not points.equals(other)
    for factor in FACTORS:
        column = points[factor["path"]]
        if "range" in factor:
            low, high = factor["range"]
            assert column.between(low, high).all()
            assert column.max() - column.min() > 0.8 * (high - low)  # the sample spans its range
        else:
            assert set(column) == set(factor["choices"])  # every category is drawn
    assert set(points["developers"]) == {1, 2, 3}
    assert points["developers"].dtype == np.int64


def test_lhs_puts_one_point_in_each_stratum() -> None:
    spec = experiment([{"path": "developer.review.detect_prob", "range": [0.0, 1.0]}], kind="lhs", points=10)
    x = design_points(spec)["developer.review.detect_prob"].to_numpy()
    assert sorted(np.floor(x * 10).astype(int)) == list(range(10))


def test_log_range_is_uniform_in_log_space() -> None:
    spec = experiment(
        [{"path": "developer.attention.flow_threshold_s", "range": [1.0, 1000.0], "log": True}],
        kind="lhs",
        points=30,
    )
    x = design_points(spec)["developer.attention.flow_threshold_s"].to_numpy()
    assert sorted(np.floor(np.log10(x) * 10).astype(int)) == list(range(30))  # one per log stratum


def test_categorical_choices_split_the_unit_interval_evenly() -> None:
    spec = experiment([{"path": "backend", "choices": ["gpu-batched", "gpu-fast"]}], kind="sobol", points=16)
    counts = design_points(spec)["backend"].value_counts()
    assert counts.to_dict() == {"gpu-batched": 8, "gpu-fast": 8}  # a balanced Sobol sample


def test_scenario_for_applies_dotted_paths_and_the_backend_last() -> None:
    spec = experiment(
        [
            {"path": "backends.gpu-batched.quality.failure_multiplier", "values": [1.5]},
            {"path": "backend", "values": ["gpu-batched", "wafer-distilled"]},
            {"path": "developer.attention.flow_threshold_s", "values": [30.0]},
        ]
    )
    points = design_points(spec).to_dict("records")
    first, second = (scenario_for(spec, row) for row in points)
    assert list(first.backends) == ["gpu-batched"]
    assert first.backends["gpu-batched"].quality.failure_multiplier == 1.5  # kept by with_backend
    assert first.policy.kind == "always"
    assert list(second.backends) == ["wafer-distilled"]
    assert second.developer.attention.flow_threshold_s == 30.0
    assert second.developers == spec.scenario.developers


def test_policy_tables_appear_as_json_labels() -> None:
    spec = Experiment(
        name="policies",
        scenario={
            **SCENARIO,
            "backends": {"gpu": "gpu-batched", "wafer": "wafer-distilled"},
            "policy": {"kind": "always", "backend": "gpu"},
        },
        factors=[
            {
                "path": "policy",
                "values": [
                    {"kind": "always", "backend": "gpu"},
                    {"kind": "escalate", "first": "wafer", "then": "gpu"},
                ],
            }
        ],
    )
    points = design_points(spec)
    assert points["policy"].tolist() == [
        '{"backend":"gpu","kind":"always"}',
        '{"first":"wafer","kind":"escalate","then":"gpu"}',
    ]
    assert [scenario_for(spec, row).policy.kind for row in points.to_dict("records")] == [
        "always",
        "escalate",
    ]


def test_no_factors_is_one_point() -> None:
    spec = Experiment(name="base", scenario=SCENARIO)
    points = design_points(spec)
    assert points.to_dict("records") == [{"point": 0}]
    assert scenario_for(spec, points.iloc[0]) == spec.scenario


def test_explicit_points_are_checked_and_numbered() -> None:
    spec = experiment(FACTORS[:2], kind="lhs", points=4)
    given = pd.DataFrame(
        {"developer.attention.flow_threshold_s": [2.0, 3.0], "developer.review.detect_prob": [0.5, 0.6]}
    )
    points = check_points(spec, given)
    assert points["point"].tolist() == [0, 1]
    assert math.isclose(scenario_for(spec, points.iloc[1]).developer.review.detect_prob, 0.6)
    with pytest.raises(ValueError, match=r"missing: developer\.review\.detect_prob; unknown: nope"):
        check_points(spec, given.drop(columns="developer.review.detect_prob").assign(nope=1))
    with pytest.raises(ValueError, match="repeats a point number"):
        check_points(spec, given.assign(point=[3, 3]))
