"""A maximin design that grows beside the points it already has."""

from __future__ import annotations

import numpy as np
import pytest

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


def test_a_point_chosen_before_is_never_chosen_again_even_when_few_are_left() -> None:
    """Growing a design from a pool that holds its own points (the last wave's candidates, from which
    the first points were drawn) must add only new points: with as many or fewer rows than asked, the
    rows equal to a point chosen before come back never, and copies within the pool once."""
    rng = np.random.default_rng(3)
    before = rng.random((6, 3))
    new = rng.random((4, 3))
    pool = np.vstack([before, new, new[:2]])  # the old points, 4 new ones and copies of two of them
    chosen = space_filling_subset(pool, 20, beside=before, seed=1)
    assert sorted(map(tuple, pool[chosen])) == sorted(map(tuple, new))  # each new point once
    assert len(chosen) == 4
    # without beside, copies in the pool are not chosen twice either once distinct rows run out
    twice = np.vstack([new, new])
    assert len(space_filling_subset(twice, 6, seed=0)) == 4
    with pytest.raises(ValueError, match="beside needs the maximin method"):
        space_filling_subset(pool, 3, beside=before, method="random")
