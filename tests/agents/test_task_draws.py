"""Whole counts of the per-turn draws: rounding, bounds and the values no spec should reach."""

from __future__ import annotations

import numpy as np
import pytest

from speedtrap.agents.task import MAX_COUNT, counts


@pytest.mark.parametrize("low", [0, 1])
def test_counts_round_half_to_even_within_the_bounds(low: int) -> None:
    draws = np.array([0.5, 1.5, 2.5, 2.49, -3.2, 7.0, 1e20, MAX_COUNT + 0.4, -0.0])
    got = counts(draws, low=low)
    assert got.dtype == np.int64
    want = [max(low, 0), 2, 2, 2, low, 7, int(MAX_COUNT), int(MAX_COUNT), low]
    assert got.tolist() == want


def test_counts_send_undefined_and_infinite_draws_to_the_bounds() -> None:
    """A NaN or +inf draw (an absurd spec's overflow) is the largest count, -inf the smallest."""
    got = counts(np.array([np.nan, np.inf, -np.inf, 3.0]), low=1)
    assert got.tolist() == [int(MAX_COUNT), int(MAX_COUNT), 1, 3]


def test_counts_match_rounding_then_clipping_on_random_draws() -> None:
    rng = np.random.default_rng(5)
    draws = rng.lognormal(4.0, 3.0, 4096) * rng.choice([1.0, -1.0], 4096)
    expected = np.clip(np.rint(draws), 1, MAX_COUNT).astype(np.int64)
    assert np.array_equal(counts(draws, low=1), expected)
