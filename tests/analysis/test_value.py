import math

import numpy as np
import pandas as pd
import pytest

from speedtrap.analysis.statistics import ci_caveat, difference_verdict
from speedtrap.analysis.value import (
    arm_value,
    break_even_usd_per_dev_hour,
    net_value_per_dev_day,
    paired_runs,
    pays_phrase,
    value_sentence,
)
from speedtrap.config.value import LOADED_USD_PER_DEV_HOUR, Value

DAY_S = 8 * 3600.0


def test_default_developer_cost_is_the_bls_wage_times_the_loaded_factor() -> None:
    assert abs(LOADED_USD_PER_DEV_HOUR - 63.59 / 0.702) < 0.01
    value = Value()
    assert value.usd_per_dev_hour_low <= value.usd_per_dev_hour <= value.usd_per_dev_hour_high


def test_an_inverted_range_is_refused() -> None:
    with pytest.raises(ValueError, match="usd_per_dev_hour_low"):
        Value(usd_per_dev_hour_low=300.0)


def test_net_value_is_the_cost_per_task_comparison() -> None:
    # $800 a day; baseline 10 tasks for $50, arm 11 tasks for $300: full cost per task 85 vs ≈100.
    value = Value(usd_per_dev_hour=100.0)
    net = net_value_per_dev_day(
        np.array([10.0]), np.array([50.0]), np.array([11.0]), np.array([300.0]), value=value, workday_s=DAY_S
    )
    assert net[0] == pytest.approx(1 * 85.0 - 250.0)
    assert (net[0] > 0) == ((800 + 300) / 11 < (800 + 50) / 10)
    with_task_value = Value(usd_per_task=500.0)
    net = net_value_per_dev_day(
        np.array([10.0]),
        np.array([50.0]),
        np.array([11.0]),
        np.array([300.0]),
        value=with_task_value,
        workday_s=DAY_S,
    )
    assert net[0] == pytest.approx(500.0 - 250.0)


def test_break_even_developer_cost_zeroes_the_net_value() -> None:
    cost, pays = break_even_usd_per_dev_hour(10.0, 50.0, 11.0, 300.0, workday_s=DAY_S)
    assert pays == "above"
    net = net_value_per_dev_day(
        np.array([10.0]), np.array([50.0]), np.array([11.0]), np.array([300.0]),
        value=Value(usd_per_dev_hour=cost), workday_s=DAY_S,
    )  # fmt: skip
    assert net[0] == pytest.approx(0.0, abs=1e-9)
    assert break_even_usd_per_dev_hour(10.0, 50.0, 11.0, 40.0, workday_s=DAY_S) == (
        pytest.approx(math.nan, nan_ok=True),
        "always",
    )
    assert break_even_usd_per_dev_hour(10.0, 50.0, 9.0, 300.0, workday_s=DAY_S)[1] == "never"
    assert break_even_usd_per_dev_hour(10.0, 50.0, 10.0, 300.0, workday_s=DAY_S)[1] == "n/a"


def test_arm_value_pairs_seeds_and_gives_the_break_even_price() -> None:
    pairs = pd.DataFrame(
        {
            "tasks_base": [10.0, 12.0, 8.0],
            "usd_base": [50.0] * 3,
            "tasks_arm": [11.0, 13.0, 9.0],
            "usd_arm": [300.0] * 3,
        }
    )
    result = arm_value(pairs, "fast", value=Value(usd_per_dev_hour=100.0), workday_s=DAY_S)
    assert result.n == 3 and result.net_ci_low < result.net_usd_per_dev_day < result.net_ci_high
    assert result.net_usd_per_dev_month == pytest.approx(21 * result.net_usd_per_dev_day)
    # at the break-even multiple of its price the arm's mean net value (per seed) is zero
    task_value = (800.0 + 50.0) / pairs["tasks_base"]
    per_seed = task_value + 50.0 - result.break_even_price_multiple * 300.0
    assert per_seed.mean() == pytest.approx(0.0, abs=1e-9)
    # and at its break-even developer cost
    at_cost = net_value_per_dev_day(
        pairs["tasks_base"], pairs["usd_base"], pairs["tasks_arm"], pairs["usd_arm"],
        value=Value(usd_per_dev_hour=result.break_even_usd_per_dev_hour), workday_s=DAY_S,
    )  # fmt: skip
    assert at_cost.mean() == pytest.approx(0.0, abs=1e-9) and result.pays == "above"


def test_ci_caveats_and_verdicts() -> None:
    assert ci_caveat(3, 1.0, 2.0) is not None and "3 replications" in str(ci_caveat(3, 1.0, 2.0))
    assert "zero-width" in str(ci_caveat(10, 1.75, 1.75))
    assert ci_caveat(1, math.nan, math.nan) is not None
    assert ci_caveat(5, 1.0, 2.0) is None
    assert difference_verdict(-0.1, 0.2) == "no detectable difference"
    assert difference_verdict(0.1, 0.2) == "higher" and difference_verdict(-0.3, -0.2) == "lower"


def test_paired_runs_match_seeds_and_take_a_group_by_prefix() -> None:
    runs = pd.DataFrame(
        {
            "share": [0.0, 0.0, 0.5, 0.5, 0.5],
            "seed": [1, 2, 2, 1, 3],  # seed 3 has no baseline run: dropped
            "tasks_per_dev_day": [10.0, 12.0, 11.0, 9.0, 5.0],
            "usd_per_dev_day": [50.0, 60.0, 70.0, 80.0, 90.0],
            "standard_tasks_per_dev_day": [10.0, 12.0, 7.0, 6.0, 5.0],
            "standard_usd_per_dev_day": [50.0, 60.0, 30.0, 20.0, 10.0],
        }
    )
    team = paired_runs(runs, "share", 0.0, 0.5)
    assert list(team.index) == [1, 2]
    assert list(team["tasks_base"]) == [10.0, 12.0] and list(team["tasks_arm"]) == [9.0, 11.0]
    standard = paired_runs(runs, "share", 0.0, 0.5, arm_prefix="standard_")
    assert list(standard["tasks_base"]) == [10.0, 12.0]  # the baseline keeps the team's columns
    assert list(standard["tasks_arm"]) == [6.0, 7.0] and list(standard["usd_arm"]) == [20.0, 30.0]


def test_value_sentence_says_net_ci_caveat_and_break_even() -> None:
    row = {
        "arm": "fast",
        "n": 3,
        "net_usd_per_dev_day": -251.4,
        "net_ci_low": -255.0,
        "net_ci_high": -246.0,
        "net_usd_per_dev_month": -5279.4,
        "break_even_price_multiple": 0.35,
        "break_even_usd_per_dev_hour": 445.2,
        "pays": "above",
    }
    text = value_sentence(row, against="gpu-batched", usd_per_dev_hour=100.0)
    assert text.startswith(
        "fast at $100 per developer-hour: net -251 USD per developer-day against gpu-batched"
    )
    assert "(95% CI -255 to -246; only 3 replications" in text
    assert "pays above $445 per developer-hour" in text and "breaks even at 0.35× its price" in text
    free = value_sentence(row | {"break_even_price_multiple": -2.0}, against="x", usd_per_dev_hour=100.0)
    assert "would not pay even if its inference were free" in free and "×" not in free
    assert pays_phrase("never", math.nan) == "pays at no developer cost"
    assert pays_phrase("n/a", math.nan) == "has no break-even developer cost"


def test_the_net_value_says_why_an_ensemble_gives_no_behavioural_interval() -> None:
    """Under an ensemble where fewer than the minimum of members have a net value (a member whose
    baseline completed no task has none), the sentence gives the seed interval and says why there is
    no behavioural one instead of dropping it silently."""
    row = {
        "arm": "wafer-distilled",
        "n": 8,
        "net_usd_per_dev_day": 1752.0,
        "net_ci_low": -1432.0,
        "net_ci_high": 4936.0,
        "net_usd_per_dev_month": 36792.0,
        "break_even_price_multiple": 37.25,
        "break_even_usd_per_dev_hour": math.nan,
        "pays": "always",
        "net_behaviour_low": math.nan,
        "net_behaviour_high": math.nan,
        "members": 4,
        "notes": "too few members (4) for a behavioural interval (at least 5)",
    }
    text = value_sentence(row, against="gpu-batched", usd_per_dev_hour=200.0)
    assert "(95% CI -1,432 to +4,936; no behavioural interval: too few members (4))" in text
    assert "behavioural interval over the ensemble" not in text
    plain = value_sentence(row | {"members": 1, "notes": ""}, against="gpu-batched", usd_per_dev_hour=200.0)
    assert "no behavioural interval" not in plain  # one parameter set: nothing to explain
