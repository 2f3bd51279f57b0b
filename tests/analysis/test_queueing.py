"""Closed forms against textbook numbers and their own identities."""

from __future__ import annotations

import pytest

from speedtrap.analysis.queueing import (
    erlang_b,
    erlang_c,
    littles_law_number,
    mm1_ps_mean_sojourn_s,
    mmc_mean_sojourn_s,
    mmc_mean_wait_s,
    priority_mmc_mean_wait_s,
)


def test_mmc_reference_workload() -> None:
    # λ = 7.2, μ = 1, c = 8: the workload of docs/design.md §4 and of the pool benchmark.
    assert mmc_mean_wait_s(7.2, 1.0, 8) == pytest.approx(0.877, abs=5e-4)
    assert mmc_mean_sojourn_s(7.2, 1.0, 8) == pytest.approx(1.877, abs=5e-4)


def test_textbook_values() -> None:
    # M/M/1: C = ρ, Wq = ρ/(μ − λ).
    assert erlang_c(1, 0.75) == pytest.approx(0.75)
    assert mmc_mean_wait_s(3.0, 4.0, 1) == pytest.approx(0.75)
    # M/M/2 with a = 1: C = 1/3, Wq = C/(2μ − λ) = 1/3.
    assert erlang_c(2, 1.0) == pytest.approx(1 / 3)
    assert mmc_mean_wait_s(1.0, 1.0, 2) == pytest.approx(1 / 3)
    # Erlang B tables: B(c=10, a=5) = 0.01838; B(c=5, a=2) = 0.03670.
    assert erlang_b(10, 5.0) == pytest.approx(0.018385, abs=1e-5)
    assert erlang_b(5, 2.0) == pytest.approx(0.036697, abs=1e-5)
    # Erlang C call-centre example: c = 10 agents, a = 8 Erlangs -> P(wait) = 0.4092.
    assert erlang_c(10, 8.0) == pytest.approx(0.4092, abs=1e-4)


def test_mm1_processor_sharing() -> None:
    assert mm1_ps_mean_sojourn_s(0.5, 1.0) == pytest.approx(2.0)
    assert mm1_ps_mean_sojourn_s(9.0, 10.0) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="unstable"):
        mm1_ps_mean_sojourn_s(1.0, 1.0)


def test_priority_classes_conserve_the_mmc_wait() -> None:
    lam = [1.5, 2.5, 3.2]
    waits = priority_mmc_mean_wait_s(lam, 1.0, 8)
    assert waits[0] < waits[1] < waits[2]
    mean = sum(w * x for w, x in zip(waits, lam, strict=True)) / sum(lam)
    assert mean == pytest.approx(mmc_mean_wait_s(sum(lam), 1.0, 8), rel=1e-12)
    # One class is plain M/M/c.
    assert priority_mmc_mean_wait_s([7.2], 1.0, 8)[0] == pytest.approx(mmc_mean_wait_s(7.2, 1.0, 8))


def test_priority_two_classes_by_hand() -> None:
    # c = 1, μ = 1, λ = (0.3, 0.4): W0 = C/(cμ) = 0.7; W_high = 0.7/(1·0.7) = 1, W_low = 0.7/(0.7·0.3).
    high, low = priority_mmc_mean_wait_s([0.3, 0.4], 1.0, 1)
    assert high == pytest.approx(1.0)
    assert low == pytest.approx(0.7 / (0.7 * 0.3))


def test_littles_law_and_bad_inputs() -> None:
    assert littles_law_number(7.2, 1.877) == pytest.approx(13.5144)
    with pytest.raises(ValueError):
        littles_law_number(-1.0, 1.0)
    with pytest.raises(ValueError, match="unstable"):
        erlang_c(8, 8.0)
    with pytest.raises(ValueError, match="servers"):
        erlang_b(0, 1.0)
    with pytest.raises(ValueError, match="service_rate"):
        mmc_mean_wait_s(1.0, 0.0, 2)
    with pytest.raises(ValueError, match="at least one class"):
        priority_mmc_mean_wait_s([], 1.0, 2)
