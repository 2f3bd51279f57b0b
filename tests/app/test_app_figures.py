"""The app's figures: the serving pool's step counts."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from speedtrap.app.figures import count_steps


def test_an_arrival_and_a_departure_at_one_instant_never_go_below_zero() -> None:
    times, levels = count_steps(np.array([1.0, 2.0]), np.array([1.0, 2.0]))
    assert levels.tolist() == [0, 1, 0, 1, 0]
    assert times.tolist() == [0.0, 1.0, 1.0, 2.0, 2.0]


@given(
    st.lists(
        st.tuples(
            st.floats(0, 1e4, allow_nan=False, allow_subnormal=False),
            st.sampled_from([0.0, 0.0, 0.5, 3.0, 100.0]),
        ),
        max_size=60,
    )
)
def test_a_queue_length_is_never_negative_and_ends_at_zero(items: list[tuple[float, float]]) -> None:
    up = np.array([t for t, _ in items])
    down = np.array([t + stay for t, stay in items])
    times, levels = count_steps(up, down)
    assert (levels >= 0).all()
    assert levels[-1] == 0
    assert (np.diff(times) >= 0).all()
