"""The ledger: splitting waits by request phase, accumulating categories, the trace."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from speedtrap.agents.activity import Activity
from speedtrap.config.ledger import LEDGER_CATEGORIES, WAITING_CATEGORIES
from speedtrap.models.ledger import Ledger, split_wait

INF = math.inf


def test_split_wait_assigns_each_phase() -> None:
    # request admitted at 2, first token at 3, done at 7; tool until 10
    assert split_wait(0.0, 10.0, 2.0, 3.0, 7.0) == (2.0, 1.0, 4.0, 3.0)
    # a wait that starts mid-generation and ends before the tool finishes
    assert split_wait(4.0, 8.0, 2.0, 3.0, 7.0) == (0.0, 0.0, 3.0, 1.0)
    # instants not reached yet are inf: all of it is queue
    assert split_wait(0.0, 5.0, INF, INF, INF) == (5.0, 0.0, 0.0, 0.0)
    # admitted, still prefilling
    assert split_wait(0.0, 5.0, 1.0, INF, INF) == (1.0, 4.0, 0.0, 0.0)


@given(
    start=st.floats(0, 1e5, allow_subnormal=False),
    length=st.floats(0, 1e4, allow_subnormal=False),
    marks=st.lists(st.one_of(st.floats(0, 2e5, allow_subnormal=False), st.just(INF)), min_size=3, max_size=3),
)
def test_split_wait_parts_are_nonnegative_and_sum_to_the_wait(
    start: float, length: float, marks: list[float]
) -> None:
    admitted, first, done = sorted(marks)
    parts = split_wait(start, start + length, admitted, first, done)
    assert all(p >= 0.0 for p in parts)
    assert sum(parts) == pytest.approx(length, abs=1e-9 * max(1.0, start + length))


def test_ledger_accumulates_by_category_and_keeps_the_trace() -> None:
    ledger = Ledger(2, trace=True)
    ledger.record(0, Activity.PROMPTING, 0.0, 60.0, 0)
    ledger.record_wait(0, 60.0, 70.0, (61.0, 62.0, 66.0, 70.0), 0)
    ledger.record(0, Activity.REVIEWING, 70.0, 100.0, 0)
    ledger.record(1, Activity.IDLE, 0.0, 100.0, -1)
    wide = ledger.frame().pivot(index="developer", columns="category", values="seconds")
    assert list(wide.columns) == list(LEDGER_CATEGORIES)
    row = wide.loc[0]
    assert (row["prompting"], row["reviewing"]) == (60.0, 30.0)
    assert [row[c] for c in WAITING_CATEGORIES] == [1.0, 1.0, 4.0, 4.0]
    assert wide.sum(axis=1).tolist() == [100.0, 100.0]
    trace = ledger.trace_frame()
    assert trace is not None
    dev0 = trace[trace["developer"] == 0]
    assert dev0["category"].tolist() == [
        "prompting",
        "waiting_queue",
        "waiting_ttft",
        "waiting_generation",
        "waiting_tool",
        "reviewing",
    ]
    assert dev0["start_s"].tolist() == [0.0, 60.0, 61.0, 62.0, 66.0, 70.0]


def test_ledger_without_trace_has_no_trace_frame() -> None:
    assert Ledger(1).trace_frame() is None


def test_waiting_is_not_a_plain_category() -> None:
    with pytest.raises(KeyError):
        Ledger(1).record(0, Activity.WAITING, 0.0, 1.0, -1)
