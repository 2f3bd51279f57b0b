"""The calibrated ensemble's members applied to a user's scenario (speedtrap.experiments.ensemble)."""

from __future__ import annotations

from pathlib import Path

from speedtrap.config import Scenario

ROOT = Path(__file__).resolve().parents[2]


def test_a_members_success_curve_goes_to_every_arm_keeping_each_arms_multiplier() -> None:
    """The calibrated backend's curve (backends.gpu-batched.quality.*) describes the model every arm
    of a headline comparison serves: a faster arm runs under the same member's curve as its baseline
    (never under the default while the baseline has the member's), and the distilled arm keeps its
    1.2× the mistakes of that curve; the METR-era backend's curve stays on METR-like scenarios."""
    from speedtrap.experiments.ensemble import member_overrides

    headline = Scenario.from_toml(ROOT / "experiments" / "scenarios" / "headline.toml")
    member = {
        "backends.gpu-batched.quality.horizon_min": 500.0,
        "backends.sonnet-2025.quality.horizon_min": 40.0,
        "developer.stretch_sigma": 1.1,
    }
    for arm in ("gpu-batched", "gpu-fast", "wafer-distilled"):
        scenario = headline.with_backend(arm)
        overrides, left = member_overrides(scenario, member)
        assert overrides[f"backends.{arm}.quality.horizon_min"] == 500.0
        assert overrides["developer.stretch_sigma"] == 1.1
        assert "backends.sonnet-2025.quality.horizon_min" in left
        applied = scenario.with_overrides(overrides).backends[arm].quality
        assert applied.horizon_min == 500.0
        assert applied.failure_multiplier == scenario.backends[arm].quality.failure_multiplier
