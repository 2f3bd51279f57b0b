"""A maximin design that grows beside the points it already has."""

from __future__ import annotations

import numpy as np

from speedtrap.analysis.space_filling import space_filling_subset


def test_a_grown_design_keeps_away_from_the_points_it_has() -> None:
    pool = np.random.default_rng(0).random((2000, 3))
    first = pool[space_filling_subset(pool, 10, seed=1)]
    added = space_filling_subset(pool, 10, seed=2, beside=first)
    assert len(set(added.tolist())) == 10
    new = pool[added]
    # none of the points already chosen is picked again, and the new ones fill the gaps between them
    gap = np.sqrt(((new[:, None, :] - first[None, :, :]) ** 2).sum(axis=2)).min()
    assert gap > 0.0
    random_pick = pool[np.random.default_rng(3).choice(len(pool), 10, replace=False)]
    random_gap = np.sqrt(((random_pick[:, None, :] - first[None, :, :]) ** 2).sum(axis=2)).min(axis=1)
    new_gap = np.sqrt(((new[:, None, :] - first[None, :, :]) ** 2).sum(axis=2)).min(axis=1)
    assert new_gap.min() > np.median(random_gap)  # farther from the old points than chance
    # the first new point is the pool's farthest from the old ones
    far = np.sqrt(((pool[:, None, :] - first[None, :, :]) ** 2).sum(axis=2)).min(axis=1)
    assert added[0] == int(np.argmax(far))
