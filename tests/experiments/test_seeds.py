"""Replication seeds: deterministic, distinct, prefix-stable, shared by every design point."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from speedtrap.config.experiment import Experiment
from speedtrap.experiments import design_points, replication_seeds, run_experiment
from speedtrap.experiments.seeds import SEED_MASK


def test_seeds_come_from_spawned_seed_sequences() -> None:
    seeds = replication_seeds(2026, 5)
    children = np.random.SeedSequence(2026).spawn(5)
    assert seeds == [int(c.generate_state(1, dtype=np.uint64)[0]) & SEED_MASK for c in children]
    assert len(set(seeds)) == 5
    assert all(0 <= s <= SEED_MASK for s in seeds)
    assert replication_seeds(2026, 5) == seeds
    assert replication_seeds(2027, 5) != seeds


def test_fewer_replications_reuse_the_first_seeds() -> None:
    assert replication_seeds(3, 2) == replication_seeds(3, 10)[:2]
    assert replication_seeds(3, 0) == []


def test_every_point_runs_the_same_seeds(make_tiny: Callable[..., Experiment]) -> None:
    spec = make_tiny(replications=3)
    table = run_experiment(spec, results_dir=None, progress=False)
    seeds = replication_seeds(spec.seed, 3)
    assert len(design_points(spec)) == 2
    for _, runs in table.groupby("point"):
        assert runs["seed"].tolist() == seeds
