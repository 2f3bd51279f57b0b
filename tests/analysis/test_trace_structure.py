"""Trace-structure statistics shared by logs and runs (speedtrap.analysis.trace_structure): known
answers on constructed stretches and requests."""

import math

import numpy as np
import pytest

from speedtrap.analysis.trace_structure import (
    GAP_WINDOW_S,
    TOOL_CALL_STATISTICS,
    cached_share_after_gap,
    tool_call_values,
)


def test_tool_calls_known_answers() -> None:
    """Two sessions: a (0, 4, 10) and b (0, 2): 2 of 5 stretches with none, (4+10+2)/3 per stretch
    with any, the sessions' maxima 10 and 2 with median 6."""
    values = tool_call_values(np.array([0, 4, 10, 0, 2]), np.array(["a", "a", "a", "b", "b"]))
    assert values["zero_tool_call_span_share"] == pytest.approx(0.4)
    assert values["tool_calls_per_nonzero_span_mean"] == pytest.approx(16 / 3)
    assert values["session_max_tool_calls_median"] == pytest.approx(6.0)


def test_tool_calls_without_any() -> None:
    """No stretch: every statistic NaN; stretches with no tool call: the mean over those with any is
    NaN, the share 1."""
    assert all(math.isnan(v) for v in tool_call_values(np.array([]), np.array([])).values())
    values = tool_call_values(np.array([0, 0]), np.array(["a", "b"]))
    assert values["zero_tool_call_span_share"] == 1.0
    assert math.isnan(values["tool_calls_per_nonzero_span_mean"])
    assert set(values) == set(TOOL_CALL_STATISTICS)


def test_negative_tool_calls_are_refused() -> None:
    with pytest.raises(ValueError, match="at least 0"):
        tool_call_values(np.array([1, -1]), np.array(["a", "a"]))


def test_cached_share_looks_only_inside_the_window() -> None:
    """Gaps at the window's edges: 300 s is out (a 5-minute cache may still be warm), 1800 s in,
    beyond it out (time away); the share is a ratio of sums, not a mean of ratios."""
    low, high = GAP_WINDOW_S
    gaps = np.array([0.0, low, low + 1, high, high + 1, np.nan])
    cached = np.array([100, 100, 0, 900, 100, 100])
    inputs = np.array([100, 100, 100, 1000, 100, 100])
    share, n = cached_share_after_gap(gaps, cached, inputs)
    assert n == 2
    assert share == pytest.approx(900 / 1100)
    share, n = cached_share_after_gap(np.array([10.0]), np.array([5]), np.array([10]))
    assert n == 0 and math.isnan(share)
