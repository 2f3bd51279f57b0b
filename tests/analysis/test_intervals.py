"""The two intervals: the random-effects decomposition on synthetic data with known variances, and
break-evens that can never contradict the net value (speedtrap.analysis.intervals, value)."""

import math

import numpy as np
import pandas as pd
import pytest

from speedtrap.analysis.intervals import (
    MIN_MEMBERS,
    behaviour_words,
    break_even,
    describe_set,
    dominance_phrase,
    two_intervals,
)
from speedtrap.analysis.statistics import mean_ci
from speedtrap.analysis.value import (
    arm_value,
    break_even_usd_per_dev_hour,
    net_value_lines,
    net_value_per_dev_day,
)
from speedtrap.config.value import Value

DAY_S = 8 * 3600.0


def synthetic(rng: np.random.Generator, k: int, r: int, mu: float, sd_b: float, sd_w: float):
    effects = rng.normal(0.0, sd_b, k)
    members = np.repeat(np.arange(k), r)
    values = mu + effects[members] + rng.normal(0.0, sd_w, k * r)
    return values, members, effects


def test_the_decomposition_recovers_known_seed_and_member_variances() -> None:
    # 400 members × 5 seeds: σ_w = 3 has a relative standard error ≈ 2%, σ_b = 2 ≈ 5%; tolerances
    # (10% and 15%) fixed before the run.
    values, members, _ = synthetic(np.random.default_rng(7), 400, 5, 1.0, 2.0, 3.0)
    result = two_intervals(values, members)
    assert result.members == 400 and result.seeds_per_member == 5 and result.n == 2000
    assert result.sd_seed == pytest.approx(3.0, rel=0.10)
    assert result.sd_behaviour == pytest.approx(2.0, rel=0.15)
    assert result.mean == pytest.approx(1.0, abs=0.3)
    assert result.dominant == "behavioural uncertainty"
    assert "dominates" in dominance_phrase(result)


def test_seed_interval_covers_the_members_mean() -> None:
    # 2000 experiments of 8 members × 3 seeds, seed noise twice the members' spread: the seed
    # interval should cover the mean of the members' true effects 95% of the time (±2 points).
    rng = np.random.default_rng(11)
    hits = notes = 0
    trials = 2000
    for _ in range(trials):
        values, members, effects = synthetic(rng, 8, 3, 0.0, 1.0, 2.0)
        result = two_intervals(values, members)
        hits += result.seed_low <= effects.mean() <= result.seed_high
        notes += any("noisier than the members differ" in note for note in result.notes)
    assert abs(hits / trials - 0.95) <= 0.02
    # there each member's mean (variance 4/3) is noisier than the members differ (1): said mostly
    assert notes / trials > 0.5


def test_behavioural_interval_is_the_members_central_95_percent() -> None:
    # the interval is the members' means' interpolated 2.5–97.5% quantiles, exactly
    rng = np.random.default_rng(12)
    values, members, _ = synthetic(rng, 12, 3, 0.0, 1.0, 0.5)
    result = two_intervals(values, members)
    means = pd.Series(values).groupby(members).mean().to_numpy()
    low, high = np.quantile(means, [0.025, 0.975])
    assert (result.behaviour_low, result.behaviour_high) == (pytest.approx(low), pytest.approx(high))
    assert means.min() <= result.behaviour_low < result.behaviour_high <= means.max()


def test_behavioural_interval_respects_the_bounds_of_a_share() -> None:
    # a share near 0 from 3 seeds on each of 6 members: the old normal-theory interval went below 0;
    # the members' quantiles cannot leave the range of shares they produced
    rng = np.random.default_rng(3)
    members = np.repeat(np.arange(6), 3)
    values = np.clip(rng.beta(0.5, 8.0, 6)[members] + rng.normal(0, 0.01, 18), 0.0, 1.0)
    result = two_intervals(values, members)
    assert 0.0 <= result.behaviour_low <= result.behaviour_high <= 1.0


@pytest.mark.parametrize("k", [2, 3, 4])
def test_too_few_members_give_no_behavioural_interval(k: int) -> None:
    values, members, _ = synthetic(np.random.default_rng(k), k, 2, 0.0, 1.0, 0.5)
    result = two_intervals(values, members)
    assert math.isnan(result.behaviour_low) and math.isnan(result.behaviour_high)
    assert result.dominant == "n/a"
    assert any(f"too few members ({k})" in note for note in result.notes)
    assert behaviour_words(result.behaviour_low, result.behaviour_high, k) == f"too few members ({k})"
    assert behaviour_words(0.1, 0.2, MIN_MEMBERS) == "[+0.1, +0.2]"
    assert behaviour_words(math.nan, math.nan, 1) == "n/a"
    a, b = synthetic(np.random.default_rng(k), k, 2, -1.0, 1.0, 0.5)[0], np.ones(2 * k)
    assert break_even(a, b, members).behaviour is None


def test_one_parameter_set_gives_the_paired_t_interval_over_seeds() -> None:
    values = np.array([1.0, 2.5, -0.5, 3.0, 1.2])
    result = two_intervals(values)
    mean, low, high = mean_ci(values)
    assert (result.mean, result.seed_low, result.seed_high) == pytest.approx((mean, low, high))
    assert math.isnan(result.behaviour_low) and result.dominant == "n/a"
    assert result.members == 1


def test_no_member_spread_lets_seed_noise_dominate_and_says_so() -> None:
    rng = np.random.default_rng(3)
    members = np.repeat(np.arange(6), 4)
    values = rng.normal(0.0, 1.0, 24)
    result = two_intervals(values, members)
    assert result.dominant in ("seed noise", "behavioural uncertainty")
    assert any("only 6 members" in note for note in result.notes)
    flat = two_intervals(np.tile([0.0, 1.0], 5), np.repeat(np.arange(5), 2))
    assert flat.sd_behaviour == 0.0 and flat.dominant == "seed noise"
    assert any("not distinguishable from seed noise" in note for note in flat.notes)


def _inside(pieces, x: float) -> bool:
    return any(lo <= x <= hi for lo, hi in pieces)


@pytest.mark.parametrize("trial", range(40))
def test_break_evens_never_contradict_the_net_value(trial: int) -> None:
    rng = np.random.default_rng(100 + trial)
    k, r = (1, 6) if trial % 4 == 0 else (int(rng.integers(2, 10)), int(rng.integers(2, 4)))
    n = k * r
    tb = rng.uniform(2.0, 10.0, n)
    pairs = pd.DataFrame(
        {
            "tasks_base": tb,
            "usd_base": rng.uniform(10.0, 60.0, n),
            "tasks_arm": tb * rng.uniform(0.7, 1.4, n),
            "usd_arm": rng.uniform(10.0, 200.0, n),
            "other_base": rng.uniform(0.0, 1.0, n),
            "other_arm": rng.uniform(0.0, 1.0, n),
            "member": np.repeat(np.arange(k), r),
        }
    )
    value = Value(usd_per_dev_hour=float(rng.uniform(40.0, 200.0)))
    result = arm_value(pairs, "x", value=value, workday_s=DAY_S)
    lines = net_value_lines(pairs, value=value, workday_s=DAY_S)
    net = result.net_usd_per_dev_day
    # the point estimates: positive net ⇔ the price in force is on the paying side
    side = {"above": value.usd_per_dev_hour > result.break_even_usd_per_dev_hour,
            "below": value.usd_per_dev_hour < result.break_even_usd_per_dev_hour,
            "always": True, "never": False}[result.pays]  # fmt: skip
    assert (net > 0) == side
    assert (net > 0) == (result.break_even_price_multiple > 1)
    # the intervals: the net value's holds 0 ⇔ the break-even's holds the price in force
    for price, a, b in (
        (value.usd_per_dev_hour, lines.cost_a, lines.cost_b),
        (1.0, lines.price_a, lines.price_b),
    ):
        found = break_even(a, b, lines.members)
        assert (result.net_ci_low <= 0 <= result.net_ci_high) == _inside(found.seed, price)
        if 1 < k < MIN_MEMBERS:
            assert found.behaviour is None and math.isnan(result.net_behaviour_low)
        elif k >= MIN_MEMBERS:
            assert found.behaviour is not None
            holds = result.net_behaviour_low <= 0 <= result.net_behaviour_high
            assert holds == _inside(found.behaviour, price)


def test_the_case_the_old_break_even_contradicted() -> None:
    # Three seeds whose baseline output varies widely: the mean outcomes complete 42% more tasks on
    # the arm, so the old break-even (from mean outcomes) read "pays above $26 per developer-hour",
    # while the per-seed net value at $90.58 was −$1 per developer-day (95% CI about −560 to +560).
    tb, ta = np.array([10.0, 2.0, 6.0]), np.array([16.0, 1.2, 6.5])
    sb, sa = np.full(3, 20.0), np.full(3, 91.0)
    value = Value()
    old_cost, old_pays = break_even_usd_per_dev_hour(
        tb.mean(), sb.mean(), ta.mean(), sa.mean(), workday_s=DAY_S
    )
    old_net = net_value_per_dev_day(tb, sb, ta, sa, value=value, workday_s=DAY_S).mean()
    assert old_pays == "above" and old_cost < value.usd_per_dev_hour and old_net < 0  # the contradiction
    pairs = pd.DataFrame({"tasks_base": tb, "usd_base": sb, "tasks_arm": ta, "usd_arm": sa})
    result = arm_value(pairs, "fast", value=value, workday_s=DAY_S)
    assert result.net_usd_per_dev_day == pytest.approx(old_net)
    assert result.pays == "above" and result.break_even_usd_per_dev_hour > value.usd_per_dev_hour
    assert result.break_even_price_multiple < 1
    assert result.net_ci_low < 0 < result.net_ci_high
    # the seed interval of the break-even cost holds today's cost, as the net value's holds zero
    lines = net_value_lines(pairs, value=value, workday_s=DAY_S)
    assert _inside(break_even(lines.cost_a, lines.cost_b).seed, value.usd_per_dev_hour)


def test_other_work_counts_at_the_value_of_a_task_and_its_share_is_reported() -> None:
    base = {
        "tasks_base": [5.0, 5.0],
        "usd_base": [10.0, 10.0],
        "tasks_arm": [5.0, 5.0],
        "usd_arm": [10.0, 10.0],
    }
    more_other = pd.DataFrame(base | {"other_base": [0.0, 0.0], "other_arm": [1.0, 1.0]})
    result = arm_value(more_other, "x", value=Value(usd_per_dev_hour=100.0), workday_s=DAY_S)
    assert result.net_usd_per_dev_day == pytest.approx(1.0 * (800.0 + 10.0) / 5.0)
    assert result.other_work_share_base == 0.0 and result.other_work_share_arm == pytest.approx(1 / 6)
    tasks_only = arm_value(pd.DataFrame(base), "x", value=Value(usd_per_dev_hour=100.0), workday_s=DAY_S)
    assert tasks_only.net_usd_per_dev_day == 0.0 and "tasks alone" in tasks_only.notes


def test_sets_in_words() -> None:
    assert describe_set(((3.0, 5.5),), "{:.1f}") == "3.0 to 5.5"
    assert describe_set(((0.0, math.inf),)) == "everywhere"
    assert describe_set(((0.0, 2.0), (7.0, math.inf)), "{:.0f}") == "below 2 and above 7"
    assert describe_set(()) == "nowhere" and describe_set(None) == "n/a"
