"""Tiny experiments for the engine's tests: two developers for an hour, two backends."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from speedtrap.config.experiment import Experiment

TINY_SCENARIO: dict[str, Any] = {
    "name": "tiny",
    "developers": 2,
    "horizon_s": 3600.0,
    # no away episodes: an hour with a few of them (a p90 of ≈14 min) can leave a developer without a
    # finished task, and these tests are about the engine, not attention
    "developer": {"attention": {"away_s": None}},
    "backends": {"gpu-batched": "gpu-batched", "wafer-distilled": "wafer-distilled"},
    "policy": {"kind": "always", "backend": "gpu-batched"},
}


def tiny_experiment(**changes: Any) -> Experiment:
    """2 backends × 2 replications of a two-developer, one-hour scenario (4 runs of ~0.03 s)."""
    data: dict[str, Any] = {
        "name": "tiny",
        "scenario": TINY_SCENARIO,
        "factors": [{"path": "backend", "values": ["gpu-batched", "wafer-distilled"]}],
        "replications": 2,
        "seed": 11,
        "outcomes": ["tasks_completed", "tasks_per_dev_day", "waiting_share", "usd_total"],
    }
    data.update(changes)
    return Experiment.model_validate(data)


@pytest.fixture
def tiny() -> Experiment:
    return tiny_experiment()


@pytest.fixture
def make_tiny() -> Callable[..., Experiment]:
    """:func:`tiny_experiment`, for tests that change the spec."""
    return tiny_experiment
