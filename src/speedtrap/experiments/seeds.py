"""Replication seeds: common random numbers across design points.

Replication ``r`` of every design point runs with the same seed, ``replication_seeds(root, R)[r]``,
so the same task stream (and the same developer behaviour, as far as it does not depend on the
backend) meets every backend and parameter value: differences between points are then paired, and
their confidence intervals much narrower than those of independent runs.

Seed ``r`` is drawn from child ``r`` of ``numpy.random.SeedSequence(root)`` (``spawn``), so the
first ``k`` seeds do not depend on how many replications are asked for: a quick run with two
replications reuses the first two seeds of the full experiment.
"""

from __future__ import annotations

import numpy as np

SEED_MASK = (1 << 63) - 1
"""Seeds are kept below 2**63 so that they fit a signed 64-bit column (parquet, pandas int64)."""


def replication_seeds(root_seed: int, replications: int) -> list[int]:
    """The run seeds of replications ``0 .. replications-1`` (each a 63-bit int) from ``root_seed``."""
    if replications < 0:
        raise ValueError(f"replications must be ≥ 0, got {replications}")
    children = np.random.SeedSequence(root_seed).spawn(replications)
    return [int(child.generate_state(1, dtype=np.uint64)[0]) & SEED_MASK for child in children]
