"""speedtrap.exact: exactly rounded sums that do not depend on order, grouping or chunking."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from speedtrap import exact
from speedtrap.exact import ExactSum, exact_mean, exact_sum

finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300)


def _true_rounded(values: list[float]) -> float:
    """The float nearest the exact rational sum."""
    return float(sum((Fraction(v) for v in values), Fraction(0)))


@settings(max_examples=200, deadline=None)
@given(st.lists(finite, max_size=60), st.integers(min_value=1, max_value=7), st.randoms())
def test_streamed_sum_is_the_exactly_rounded_sum_whatever_the_order_and_chunks(
    values: list[float], chunk: int, rnd: object
) -> None:
    expected = _true_rounded(values)
    shuffled = list(values)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    old = exact.CHUNK
    exact.CHUNK = chunk  # force many folds
    try:
        acc = ExactSum()
        for v in shuffled:
            acc.add(v)
    finally:
        exact.CHUNK = old
    assert acc.total == expected == exact_sum(values)
    assert acc.count == len(values)


def test_catastrophic_cancellation_is_exact_where_a_plain_sum_is_not() -> None:
    values = [1e16, 1.0, -1e16, 1.0] * 1000
    naive = 0.0
    for v in values:
        naive += v
    assert naive != 2000.0
    assert exact_sum(values) == 2000.0
    old = exact.CHUNK
    exact.CHUNK = 3
    try:
        acc = ExactSum()
        for v in values:
            acc.add(v)
        assert acc.total == 2000.0
    finally:
        exact.CHUNK = old


def test_merging_two_sums_equals_summing_everything() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.lognormal(0, 3, 5000), rng.normal(0, 1e6, 3000)
    left, right = ExactSum(), ExactSum()
    left.extend(a)
    right.extend(b)
    left.merge(right)
    assert left.total == math.fsum([*a, *b]) and left.count == 8000


def test_non_finite_values_follow_ieee_and_nan_can_be_skipped() -> None:
    assert exact_sum([1.0, math.inf]) == math.inf
    assert math.isnan(exact_sum([1.0, math.inf, -math.inf]))
    assert math.isnan(exact_sum([1.0, math.nan]))
    assert exact_sum([1.0, math.nan, 2.0], skip_nan=True) == 3.0
    assert exact_mean([1.0, math.nan, 2.0], skip_nan=True) == 1.5
    assert math.isnan(exact_mean([]))
    assert math.isnan(exact_mean([math.nan], skip_nan=True))
    assert exact_sum([]) == 0.0


def test_a_long_stream_keeps_constant_memory() -> None:
    acc = ExactSum()
    rng = np.random.default_rng(0)
    for v in rng.exponential(3.0, 3 * exact.CHUNK + 5).tolist():
        acc.add(v)
    assert len(acc._buffer) < exact.CHUNK and len(acc._partials) <= 4


@pytest.mark.parametrize("n", [1, 7, 1000])
def test_mean_is_sum_over_count(n: int) -> None:
    values = np.linspace(0.1, 9.7, n)
    assert exact_mean(values) == math.fsum(values) / n
