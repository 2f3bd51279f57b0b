"""Scenario specs: defaults, TOML loading, backend references, overrides, field-named errors."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from pydantic import ValidationError

from speedtrap.config import WORKDAY_S, Scenario, backend_preset
from speedtrap.policies import AlwaysSpec, EscalateSpec

HEADLINE = Path(__file__).resolve().parents[2] / "experiments" / "scenarios" / "headline.toml"


def test_default_scenario_is_valid_and_documented() -> None:
    s = Scenario()
    assert list(s.backends) == ["gpu-batched"]
    assert s.backends["gpu-batched"] == backend_preset("gpu-batched")
    assert isinstance(s.policy, AlwaysSpec)
    assert s.horizon_s == 5 * WORKDAY_S == 144_000.0
    assert s.developer_days == 100.0


def test_headline_file_loads() -> None:
    s = Scenario.from_toml(HEADLINE)
    assert (s.name, s.developers, s.horizon_s) == ("headline", 10, 576_000.0)
    assert s.developer_days == 200.0
    assert s.backends["gpu-batched"].name == "gpu-batched"
    assert s.developer.fixing.hand_fix_s.mean == pytest.approx(900.0, rel=1e-3)  # METR: ≈15 min


def test_backend_refs_preset_preset_with_overrides_and_full_spec() -> None:
    full = backend_preset("gpu-fast").with_overrides({"replicas": 2}).model_dump()
    s = Scenario(
        backends={
            "gpu": "gpu-batched",
            "wafer": {"preset": "wafer-distilled", "replicas": 2, "quality": {"failure_multiplier": 1.5}},
            "mine": full,
        },
        policy={"kind": "always", "backend": "gpu"},
    )
    wafer = s.backends["wafer"]
    assert wafer.replicas == 2
    assert wafer.quality.failure_multiplier == 1.5
    assert wafer.quality.tool_error_prob == backend_preset("wafer-distilled").quality.tool_error_prob
    assert s.backends["mine"].replicas == 2


def test_every_field_is_overridable_by_path() -> None:
    s = Scenario(backends={"wafer": "wafer-distilled"})
    t = s.with_overrides(
        {
            "developers": 3,
            "developer.attention.flow_threshold_s": 1.0,
            "task_mix.difficulties.easy.turns_mean": 5.0,
            "backends.wafer.quality.failure_multiplier": 1.8,
            "backends.wafer.tiers": [{"name": "standard", "batch_cap": 16}],
        }
    )
    assert t.developers == 3
    assert t.developer.attention.flow_threshold_s == 1.0
    assert t.task_mix.difficulties["easy"].turns_mean == 5.0
    assert t.backends["wafer"].quality.failure_multiplier == 1.8
    assert t.backends["wafer"].tiers[0].batch_cap == 16
    assert s.developers == 20  # the original is untouched


def test_toml_round_trip(tmp_path: Path) -> None:
    s = Scenario(
        backends={"gpu": "gpu-batched", "wafer": "wafer-distilled"},
        policy={"kind": "escalate", "first": "wafer", "then": "gpu"},
    )
    path = tmp_path / "s.toml"
    path.write_text(s.to_toml())
    back = Scenario.from_toml(path)
    assert back == s
    assert isinstance(back.policy, EscalateSpec)
    tomllib.loads(s.to_toml())  # plain TOML


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"backends": {"a": "h100"}}, r"backends.a: unknown backend preset 'h100' \(known: gpu-batched"),
        ({"backends": {"a": {"preset": 3}}}, r"backends.a.preset must be a preset name"),
        ({"backends": {"a": {"preset": "gpu-fast", "replicas": 0}}}, r"backends.a.replicas\n"),
        ({"backends": {}}, r"backends\n"),
        ({"developers": 0}, r"developers\n"),
        ({"horizon_s": -1}, r"horizon_s\n"),
        ({"developer": {"review": {"detect_prob": 2}}}, r"developer.review.detect_prob\n"),
        ({"developer": {"prompt_s": {"median": -1}}}, r"developer.prompt_s.median\n"),
        ({"developer": {"prompt_s": {"median": 0}}}, r"developer.prompt_s\n.*median must be positive"),
        (
            {"task_mix": {"difficulties": {"easy": {"share": 0, "turns_mean": 3}}}},
            r"task_mix.difficulties.easy.share\n",
        ),
        ({"task_mix": {"turns": 3}}, r"task_mix.turns\n  Extra inputs are not permitted"),
        ({"policy": {"backend": "gpu-batched"}}, r"policy.kind is required"),
        (
            {"task_mix": {"sizing": "difficulty", "difficulties": {"epic": {"share": 1, "turns_mean": 3}}}},
            r"difficulties.epic.human_length_s: required with sizing = 'difficulty'",
        ),
        (
            {
                "backends": {
                    "gpu-batched": {"preset": "gpu-batched", "quality": {"failure_prob": {"easy": 0.1}}}
                }
            },
            r"quality.failure_prob: the failure table by difficulty class was replaced",
        ),
        (
            {"backends": {"gpu-batched": {"preset": "gpu-batched", "quality": {"failure_multiplier": 9}}}},
            r"quality.failure_multiplier = 9: .* at least 1",
        ),
        (
            {"task_mix": {"compact_to_tokens": 190_000}},
            r"task_mix.compact_to_tokens \(190000\) must be below compact_at_fraction",
        ),
    ],
)
def test_validation_errors_name_the_field(data: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Scenario.model_validate(data)


def test_from_toml_reports_the_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('developers = 2\n[developer.attention]\nflow_threshold_s = "soon"\n')
    with pytest.raises(ValidationError, match=r"developer.attention.flow_threshold_s"):
        Scenario.from_toml(path)


def test_with_backend_swaps_the_backend_and_routes_everything_to_it() -> None:
    scenario = Scenario(developers=3)
    fast = scenario.with_backend("gpu-fast")
    assert list(fast.backends) == ["gpu-fast"]
    assert fast.policy.kind == "always"
    assert fast.developers == 3
    assert fast.task_mix == scenario.task_mix


def test_with_backend_keeps_the_scenarios_own_overrides() -> None:
    scenario = Scenario.model_validate(
        {
            "backends": {"w": {"preset": "wafer-distilled", "quality": {"failure_multiplier": 1.5}}},
            "policy": {"kind": "always", "backend": "w"},
        }
    )
    assert scenario.with_backend("w").backends["w"].quality.failure_multiplier == 1.5


def test_with_backend_rejects_an_unknown_name() -> None:
    with pytest.raises(ValueError, match="neither a backend of this scenario"):
        Scenario().with_backend("gpu-warp")
