"""What a team can measure that decides (speedtrap.analysis.measurements): per-member measurements,
their EVPPI, the break-even and the boundary in one measurement."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from speedtrap.analysis.measurements import (
    MEASUREMENTS,
    analyse_measurements,
    break_even_interval,
    break_even_points,
    consistent_members,
    decide_for,
    measurement_rows,
    member_measurements,
)

COLUMNS = [m.column for m in MEASUREMENTS]


def _members(n: int = 120, seed: int = 3) -> tuple[pd.DataFrame, np.ndarray]:
    """Measurements of ``n`` members: the idle share uniform on 0–0.6, every other measurement noise
    unrelated to it; and the idle share itself."""
    rng = np.random.default_rng(seed)
    idle = rng.uniform(0.0, 0.6, n)
    frame = pd.DataFrame({c: rng.uniform(0.0, 1.0, n) for c in COLUMNS})
    frame["share_idle"] = idle
    return frame, idle


def test_member_measurements_are_each_members_means_on_the_arm() -> None:
    rows = []
    for member, (idle, requests) in enumerate([(0.1, 100.0), (0.3, 300.0)]):
        for seed in range(2):
            summary = {c: 0.0 for c in COLUMNS if c != "requests_per_dev_day"}
            summary.update(share_idle=idle + 0.02 * seed, requests=requests + 20 * seed, developer_days=10.0)
            rows.append({"arm": "standard", "member": member, "seed": seed, **summary})
            rows.append({"arm": "other", "member": member, "seed": seed, **summary, "share_idle": 0.9})
    out = member_measurements(pd.DataFrame(rows), "standard")
    assert list(out.columns) == COLUMNS and list(out.index) == [0, 1]
    assert out.loc[0, "share_idle"] == pytest.approx(0.11) and out.loc[1, "share_idle"] == pytest.approx(0.31)
    assert out.loc[1, "requests_per_dev_day"] == pytest.approx(31.0)  # (300 + 320) / 2 / 10
    with pytest.raises(ValueError, match="no runs on arm 'missing'"):
        member_measurements(pd.DataFrame(rows), "missing")


def test_break_even_lies_where_the_net_value_changes_sign() -> None:
    _, idle = _members()
    rng = np.random.default_rng(0)
    inb = 200.0 * (0.3 - idle) + rng.normal(0.0, 5.0, len(idle))
    points = break_even_points(inb, idle)
    assert len(points) == 1 and points[0] == pytest.approx(0.3, abs=0.03)
    assert break_even_points(np.abs(inb) + 1.0, idle) == []  # pays everywhere: no threshold
    assert break_even_points(inb, np.full_like(idle, 0.2)) == []  # a constant measurement
    low, high = break_even_interval(inb, idle)
    assert 0.24 < low < 0.3 < high < 0.36  # the threshold, known to within the members' spread
    assert break_even_interval(inb, idle) == (low, high)  # seeded
    assert all(np.isnan(break_even_interval(np.abs(inb) + 1.0, idle)))  # no single crossing: no interval


def test_an_unsure_threshold_widens_its_interval_to_the_range() -> None:
    _, idle = _members()
    rng = np.random.default_rng(1)
    inb = 5.0 * (0.55 - idle) + rng.normal(0.0, 20.0, len(idle))  # a weak slope buried in noise
    assert len(break_even_points(inb, idle)) == 1  # the fit still crosses once, somewhere
    low, high = break_even_interval(inb, idle)  # but resamples put it anywhere, or nowhere
    assert high - low > 0.4 and idle.min() <= low and high <= idle.max()


def test_the_measurement_that_decides_is_found_with_its_threshold_and_box() -> None:
    frame, idle = _members()
    rng = np.random.default_rng(1)
    inb = pd.Series(300.0 * (0.24 - idle) + rng.normal(0.0, 5.0, len(idle)), index=frame.index)
    result = analyse_measurements("AI vs by hand", inb, frame)
    assert result.first == "share_idle" and result.depends and result.seeks == "pays"
    others = result.evppi.drop("share_idle")
    assert result.evppi["share_idle"] > 10.0 * max(float(others.max()), 1.0)  # noise is worth little
    assert result.side == "below" and result.break_even[0] == pytest.approx(0.24, abs=0.03)
    assert "below" in result.break_even_words() and "idle share 0.2" in result.break_even_words()
    assert result.stable is not None and result.stable.stable, result.boundary()
    (bound,) = result.stable.box.bounds
    assert bound.path == "share_idle" and bound.high == pytest.approx(0.24, abs=0.04)
    assert result.boundary().startswith("pays when idle share ≤")
    rows = measurement_rows([result])
    assert {r["measurement"] for r in rows} == set(COLUMNS)
    assert all(r["unit"] and r["how_to_measure"] for r in rows)


def test_a_settled_decision_has_no_boundary_but_keeps_its_evppi() -> None:
    frame, idle = _members()
    inb = pd.Series(50.0 + 10.0 * idle, index=frame.index)  # pays for every member
    result = analyse_measurements("the wafer", inb, frame)
    assert not result.depends and result.stable is None and result.boundary() == ""
    assert (result.evppi.dropna() == 0.0).all()  # nothing would change the choice


def test_members_consistent_with_a_teams_measurements_are_within_three_standard_errors() -> None:
    frame = pd.DataFrame(
        {"share_idle": [0.05, 0.10, 0.20, 0.40], "usd_per_dev_day": [10.0, 30.0, 20.0, 20.0]}
    )
    out = consistent_members(frame, {"share_idle": (0.1, 0.03)})
    assert list(out["share_idle"].round(6)) == [pytest.approx(5 / 3), 0.0, pytest.approx(10 / 3), 10.0]
    assert list(out["kept"]) == [True, True, False, False]  # 3 standard errors, Pukelsheim's rule
    both = consistent_members(frame, {"share_idle": (0.1, 0.03), "usd_per_dev_day": (20.0, 2.0)})
    assert list(both["kept"]) == [False, False, False, False]  # the largest implausibility decides
    assert both.loc[1, "implausibility"] == pytest.approx(5.0)
    with pytest.raises(ValueError, match="unknown measurement 'idle'"):
        consistent_members(frame, {"idle": (0.1, 0.03)})
    with pytest.raises(ValueError, match="standard error positive"):
        consistent_members(frame, {"share_idle": (0.1, 0.0)})
    with pytest.raises(ValueError, match="no measurement"):
        consistent_members(frame, {})


def test_a_teams_decision_is_read_over_the_kept_members_alone() -> None:
    inb = pd.Series([-50.0, 20.0, 40.0, 60.0, 80.0, 100.0, -10.0], index=range(7))
    kept = pd.Series([False, True, True, True, True, True, False], index=range(7))
    team = decide_for("AI vs by hand", inb, kept)
    assert team.members == 5 and team.share_paying == 1.0 and team.mean_net == pytest.approx(60.0)
    assert team.share_low == pytest.approx(0.566, abs=0.001) and team.share_high == 1.0  # Wilson
    assert team.net_low == pytest.approx(22.0) and team.net_high == pytest.approx(98.0)
    assert team.verdict(min_members=5) == "pays" and team.verdict(min_members=6) == "too few members (5)"
    none = decide_for("AI vs by hand", inb, pd.Series(False, index=range(7)))
    assert none.members == 0 and none.verdict(min_members=5) == "too few members (0)"
